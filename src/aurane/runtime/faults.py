"""Whether a process still runs, and the named instants where the kill tests stop a run.

``AURANE_KILL_AT=POINT[@N]`` SIGKILLs the process the Nth time (default: the first) it
reaches POINT: an instant of a checkpoint save (``last.pt:synced``, see ``checkpoint``) or
of taking the folder's lock (``lock:linked``, see ``lock``). Without the variable a point
costs one environment lookup. No torch here, so the lock imports none.
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
