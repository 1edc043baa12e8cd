"""Threadline: a desktop conversation manager for large language models."""

from importlib import metadata

try:
    __version__ = metadata.version("threadline")
except metadata.PackageNotFoundError:  # running from a checkout without install
    __version__ = "0.1.0"
