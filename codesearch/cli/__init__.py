"""The command line: argument parsing and rendering only; the work is done below."""

from .main import main

__all__ = ["main"]
