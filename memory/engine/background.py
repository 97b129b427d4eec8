"""Where a thread's LLM work runs: inline, or on a bounded queue served by worker threads.

One `LlmWorkRunner` belongs to each agent-memory component (an AgentMemory client, or a
standalone Thread). It is what `wait_for_memory_extraction` and the delete barrier wait on, so
they cover exactly the work accepted by that component (spec §4.3.19). Failures are logged and
counted, never raised to the writer: the raw messages are already stored when work is queued.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from concurrent.futures import Future, wait

from .types import BackgroundExtractionQueueFullBehavior

log = logging.getLogger(__name__)

DEFAULT_QUEUE_CAPACITY = 64
DEFAULT_WORKERS = 2

_STOP = object()


class LlmWorkRunner:
    """Runs units of LLM work for threads, inline or in the background, one at a time per thread.

    `stats()` counts what happened: "queued", "completed", "failed" and "dropped" (work that
    found the queue full and was skipped).
    """

    def __init__(self, queue_capacity: int = DEFAULT_QUEUE_CAPACITY, workers: int = DEFAULT_WORKERS) -> None:
        for name, value in (("queue_capacity", queue_capacity), ("workers", workers)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"extraction {name} must be a positive integer, not {value!r}")
        self._queue: queue.Queue = queue.Queue(maxsize=queue_capacity)
        self._worker_count = workers
        self._workers: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._thread_locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)
        self._planning_locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)
        self._state_locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)
        self._pending: defaultdict[str, set[Future]] = defaultdict(set)
        self._counts: Counter[str] = Counter()
        self._closed = False
        # The queue carries thread ids; each thread's jobs wait here in order. A worker holding a
        # thread's lock runs the oldest job of that thread, so a thread's work keeps its order
        # whichever worker picks which id.
        self._jobs: defaultdict[str, deque[tuple[Callable[[], object], str, Future]]] = defaultdict(deque)
        self._submitting = 0
        self._submitted = threading.Condition(self._lock)

    def thread_lock(self, thread_id: str) -> threading.Lock:
        """Held while one of the thread's units of work runs: they never interleave."""
        with self._lock:
            return self._thread_locks[thread_id]

    def planning_lock(self, thread_id: str) -> threading.Lock:
        """Held while a writer decides what work is due, so that concurrent writers count exactly.

        Separate from `thread_lock`, so that a write need not wait for running LLM work.
        """
        with self._lock:
            return self._planning_locks[thread_id]

    def state_lock(self, thread_id: str) -> threading.Lock:
        """Held for a read-modify-write of the thread's LLM bookkeeping; never held for long."""
        with self._lock:
            return self._state_locks[thread_id]

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {key: self._counts[key] for key in ("queued", "completed", "failed", "dropped")}

    def run_inline(self, thread_id: str, work: Callable[[], object], what: str) -> None:
        with self.thread_lock(thread_id):
            self._run(work, what)

    def submit(
        self,
        thread_id: str,
        work: Callable[[], object],
        what: str,
        behavior: BackgroundExtractionQueueFullBehavior,
        put_timeout: float,
    ) -> bool:
        """Queue `work`; False when the queue is full and `behavior` drops it (WAIT_THEN_RAISE raises
        TimeoutError instead)."""
        job = (work, what, Future())
        with self._lock:
            if self._closed:
                raise RuntimeError("this agent memory is closed; its background extraction no longer runs")
            self._jobs[thread_id].append(job)  # before its id is queued, so that a worker finds it
            self._submitting += 1
        self._start_workers()
        try:
            if behavior is BackgroundExtractionQueueFullBehavior.DROP:
                self._queue.put_nowait(thread_id)
            else:
                self._queue.put(thread_id, timeout=put_timeout)
        except queue.Full:
            with self._lock:
                self._jobs[thread_id].remove(job)  # no worker takes it: each takes one job per queued id
                if not self._jobs[thread_id]:
                    del self._jobs[thread_id]
                self._counts["dropped"] += 1
            message = f"the background extraction queue is full: {what} was not queued (the raw data is stored)"
            if behavior is BackgroundExtractionQueueFullBehavior.WAIT_THEN_RAISE:
                raise TimeoutError(message) from None
            log.warning(message)
            return False
        finally:
            with self._submitted:
                self._submitting -= 1
                self._submitted.notify_all()
        future = job[2]
        with self._lock:
            self._counts["queued"] += 1
            if not future.done():
                self._pending[thread_id].add(future)
        future.add_done_callback(lambda done: self._forget(thread_id, done))
        return True

    def wait(self, thread_id: str, timeout: float | None) -> None:
        """Wait for the work already accepted for this thread; TimeoutError if it is still running."""
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout >= 0  # NaN too
        ):
            raise ValueError(f"timeout must be a non-negative number of seconds or None, not {timeout!r}")
        if timeout == float("inf"):
            timeout = None  # no limit (the condition variable underneath cannot take inf)
        with self._lock:
            accepted = set(self._pending.get(thread_id, ()))
        if not accepted:
            return
        _, not_done = wait(accepted, timeout=timeout)
        if not_done:
            raise TimeoutError(
                f"{len(not_done)} background extraction job(s) of thread {thread_id!r} "
                f"did not finish within {timeout} s"
            )

    def close(self) -> None:
        """Stop accepting work, let the workers finish what is queued, and stop them."""
        with self._submitted:
            if self._closed:
                return
            self._closed = True
            # Work being queued right now goes before the stop marks, so that it still runs.
            self._submitted.wait_for(lambda: self._submitting == 0)
            workers = list(self._workers)
        for _ in workers:
            self._queue.put(_STOP)
        for worker in workers:
            worker.join()

    def _start_workers(self) -> None:
        with self._lock:
            while len(self._workers) < self._worker_count:
                worker = threading.Thread(target=self._serve, name=f"oam-extraction-{len(self._workers)}", daemon=True)
                worker.start()
                self._workers.append(worker)

    def _serve(self) -> None:
        while True:
            thread_id = self._queue.get()
            if thread_id is _STOP:
                return
            with self.thread_lock(thread_id):
                with self._lock:
                    work, what, future = self._jobs[thread_id].popleft()
                    if not self._jobs[thread_id]:
                        del self._jobs[thread_id]
                try:
                    self._run(work, what)
                finally:
                    future.set_result(None)  # a failure is finished too: waits must not block on it

    def _run(self, work: Callable[[], object], what: str) -> None:
        try:
            work()
        except Exception:
            log.exception("%s failed; the raw data stays stored", what)
            outcome = "failed"
        else:
            outcome = "completed"
        with self._lock:
            self._counts[outcome] += 1

    def _forget(self, thread_id: str, future: Future) -> None:
        with self._lock:
            pending = self._pending.get(thread_id)
            if pending is not None:
                pending.discard(future)
                if not pending:
                    del self._pending[thread_id]
