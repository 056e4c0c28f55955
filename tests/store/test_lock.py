"""The repository lock (reference/storage.md §3.5, "Lock (withLock)")."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ynm.errors import LockTimeout
from ynm.store.lock import RepoLock


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _now_ms() -> int:
    return int(time.time() * 1000)


def test_lock_file_holds_pid_and_time_and_is_removed(tmp_path: Path) -> None:
    path = tmp_path / "ynm.lock"
    before = _now_ms()
    with RepoLock(path):
        pid, started, rest = path.read_text().split("\n")
        assert int(pid) == os.getpid()
        assert before <= int(started) <= _now_ms()
        assert rest == ""
    assert not path.exists()


def test_release_on_error(tmp_path: Path) -> None:
    path = tmp_path / "ynm.lock"
    with pytest.raises(RuntimeError), RepoLock(path):
        raise RuntimeError("boom")
    assert not path.exists()


def test_stale_lock_with_dead_pid_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "ynm.lock"
    path.write_text(f"{_dead_pid()}\n{_now_ms()}\n")
    started = time.monotonic()
    with RepoLock(path, timeout_s=5):
        assert int(path.read_text().split("\n")[0]) == os.getpid()
    assert time.monotonic() - started < 1


def test_stale_lock_by_age_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "ynm.lock"
    path.write_text(f"{os.getpid()}\n{_now_ms() - 61_000}\n")
    with RepoLock(path, timeout_s=5):
        assert int(path.read_text().split("\n")[1]) >= _now_ms() - 5_000


def test_live_lock_times_out(tmp_path: Path) -> None:
    path = tmp_path / "ynm.lock"
    path.write_text(f"{os.getpid()}\n{_now_ms()}\n")
    started = time.monotonic()
    with pytest.raises(LockTimeout) as info, RepoLock(path, timeout_s=0.2):
        pass
    assert str(info.value) == f"lock timeout after 200ms: {path}"
    assert 0.2 <= time.monotonic() - started < 2
    # The holder's file is untouched.
    assert path.exists()


def test_lock_held_by_another_process_times_out_then_frees(tmp_path: Path) -> None:
    path = tmp_path / "ynm.lock"
    code = (
        "import sys, time; from ynm.store.lock import RepoLock\n"
        f"with RepoLock({str(path)!r}):\n"
        "    print('held', flush=True); time.sleep(1.0)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeout) as info, RepoLock(path, timeout_s=0.1):
            pass
        # the hint names the holder (its command line where /proc has it) and what to do
        hint = info.value.hint or ""
        assert hint.startswith(f"held by process {holder.pid} ")
        if Path(f"/proc/{holder.pid}/cmdline").exists():
            assert f"({Path(sys.executable).name} -c import sys, time;" in hint
        assert hint.endswith("s: wait for it to finish, then run this again (a lock held over "
                             "60 s, or whose process has ended, is taken over on its own)")
        with RepoLock(path, timeout_s=10):
            pass
    finally:
        holder.wait(timeout=10)
    assert not path.exists()


def test_partially_written_fresh_lock_is_respected(tmp_path: Path) -> None:
    path = tmp_path / "ynm.lock"
    path.write_text("")
    with pytest.raises(LockTimeout) as info, RepoLock(path, timeout_s=0.05):
        pass
    assert (info.value.hint or "").startswith(
        f"another ynm process is taking it ({path} holds no owner yet): wait for it")


def test_a_wait_for_a_live_owner_is_told_once(tmp_path: Path) -> None:
    """A writer waiting for a live owner says who holds the lock once, after a second; one
    that gets the lock at once says nothing."""
    path = tmp_path / "ynm.lock"
    heard: list[str] = []
    with RepoLock(path, timeout_s=1.0, on_wait=heard.append):
        pass
    assert heard == []
    path.write_text(f"{os.getpid()}\n{_now_ms()}\n")  # this process: alive
    with pytest.raises(LockTimeout):
        RepoLock(path, timeout_s=2.0, on_wait=heard.append).acquire()
    assert len(heard) == 1
    assert heard[0].startswith(f"waiting for {path}, held by process {os.getpid()} (")
    assert heard[0].endswith("; giving up after 2 s (a lock held over 60 s, or whose process "
                             "has ended, is taken over)")


def test_a_remember_that_waits_for_the_lock_says_so(project, tmp_path: Path) -> None:
    """``ynm remember`` while another process holds the store's lock for ~2.5 s: it waits,
    says on stderr who holds the lock, once, then writes."""
    script = ("import sys, time\nfrom ynm.store.lock import RepoLock\n"
              "with RepoLock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(2.5)\n")
    holder = subprocess.Popen([sys.executable, "-c", script, str(project / ".git" / "ynm.lock")],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    done = subprocess.run([sys.executable, "-m", "ynm.cli", "remember", "--type", "semantic",
                           "--level", "distributed", "--content", "we ship on Tuesdays"],
                          cwd=project, capture_output=True, text=True, timeout=120,
                          check=False)
    holder.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: waiting for")]
    assert len(notes) == 1, done.stderr
    assert f"held by process {holder.pid} (" in notes[0]
