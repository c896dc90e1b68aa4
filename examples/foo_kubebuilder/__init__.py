"""The Foo controller written the kubebuilder way (controller.py says how it differs)."""
