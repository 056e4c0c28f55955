"""Run a pure function over a sequence of jobs in worker processes, results in job order.

A full rebuild of a large cache spends more than half its time in Python that depends on one
shard alone (parsing and validating its lines, folding its memories, building their rows) and
the rest in SQLite, which one connection drives. :func:`ordered_map` lets the first part run in
other processes while this one writes: job *i*'s result is handed back while the next jobs are
being computed, one per worker, so at most ``workers`` jobs and their results are held at once
(memory stays bounded by the largest jobs, not by the store).

A worker is a fresh interpreter (``sys.executable -I -c``: isolated, so nothing in the
working folder is imported before it takes this process's ``sys.path``), which then imports
only what the jobs' function needs. Neither ``fork`` nor
:mod:`multiprocessing`'s ``spawn`` fits a library: the first copies an open SQLite connection, a
libgit2 repository and whatever threads hold locks; the second runs the caller's main script
again in every worker, which a script calling ynm without a ``__main__`` guard cannot survive.
Jobs and results travel pickled over the worker's standard input and output. A worker ignores
SIGINT (Ctrl-C reaches this process, which stops the workers) and exits when its input closes.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO, Generic, Self, TypeVar

J = TypeVar("J")
R = TypeVar("R")

_END: Any = object()  # the end of the jobs
_BOOT = ("import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
         "from ynm.index.workers import _serve; _serve()")


class WorkerDied(RuntimeError):
    """A worker process ended without answering (killed, out of memory, failed to start)."""


def ordered_map(fn: Callable[[J], R], jobs: Iterable[J], *, workers: int) -> Iterator[R]:
    """``fn(job)`` for each of ``jobs``, yielded in the order of ``jobs``.

    Args:
        fn: a module-level function of an importable module (it is pickled by name); its
            argument and result must pickle.
        jobs: consumed lazily: a job is taken when a worker is free for it, so at most
            ``workers`` jobs are in flight beyond the result last yielded.
        workers: worker processes; 0 runs every job here, in order, one at a time.

    A worker that dies or cannot be started does not fail the map: the jobs not yet returned
    are run here, in this process.

    Raises:
        Whatever ``fn`` raised for a job (pickled back from the worker), when that job's
        result is reached. The workers are stopped on any exit: the end of the jobs, an
        error, a ``KeyboardInterrupt`` or a generator closed early.
    """
    queue = iter(jobs)
    if workers <= 0:
        for job in queue:
            yield fn(job)
        return
    pool: list[_Worker] = []
    pending: deque[tuple[J, _Worker, _Answer[R]]] = deque()
    try:
        while len(pool) < workers and (job := next(queue, _END)) is not _END:
            pool.append(worker := _Worker.start())  # no more workers than jobs
            pending.append((job, worker, worker.submit(fn, job)))
        broken = False
        while pending:
            job, worker, answer = pending.popleft()
            if not broken:
                try:
                    result = answer.result()
                except WorkerDied:
                    broken = True  # run this job and every later one here
            if broken:
                result = fn(job)
            elif (job := next(queue, _END)) is not _END:
                pending.append((job, worker, worker.submit(fn, job)))
            yield result
        for job in queue:  # a worker died: the rest are run here
            yield fn(job)
    finally:
        for worker in pool:
            worker.stop()


class _Worker:
    """One worker process and its pipes; one job at a time."""

    def __init__(self, proc: subprocess.Popen[bytes] | None) -> None:
        self.proc = proc
        self.thread: threading.Thread | None = None

    @classmethod
    def start(cls) -> _Worker:
        """A started worker, or a dead one (every job it is given fails with
        :class:`WorkerDied`) where a process cannot be started."""
        try:
            # -I: neither the working folder nor PYTHON* variables come before the
            # bootstrap (a pickle.py in the user's folder would be imported instead)
            proc = subprocess.Popen([sys.executable, "-I", "-c", _BOOT],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert proc.stdin is not None
            pickle.dump(list(sys.path), proc.stdin)
            proc.stdin.flush()
        except (OSError, ValueError):
            return cls(None)
        return cls(proc)

    def submit(self, fn: Callable[[J], R], job: J) -> _Answer[R]:
        """Send ``(fn, job)`` on a thread (a large job is taken in while the worker reads it,
        and this process goes on); the answer is read when asked for (:meth:`_Answer.result`),
        so a finished worker keeps its result until then, not this process."""
        if self.proc is None:
            return _Answer(None, None, [WorkerDied("the worker process could not be started")])
        proc = self.proc
        failed: list[BaseException] = []

        def send() -> None:
            assert proc.stdin is not None
            try:
                pickle.dump((fn, job), proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                proc.stdin.flush()
            except Exception as err:  # noqa: BLE001 - a broken pipe: the worker is gone
                failed.append(WorkerDied(f"worker {proc.pid} ended: {err!r}"))

        self.thread = threading.Thread(target=send, name="ynm-worker-send", daemon=True)
        self.thread.start()
        return _Answer(proc, self.thread, failed)

    def stop(self) -> None:
        """End the process: it holds nothing, so it is killed (idle or busy); a thread still
        sending it a job then meets the closed pipe and ends."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if self.thread is not None:
            self.thread.join()
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:  # a write the kill cut short
                pass


