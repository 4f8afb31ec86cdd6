"""A training's progress as one terminal line: the fits running, trees done of all, seconds elapsed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Progress:
    """Trees done per fit of a training (`train.train`'s fits: 0 the final model, f the f-th of `folds`
    folds), reported by `tree(fit, done)` from any thread and shown through `show` as one line at most every
    `interval` seconds and when a fit ends; `close()` shows an empty line."""

    def __init__(self, folds: int, trees: int, show: Callable[[str], None], interval: float = 0.25,
                 clock: Callable[[], float] = time.monotonic):
        self._labels = ("final model", *(f"fold {f} of {folds}" for f in range(1, folds + 1)))
        self._trees = trees
        self._done = [0] * len(self._labels)
        self._show = show
        self._interval = interval
        self._clock = clock
        self._start = clock()
        self._shown = -interval
        self._lock = threading.Lock()

    def tree(self, fit: int, done: int) -> None:
        with self._lock:
            self._done[fit] = done
            elapsed = self._clock() - self._start
            if elapsed - self._shown >= self._interval or done == self._trees:
                self._shown = elapsed
                self._show(self.line(elapsed))

    def line(self, elapsed: float) -> str:
        running = [label for label, done in zip(self._labels, self._done) if 0 < done < self._trees]
        return (f"{', '.join(running) or 'training'}: {sum(self._done):,} of {self._trees * len(self._labels):,} "
                f"trees, {elapsed:.0f} s")

    def close(self) -> None:
        self._show("")
