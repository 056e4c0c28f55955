"""Worker processes for a large rebuild (ynm/index/workers.py): results in job order, a job's
error raised in the caller, a dead worker's jobs done in the caller, workers stopped on every
exit, and a caller's main script never run again in a worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ynm.index.workers import Background, ordered_map


def slow_square(job: tuple[int, float]) -> tuple[int, int]:
    """``(n * n, pid)`` after sleeping ``seconds``."""
    n, seconds = job
    time.sleep(seconds)
    return n * n, os.getpid()


def fail_on_three(n: int) -> int:
    if n == 3:
        raise ValueError(f"job {n} is bad")
    return n


def die_in_a_worker(job: tuple[int, int]) -> tuple[int, int]:
    """Kills its own process when that is not the caller's (``job``: n, caller's pid)."""
    n, caller = job
    if n == 2 and os.getpid() != caller:
        os.kill(os.getpid(), signal.SIGKILL)
    return n, os.getpid()


def unpicklable_in_a_worker(job: tuple[int, int]) -> object:
    """A result that does not pickle, in a worker (a local function); ``n`` here."""
    n, caller = job
    if os.getpid() != caller:
        return lambda: n
    return n


def pid_file(job: tuple[int, str]) -> int:
    """Writes the worker's pid to a file, then takes its time."""
    n, folder = job
    Path(folder, f"{n}.pid").write_text(str(os.getpid()))
    time.sleep(0.3)
    return n


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_results_come_in_job_order_from_other_processes():
    # the first job is the slowest: later results wait for it
    jobs = [(n, 0.3 if n == 0 else 0.0) for n in range(7)]
    results = list(ordered_map(slow_square, jobs, workers=2))
    assert [r for r, _ in results] == [n * n for n in range(7)]
    pids = {pid for _, pid in results}
    assert os.getpid() not in pids and len(pids) == 2


def test_no_more_workers_start_than_there_are_jobs(tmp_path):
    results = list(ordered_map(pid_file, [(n, str(tmp_path)) for n in range(2)], workers=4))
    assert results == [0, 1]
    assert len({p.read_text() for p in tmp_path.glob("*.pid")}) == 2
    assert list(ordered_map(pid_file, [], workers=4)) == []


def test_no_workers_runs_every_job_here():
    results = list(ordered_map(slow_square, [(n, 0.0) for n in range(3)], workers=0))
    assert results == [(0, os.getpid()), (1, os.getpid()), (4, os.getpid())]


def test_a_jobs_error_is_raised_in_the_caller_at_its_turn():
    got = []
    with pytest.raises(ValueError, match="job 3 is bad"):
        for n in ordered_map(fail_on_three, range(6), workers=2):
            got.append(n)
    assert got == [0, 1, 2]


def test_a_worker_that_dies_leaves_its_jobs_to_the_caller():
    me = os.getpid()
    results = list(ordered_map(die_in_a_worker, [(n, me) for n in range(6)], workers=2))
    assert [n for n, _ in results] == list(range(6))
    assert results[2][1] == me  # the job that killed its worker was done here
    assert all(pid == me for _, pid in results[2:])  # and every later one


def test_workers_are_stopped_when_the_caller_stops_early(tmp_path):
    results = ordered_map(pid_file, [(n, str(tmp_path)) for n in range(8)], workers=2)
    assert next(results) == 0
    results.close()
    pids = {int(p.read_text()) for p in tmp_path.glob("*.pid")}
    assert pids and os.getpid() not in pids
    assert not any(_alive(pid) for pid in pids)


def test_background_gives_its_result_or_runs_here_when_its_worker_died():
    me = os.getpid()
    with Background(die_in_a_worker, (1, me)) as job:
        assert job.result() == (1, job.worker.proc.pid)
    with Background(die_in_a_worker, (2, me)) as job:
        assert job.result() == (2, me)


def test_a_main_script_without_a_guard_is_not_run_again_in_the_workers(tmp_path):
    """multiprocessing's spawn would import the caller's script in every worker: a script
    that calls ynm at its top level would run again, and fail, in each of them."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        from ynm.index.workers import ordered_map
        from tests.index.test_workers import slow_square
        print("started")
        print([r for r, _ in ordered_map(slow_square, [(n, 0.0) for n in range(5)], workers=2)])
    """))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["started", "[0, 1, 4, 9, 16]"]
    assert done.stderr == ""


def test_a_worker_whose_caller_was_killed_ends_quietly(tmp_path):
    """Killed outright (SIGKILL), the caller cannot stop its workers: a worker ends when it
    finds its input closed, or its answer unwanted, and prints nothing."""
    script = tmp_path / "caller.py"
    script.write_text(textwrap.dedent("""
        import sys
        from ynm.index.workers import ordered_map
        from tests.index.test_workers import slow_square
        for result in ordered_map(slow_square, [(n, 1.0) for n in range(4)], workers=2):
            print("got", result[0], flush=True)
    """))
    root = Path(__file__).resolve().parents[2]
    caller = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=root,
                              env={**os.environ, "PYTHONPATH": str(root)})
    assert caller.stdout is not None
    assert caller.stdout.readline() == "got 0\n"  # the workers are busy with jobs 2 and 3
    caller.kill()
    _, err = caller.communicate(timeout=30)  # stderr closes once the workers are gone too
    assert err == ""


def test_a_result_that_does_not_pickle_is_computed_here(capfd):
    me = os.getpid()
    assert list(ordered_map(unpicklable_in_a_worker, [(n, me) for n in range(3)],
                            workers=1)) == [0, 1, 2]
    assert "ynm worker: cannot send the answer" in capfd.readouterr().err


def test_files_in_the_working_folder_are_not_imported_by_a_starting_worker(tmp_path, capfd,
                                                                             monkeypatch):
    """A worker starts isolated (``-I``): a ``pickle.py`` or ``struct.py`` in the folder the
    caller runs in is not imported in place of the standard library's."""
    for name in ("pickle", "struct", "subprocess"):
        (tmp_path / f"{name}.py").write_text(
            "import sys\nprint('HIJACKED', file=sys.stderr)\nraise ImportError('hijacked')\n")
    monkeypatch.chdir(tmp_path)
    results = list(ordered_map(slow_square, [(n, 0.0) for n in range(4)], workers=2))
    assert [r for r, _ in results] == [0, 1, 4, 9]
    assert os.getpid() not in {pid for _, pid in results}  # done by workers, not here
    assert "HIJACKED" not in capfd.readouterr().err
