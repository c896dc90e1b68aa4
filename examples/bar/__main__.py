"""``python -m examples.bar --kubeconfig FILE``: run the Bar controller (sample-controller's
main.go, as ``controller/__main__.py`` is for the Foo controller)."""

import sys

from examples.bar.controller import main

if __name__ == "__main__":
    sys.exit(main())
