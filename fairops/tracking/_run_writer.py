"""Run writes made on a thread of their own, so the optimize loop goes on while MLflow's client writes.

:class:`BackgroundWrites` runs each submitted write (a function making MLflowClient calls) on one worker
thread, in the order submitted. At most ``backlog`` writes wait: a further :meth:`~BackgroundWrites.submit`
blocks until one is done, so a worker that finishes its fits never leaves more than that behind and what
is queued stays small. :meth:`~BackgroundWrites.flush` waits until every write is done. A write that fails
is raised by the next ``submit`` or ``flush`` (never lost in the thread). When the interpreter exits,
Python waits for the thread's writes; a process killed outright loses the queued ones, which is why the
jobs look for finished trials without a finished run (``fairops.jobs._running.track_missing``).

A forked process starts a thread of its own on its first write: the parent's queued writes stay the parent's.

>>> done = []
>>> writes = BackgroundWrites()
>>> for i in range(3):
...     writes.submit(lambda i=i: done.append(i))
>>> writes.flush()
>>> done
[0, 1, 2]
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor


class BackgroundWrites:
    """Writes run in submission order on one thread, at most ``backlog`` waiting (see the module).

    Parameters
    ----------
    backlog : int, default=2
        How many writes may wait beside the one being made before ``submit`` blocks.
    """

    def __init__(self, backlog: int = 2):
        if not (isinstance(backlog, int) and backlog >= 1):
            raise ValueError(f"backlog must be an int >= 1, got {backlog!r}")
        self.backlog = backlog
        self._lock = threading.Lock()
        self._writer: _Writer | None = None

    def submit(self, write: Callable[[], None]) -> None:
        """Queue ``write`` (blocking while ``backlog`` writes wait); first raise an earlier write's error."""
        self._raise_failed(wait=False)
        writer = self._own_writer()
        writer.slots.acquire()
        try:
            future = writer.thread.submit(write)
        except BaseException:
            writer.slots.release()
            raise
        future.add_done_callback(lambda _: writer.slots.release())
        with self._lock:
            writer.futures.append(future)

    def flush(self) -> None:
        """Wait until every submitted write is done; raise the first error among them."""
        self._raise_failed(wait=True)

    def pending(self) -> int:
        """How many of this process's submitted writes are not done yet."""
        with self._lock:
            writer = self._writer
            return 0 if writer is None or writer.pid != os.getpid() else sum(not f.done() for f in writer.futures)

    def _own_writer(self) -> _Writer:
        """This process's writer thread (a forked child makes its own)."""
        with self._lock:
            if self._writer is None or self._writer.pid != os.getpid():
                self._writer = _Writer(self.backlog)
            return self._writer

    def _raise_failed(self, wait: bool) -> None:
        with self._lock:
            writer = self._writer
            futures = [] if writer is None or writer.pid != os.getpid() else list(writer.futures)
        if wait:
            for future in futures:
                future.exception()  # waits for it
        done = [future for future in futures if future.done()]
        if not done:
            return
        looked_at = {id(future) for future in done}
        with self._lock:
            writer.futures = [f for f in writer.futures if id(f) not in looked_at]  # type: ignore[union-attr]
        errors = [future.exception() for future in done if future.exception() is not None]
        if errors:
            raise errors[0]  # type: ignore[misc]  # an exception, not None


class _Writer:
    """One process's thread, the slots of its backlog and its writes not yet looked at."""

    def __init__(self, backlog: int):
        self.pid = os.getpid()
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fairops-run-writes")
        self.slots = threading.BoundedSemaphore(backlog + 1)
        self.futures: list[Future] = []
