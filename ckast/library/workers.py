"""A few processes that apply a function to work items, and that stop at once when their parent stops.

`concurrent.futures.ProcessPoolExecutor` (Python 3.11) hangs for good when one of its processes dies
while sending a result, which is what a SIGTERM to the process group does: its manager thread waits for
the rest of the message on a pipe the parent also holds open, and the parent joins that thread, at the
latest when it exits. Here the parent reads every result itself, from a pipe only that worker writes
to, so a worker's death is an end of file; and on any exception (a signal, see `ckast.interrupt`, or a
worker's error) it kills its workers and waits for them before unwinding further (the caller may
delete what they were writing into next).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from ckast.errors import CkastError
from ckast.interrupt import deferred


class WorkerDied(CkastError, RuntimeError):
    """A worker process ended without returning its item's result (killed, out of memory)."""


def run(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int, on_result: Callable[[int, Any], None]) -> None:
    """`on_result(i, fn(items[i]))` for every item, as the results come, `fn` running in `jobs` forked
    processes (each takes the next item when it is done with one). An exception `fn` raises is raised
    here."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    workers: list[tuple[multiprocessing.process.BaseProcess, Connection, Connection]] = []
    done = False
    try:
        for _ in range(min(jobs, len(items))):
            tasks_in, tasks = context.Pipe(duplex=False)
            results, results_out = context.Pipe(duplex=False)
            process = context.Process(target=_serve, args=(fn, items, tasks_in, results_out), daemon=True)
            process.start()
            tasks_in.close()
            results_out.close()  # the worker holds the only writing end: its death is an end of file here
            workers.append((process, tasks, results))
        todo = iter(range(len(items)))
        busy = {}
        for worker in workers:
            if _give(worker[1], next(todo, None)):
                busy[worker[2]] = worker
        while busy:
            for results in wait(list(busy)):
                process, tasks, _ = busy.pop(results)
                try:
                    i, result, error = results.recv()
                except EOFError:
                    raise WorkerDied(f"a rendering process ended (exit status {process.join(1) or process.exitcode})"
                                     ) from None
                if error is not None:
                    raise error
                on_result(i, result)
                if _give(tasks, next(todo, None)):
                    busy[results] = (process, tasks, results)
        done = True
    finally:
        with deferred():
            for process, _, _ in workers if not done else ():
                process.kill()
            for process, tasks, results in workers:  # each ends by itself once told there is nothing left
                process.join()
                tasks.close()
                results.close()


def _give(tasks: Connection, i: int | None) -> bool:
    """Send item `i` to a worker, or None when there is none left (the worker then ends)."""
    tasks.send(i)
    return i is not None


def _serve(fn: Callable[[Any], Any], items: Sequence[Any], tasks: Connection, results: Connection) -> None:
    """A worker: the items the parent names, one at a time, until it names none."""
    while (i := tasks.recv()) is not None:
        try:
            results.send((i, fn(items[i]), None))
        except Exception as exc:  # the parent raises it
            results.send((i, None, exc))
