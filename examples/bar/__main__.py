"""``python -m examples.bar --kubeconfig FILE``: run the Bar controller (kubebuilder's main.go,
as ``controller/__main__.py`` is sample-controller's for the Foo controller)."""

import sys

from examples.bar.controller import main

if __name__ == "__main__":
    sys.exit(main())
