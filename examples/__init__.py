"""Controllers of the reader's own, built on the same machinery as the Foo controller (not
installed: run from the repository root, ``python -m examples.bar``)."""
