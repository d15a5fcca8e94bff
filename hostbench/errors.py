"""Errors meant for the user: one line, what was wrong and what is allowed; and how a command
reports them (`exit_code`)."""

import signal
import sys
from collections.abc import Callable


class HostbenchError(Exception):
    """Any error the user can fix (bad input, missing tool, server that won't start)."""


class ToolMissing(HostbenchError):
    """A program the harness needs is not installed."""


class BadInput(HostbenchError):
    """A parameter, params file or command-line value is invalid."""


class LaunchFailed(HostbenchError):
    """A server or proxy died or never became ready."""


def _sigterm_as_interrupt(signum, frame):
    raise KeyboardInterrupt  # so context managers stop every child process


def exit_code(action: Callable[[], int | None], interrupted: str) -> int:
    """Run a command's `action` and say how it ended: its own code (0 when none); 2 and one
    line for bad input; 1 and one line for any other error the user can fix; 130 and
    `interrupted` on Ctrl-C or SIGTERM, after the context managers stopped what it started."""
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        try:
            return action() or 0
        except BadInput as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except HostbenchError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return _interrupted(interrupted)
    except KeyboardInterrupt:  # a second Ctrl-C in the instant the first was caught
        return _interrupted(interrupted)


def _interrupted(message: str) -> int:
    # What the command started is stopped by now. A further Ctrl-C or SIGTERM (an impatient
    # user) must not cut the last line short, nor end the process by the signal instead of 130.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(message, file=sys.stderr)
    return 130
