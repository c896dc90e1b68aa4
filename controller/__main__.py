"""``sample-controller`` / ``python -m controller``: sample-controller's main.go.

The work is in ``controller.main``.

It parses the flags (a bad value ends here, exit status 2) and runs the process on the runtime's
manager: build the client, check that the API server answers and serves Foos, start the
informers, the event recorder and the controller, then run until SIGTERM or SIGINT. The first
signal starts a graceful shutdown (finish in-flight work, drain the queue, flush Events); a
second one exits at once with status 1, as sample-controller's signal handler does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    from controller.main import main as run_main

    return run_main(argv)


if __name__ == "__main__":
    sys.exit(main())
