"""Progress of an index run as plain events: the indexer reports, front-ends render (a bar on
a terminal, JSON lines for editors, `$/progress` in the LSP, the daemon's status)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Literal

Stage = Literal["parse", "write", "embed"]
Phase = Literal["begin", "advance", "end"]
STAGE_UNITS: dict[str, str] = {"parse": "files", "write": "chunks", "embed": "vectors"}
STAGE_TITLES: dict[str, str] = {"parse": "files parsed", "write": "chunks written", "embed": "vectors embedded"}
# the moving rate: each measurement over at least RATE_SECONDS weighs RATE_WEIGHT, the past the rest
RATE_SECONDS, RATE_WEIGHT = 0.5, 0.3
# work done in parts sized to take about PART_SECONDS at the measured rate moves progress that often
PART_SECONDS, FIRST_PART, MIN_PART = 0.9, 32, 8


@dataclass(frozen=True)
class ProgressEvent:
    """`done` of `total` (None: not known ahead, as chunks before their files are parsed);
    `rate_per_second`: a moving rate, and `eta_seconds` from it (None until there is one)."""

    stage: Stage
    phase: Phase
    done: int
    total: int | None = None
    rate_per_second: float | None = None
    eta_seconds: float | None = None

    @property
    def unit(self) -> str:
        return STAGE_UNITS[self.stage]

    def to_dict(self) -> dict:
        return {"event": "progress", **asdict(self), "unit": self.unit}


ProgressSink = Callable[[ProgressEvent], None]


def no_progress(event: ProgressEvent) -> None:
    """The sink of runs nobody watches."""


class MovingRate:
    """Items per second, exponentially weighted over measurements of at least RATE_SECONDS
    each: it follows a rate that changes (a slower part of a repository) without jumping at
    every batch."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.per_second: float | None = None
        self._since, self._counted = clock(), 0

    def count(self, n: int) -> None:
        self._counted += n
        now = self.clock()
        elapsed = now - self._since
        if elapsed < RATE_SECONDS:
            return
        measured = self._counted / elapsed
        self.per_second = measured if self.per_second is None else (
            RATE_WEIGHT * measured + (1 - RATE_WEIGHT) * self.per_second)
        self._since, self._counted = now, 0

    def seconds_for(self, left: int) -> float | None:
        return round(left / self.per_second, 1) if self.per_second else None


class StageCounter:
    """Counts one stage and reports it to a sink, each event once: begin, advances (with the
    moving rate and an ETA), end. `grow` raises the total of a stage under way (more work found
    in the same run) rather than beginning it again."""

    def __init__(self, sink: ProgressSink, stage: Stage, total: int | None = None):
        self.sink, self.stage, self.total, self.done = sink, stage, total, 0
        self.rate = MovingRate()
        sink(ProgressEvent(stage, "begin", 0, total))

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.rate.count(n)
        self._report("advance")

    def grow(self, more: int) -> None:
        self.total = (self.total or 0) + more
        self._report("advance")

    def end(self) -> None:
        self._report("end")

    def _report(self, phase: Phase) -> None:
        eta = self.rate.seconds_for(self.total - self.done) if self.total is not None else None
        rate = round(self.rate.per_second, 1) if self.rate.per_second is not None else None
        self.sink(ProgressEvent(self.stage, phase, self.done, self.total, rate, eta))


class Parts:
    """The parts a batch of work is done in, each sized to take about PART_SECONDS at the rate
    measured so far: progress then moves about that often however fast the machine is, and a
    fast machine keeps large parts."""

    def __init__(self) -> None:
        self.size = FIRST_PART

    def spans(self, n: int) -> Iterator[tuple[int, int]]:
        """(start, stop) of each part of `n` items; each part's time is measured as it is done."""
        start = 0
        while start < n:
            stop = min(n, start + self.size)
            began = time.monotonic()
            yield start, stop
            took = time.monotonic() - began
            if took > 0:
                self.size = max(MIN_PART, round((stop - start) / took * PART_SECONDS))
            start = stop
