"""K-LOCK / issue 21 item 6: one holder per checkpoint folder at any instant.

Real processes throughout: contenders forked from one driver and released together by a
barrier, so they call ``acquire_lock`` in the same instant; locks left by processes that
were SIGKILLed, at random or at a named point of taking the lock (``AURANE_KILL_AT``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from aurane.runtime import lock
from aurane.runtime.checkpoint import CheckpointError, CheckpointMissing
from tests.training.helpers import env, run_python

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX processes")

TRIALS = 40

# Each trial: two forked contenders wait at a barrier, call acquire_lock at once, report
# whether they got it, and keep what they got until both have reported. Odd trials start
# from a stale lock file (its pid has exited), so both race to take it over.
RACE = """
import json, multiprocessing, os, socket, sys
from aurane.runtime import lock

def contender(folder, start, reported, results):
    start.wait()
    try:
        lock.acquire_lock(folder)
        got = 1
    except lock.RunLockedError:
        got = 0
    results.put(got)
    reported.wait()
    os._exit(0)  # no release: the next trial's stale lock files are made this way too

context = multiprocessing.get_context("fork")
holders = []
for trial in range({trials}):
    folder = f"race{{trial}}"
    if trial % 2:
        os.makedirs(folder)
        gone = context.Process(target=os.getpid)
        gone.start()
        gone.join()
        with open(os.path.join(folder, lock.LOCK_NAME), "w") as handle:
            handle.write(f"{{gone.pid}} {{socket.gethostname()}}\\n")
    start, reported = context.Barrier(2), context.Barrier(2)
    results = context.SimpleQueue()
    contenders = [
        context.Process(target=contender, args=(folder, start, reported, results))
        for _ in range(2)
    ]
    for process in contenders:
        process.start()
    holders.append(results.get() + results.get())
    for process in contenders:
        process.join()
print(json.dumps(holders))
"""


def test_two_processes_racing_for_the_lock_at_the_same_instant_get_one_holder(
    tmp_path: Path,
) -> None:
    done = run_python(RACE.format(trials=2 * TRIALS), tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    holders = json.loads(done.stdout.splitlines()[-1])
    assert len(holders) == 2 * TRIALS
    fresh, stale = holders[0::2], holders[1::2]
    assert fresh == [1] * TRIALS, fresh  # never both (nor neither) on an empty folder
    assert stale == [1] * TRIALS, stale  # nor when both take over a dead run's lock
    assert done.stderr.count("note: took over the lock") == TRIALS  # one note per take-over


def _holder(folder: Path, then: str = "sys.stdin.read()") -> subprocess.Popen[str]:
    """A process that takes ``folder``'s lock, prints "locked", then runs ``then``."""
    code = textwrap.dedent(
        f"""
        import os, sys, time
        from aurane.runtime import lock
        lock.acquire_lock({str(folder)!r})
        print("locked", flush=True)
        {then}
        """
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == "locked\n", holder.communicate()
    return holder


def test_a_live_holder_refuses_a_second_run_naming_its_pid(tmp_path: Path) -> None:
    holder = _holder(tmp_path / "ck")
    try:
        with pytest.raises(
            lock.RunLockedError, match=f"in use by another run \\(pid {holder.pid} "
        ):
            lock.acquire_lock(str(tmp_path / "ck"))
    finally:
        holder.communicate("")  # its stdin closes: it exits
    path = lock.acquire_lock(str(tmp_path / "ck"))  # its lock went with it
    lock.release_lock(path)


def test_a_stale_lock_of_a_dead_pid_is_taken_over_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / lock.LOCK_NAME).write_text(f"{gone.pid} {socket.gethostname()}\n")
    path = lock.acquire_lock(str(folder))
    note = capsys.readouterr().err
    assert f"took over the lock {path!r} of a run that is gone (pid {gone.pid} on " in note
    assert (folder / lock.LOCK_NAME).read_text() == f"{os.getpid()} {socket.gethostname()}\n"
    assert lock.acquire_lock(str(folder)) == path  # this process may take it again
    lock.release_lock(path)
    assert sorted(os.listdir(folder)) == []  # released: nothing left


