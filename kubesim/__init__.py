"""kubesim package."""
