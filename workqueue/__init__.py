"""workqueue package."""