def test_a_lock_left_by_a_sigkilled_holder_is_taken_over(tmp_path: Path) -> None:
    holder = _holder(tmp_path / "ck")
    holder.send_signal(signal.SIGKILL)
    holder.communicate()
    assert (tmp_path / "ck" / lock.LOCK_NAME).read_text().split()[0] == str(holder.pid)
    path = lock.acquire_lock(str(tmp_path / "ck"))
    lock.release_lock(path)


@pytest.mark.parametrize("point", ["lock:created", "lock:linked", "lock:stale"])
def test_a_kill_at_each_point_of_taking_the_lock_leaves_no_lock_that_blocks(
    tmp_path: Path, point: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGKILL between the lock file's creation and its link, after the link, and while
    taking over a stale one: the next run gets the folder and clears the leftovers."""
    folder = tmp_path / "ck"
    folder.mkdir()
    if point == "lock:stale":  # a dead run's lock for the killed run to take over
        (folder / lock.LOCK_NAME).write_text(f"999999999 {socket.gethostname()}\n")
    code = f"from aurane.runtime import lock\nlock.acquire_lock({str(folder)!r})\n"
    killed = subprocess.run(
        [sys.executable, "-c", code], env=env(AURANE_KILL_AT=point), capture_output=True
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert any(name.endswith(".tmp") for name in os.listdir(folder))  # its half-taken lock
    path = lock.acquire_lock(str(folder))  # and removes the killed run's temporary file
    assert os.listdir(folder) == [lock.LOCK_NAME]
    lock.release_lock(path)
    assert os.listdir(folder) == []


def test_a_forked_child_does_not_keep_the_lock_after_its_parent_is_killed(
    tmp_path: Path,
) -> None:
    """A DataLoader worker is a fork: it shares the parent's open lock file. It closes its
    copy, so an orphaned worker of a SIGKILLed run does not hold the folder."""
    child_pid = tmp_path / "child.pid"
    then = (
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(120)\n"
        "    os._exit(0)\n"
        f"open({str(child_pid)!r}, 'w').write(str(pid))\n"
        "sys.stdin.read()\n"
    )
    holder = _holder(tmp_path / "ck", then.replace("\n", "\n        "))
    try:
        while not child_pid.exists() or not child_pid.read_text():
            time.sleep(0.01)
        holder.send_signal(signal.SIGKILL)
        holder.wait()  # not communicate(): the sleeping child keeps its pipes open
        os.kill(int(child_pid.read_text()), 0)  # the child still runs
        path = lock.acquire_lock(str(tmp_path / "ck"))
        lock.release_lock(path)
    finally:
        os.kill(int(child_pid.read_text()), signal.SIGKILL)


def test_a_failure_before_the_first_checkpoint_leaves_no_lock(tmp_path: Path) -> None:
    """A resume with no checkpoint yet fails in ``Run.__enter__``: the lock goes with it."""
    import torch

    from aurane.runtime.run import Run

    model = torch.nn.Linear(2, 1)
    run = Run(
        "train_tiny",
        epochs=1,
        config={},
        state={"model": model},
        loaders=[],
        checkpoint_dir=str(tmp_path / "ck"),
        resume_from=True,
    )
    with pytest.raises(CheckpointMissing, match="no checkpoint at"), run:
        pass
    assert not (tmp_path / "ck" / lock.LOCK_NAME).exists()
    assert isinstance(CheckpointMissing("x"), FileNotFoundError)  # callers catching it still do
    # issue 25: a resume refused once the new run's folder is made and locked (a checkpoint
    # of another model) leaves neither the lock nor the empty folder
    other = torch.nn.Linear(3, 1)
    with Run(
        "train_other",
        epochs=1,
        config={},
        state={"model": other},
        loaders=[],
        checkpoint_dir=str(tmp_path / "other"),
    ):
        pass
    elsewhere = str(tmp_path / "foreign.pt")  # not a run's last.pt: a new run from it
    os.link(tmp_path / "other" / "run_0001" / "last.pt", elsewhere)
    refused = Run(
        "train_tiny",
        epochs=1,
        config={},
        state={"model": model},
        loaders=[],
        checkpoint_dir=str(tmp_path / "ck"),
        resume_from=elsewhere,
    )
    with pytest.raises(CheckpointError, match="different model"), refused:
        pass
    assert os.listdir(tmp_path / "ck") == []
