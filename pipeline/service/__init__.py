"""The HTTP service of `jobdedup serve`."""
