"""The advisor's version, in a module of its own: the fingerprint and the API read it without
importing the package root (and with it the whole public API)."""

__version__ = "0.1.0"
