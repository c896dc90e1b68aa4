"""``make demo-ui`` / ``python -m demo.ui``: the demo's cluster and controller, drawn live in a
browser.

No client-go twin: a guided tour, as ``python -m demo``. It starts kubesim and the controller
(``demo.ui.cluster``), prints the page's address on 127.0.0.1 (a free port, or ``--port``), and
serves until Ctrl-C or SIGTERM, then stops the controller as the controller's own SIGTERM
handling would (the queue drained, the Events flushed).
"""

from __future__ import annotations

import signal
import sys
import threading

from demo.cli import OneLineParser, seconds, tcp_port
from demo.ui.cluster import Cluster
from demo.ui.server import make_server


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser("python -m demo.ui", __doc__.split("\n")[0])
    parser.add_argument(
        "--port", type=tcp_port, default=0, help="port on 127.0.0.1 (default: a free one)"
    )
    parser.add_argument(
        "--status-delay",
        type=seconds,
        default=1.0,
        help="seconds a Pod takes to run on the simulated node (default 1)",
    )
    opts = parser.parse_args(argv)

    cluster = Cluster(status_delay=opts.status_delay)
    # the page's port first: a taken one is a flag mistake, said before anything starts
    try:
        server = make_server(cluster, opts.port)
    except OSError as err:
        parser.error(
            f"argument --port: cannot listen on 127.0.0.1:{opts.port}: {err.strerror or err}"
        )
    cluster.start()
    host, port = str(server.server_address[0]), int(server.server_address[1])
    print(f"demo-ui: open http://{host}:{port}/  (Ctrl-C to stop)", flush=True)

    def stop(signum: int, frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    # Ctrl-C and SIGTERM alike (installed explicitly: a shell starts a background job with
    # SIGINT ignored, and Python would keep it so)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    code = cluster.close()
    print(f"demo-ui: controller exited {code}", flush=True)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
