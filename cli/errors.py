"""The command line's own error: bad input, printed as one line, exit status 2."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""
