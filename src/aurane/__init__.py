"""Aurane: compile compact .aur network descriptions into readable PyTorch source."""

__version__ = "0.1.0"
