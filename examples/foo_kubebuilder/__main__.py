"""``python -m examples.foo_kubebuilder --kubeconfig FILE``: the Foo controller written the
kubebuilder way (kubebuilder's cmd/main.go; ``controller/__main__.py`` is the
sample-controller way's)."""

import sys

from examples.foo_kubebuilder.controller import main

if __name__ == "__main__":
    sys.exit(main())
