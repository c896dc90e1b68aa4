"""informer package."""
