"""The package version, alone, so that no module imports upward into ``aurane/__init__``."""

__version__ = "0.1.0"