class _Answer(Generic[R]):
    """A worker's answer to one job, read from its output at the first :meth:`result`."""

    def __init__(self, proc: subprocess.Popen[bytes] | None, sending: threading.Thread | None,
                 failed: list[BaseException]) -> None:
        self.proc, self.sending, self.failed = proc, sending, failed
        self.read: tuple[bool, Any] | None = None

    def result(self) -> R:
        """The job's result.

        Raises:
            WorkerDied: the worker could not be started, or ended before it answered.
            Whatever the job raised in the worker."""
        if self.read is None:
            if self.sending is not None:
                self.sending.join()
            if self.failed:
                raise self.failed[0]
            assert self.proc is not None and self.proc.stdout is not None
            try:
                self.read = pickle.load(self.proc.stdout)
            except Exception as err:  # noqa: BLE001 - a truncated answer, a closed pipe
                raise WorkerDied(f"worker {self.proc.pid} ended: {err!r}") from None
        ok, value = self.read
        if not ok:
            raise value
        return value


def _serve() -> None:
    """A worker's loop: read ``(fn, job)``, answer ``(True, fn(job))`` or ``(False, error)``,
    until the input closes. Anything the jobs print goes to standard error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out: BinaryIO = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    source = sys.stdin.buffer
    while True:
        try:
            fn, job = pickle.load(source)
        except EOFError:
            return
        try:
            reply: tuple[bool, Any] = (True, fn(job))
        except BaseException as err:  # noqa: BLE001 - sent back, raised in the caller
            reply = (False, err)
        del job  # the input (a note blob) is not held while the answer is written
        try:
            # streamed, not copied whole first; an answer that fails to pickle half way
            # reaches the caller truncated, which then runs the job itself
            pickle.dump(reply, out, protocol=pickle.HIGHEST_PROTOCOL)
            out.flush()
        except OSError:  # the caller is gone (killed): nobody to answer
            return
        except Exception as err:  # noqa: BLE001 - a result or an error that does not pickle
            print(f"ynm worker: cannot send the answer: {err!r}", file=sys.stderr)
            return
        del reply


class Background:
    """``fn(job)`` started in a worker process at once, its result taken later
    (:meth:`result`); for one long step that can overlap this process's own work.

    Use as a context manager (the worker is stopped on exit) or call :meth:`close`."""

    def __init__(self, fn: Callable[[Any], Any], job: Any) -> None:
        self.fn, self.job = fn, job
        self.worker = _Worker.start()
        self.answer = self.worker.submit(fn, job)

    def result(self) -> Any:
        """The result, waiting for it; run here when the worker died or could not start.

        Raises:
            Whatever ``fn`` raised."""
        try:
            return self.answer.result()
        except WorkerDied:
            return self.fn(self.job)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the worker (killed if still busy)."""
        self.worker.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
