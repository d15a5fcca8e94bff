"""Errors meant for the user: one line, what was wrong and what is allowed."""


class HostbenchError(Exception):
    """Any error the user can fix (bad input, missing tool, server that won't start)."""


class ToolMissing(HostbenchError):
    """A program the harness needs is not installed."""


class BadInput(HostbenchError):
    """A parameter, params file or command-line value is invalid."""


class LaunchFailed(HostbenchError):
    """A server or proxy died or never became ready."""
