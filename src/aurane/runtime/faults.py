"""Whether a process still runs, and the named instants where the kill tests stop a run.

``AURANE_KILL_AT=POINT[@N]`` SIGKILLs the process the Nth time (default: the first) it
reaches POINT: an instant of a checkpoint save (``last.pt:synced``, see ``checkpoint``) or
of taking the folder's lock (``lock:linked``, see ``lock``), of making a run folder
(``run:created``) or pointing ``latest`` (``latest:linked``), or ``step`` (after an
optimizer step). Without the variable a point costs one environment lookup; steps are never
looked up: a run reads ``step_signal()`` once. ``AURANE_SIGNAL_AT=N[:SIGNAL]`` makes a run
send itself SIGNAL (default SIGINT) after step N, a real signal through the real handler
(``AURANE_SIGNAL_RANK=R``: on rank R only). No torch here, so the lock imports none.
"""

from __future__ import annotations

import os
import signal
import sys

_KILL_COUNTS: dict[str, int] = {}  # how often this process reached each point named


def fault_point(name: str) -> None:
    """A named instant of a save or of the lock, where the kill tests SIGKILL the process
    (``AURANE_KILL_AT=NAME[@N]``); nothing happens without that variable."""
    wanted = os.environ.get("AURANE_KILL_AT")
    if not wanted or wanted.partition("@")[0] != name:
        return
    _KILL_COUNTS[name] = _KILL_COUNTS.get(name, 0) + 1
    if _KILL_COUNTS[name] == int(wanted.partition("@")[2] or 1):
        sys.stdout.flush()
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


def pid_runs(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine."""
    if sys.platform == "win32":
        return True  # os.kill there would end the process: assume it runs
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        return True
    return True


def step_signal() -> tuple[int, int] | None:
    """(step, signal): after which optimizer step this process signals itself, from
    ``AURANE_SIGNAL_AT=N[:SIGNAL]`` or ``AURANE_KILL_AT=step@N`` (SIGKILL); None without."""
    wanted = os.environ.get("AURANE_SIGNAL_AT")
    if wanted:
        rank = os.environ.get("AURANE_SIGNAL_RANK")
        if rank is not None and rank != os.environ.get("RANK", "0"):
            return None
        step, _, name = wanted.partition(":")
        return int(step), int(getattr(signal, name or "SIGINT"))
    killed = os.environ.get("AURANE_KILL_AT", "")
    if killed.startswith("step@"):
        return int(killed.removeprefix("step@")), int(getattr(signal, "SIGKILL", signal.SIGTERM))
    return None


def send_signal(signum: int) -> None:
    """Signal this process (``step_signal``'s test hook)."""
    sys.stdout.flush()
    os.kill(os.getpid(), signum)
