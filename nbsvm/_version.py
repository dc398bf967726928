"""The package version, read by the model files and reports it writes (and by pyproject).
A module of its own so that low layers need not import the package, which imports them."""

__version__ = "0.1.0"
