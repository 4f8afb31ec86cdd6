"""A training's progress as one terminal line: the fits running, trees done of all, seconds elapsed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Progress:
    """Trees done per fit of a training (`train.train`'s fits, by name: `lightgbm final model`, `lightgbm fold 1
    of 5`, `lightgbm stride 1`), reported by `tree(fit, done)` from any thread (first with 0 for every fit, before
    any starts) and shown through `show` as one line at most every `interval` seconds and when a fit ends;
    `close()` shows an empty line."""

    def __init__(self, trees: int, show: Callable[[str], None], interval: float = 0.25,
                 clock: Callable[[], float] = time.monotonic):
        self._trees = trees
        self._done: dict[str, int] = {}
        self._show = show
        self._interval = interval
        self._clock = clock
        self._start = clock()
        self._shown = -interval
        self._lock = threading.Lock()

    def tree(self, fit: str, done: int) -> None:
        with self._lock:
            self._done[fit] = done
            if not done:
                return
            elapsed = self._clock() - self._start
            if elapsed - self._shown >= self._interval or done == self._trees:
                self._shown = elapsed
                self._show(self.line(elapsed))

    def line(self, elapsed: float) -> str:
        running = [label for label, done in self._done.items() if 0 < done < self._trees]
        return (f"{', '.join(running) or 'training'}: {sum(self._done.values()):,} of "
                f"{self._trees * len(self._done):,} trees, {elapsed:.0f} s")

    def close(self) -> None:
        self._show("")
