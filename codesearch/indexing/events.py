"""Progress of an index run as plain events: the indexer reports, front-ends render (a bar on
a terminal, JSON lines for editors, `$/progress` in the LSP, the daemon's status)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Literal

Stage = Literal["parse", "write", "embed"]
Phase = Literal["begin", "advance", "end"]
STAGE_UNITS: dict[str, str] = {"parse": "files", "write": "chunks", "embed": "vectors"}
STAGE_TITLES: dict[str, str] = {"parse": "files parsed", "write": "chunks written", "embed": "vectors embedded"}


@dataclass(frozen=True)
class ProgressEvent:
    """`done` of `total` (None: not known ahead, as chunks before their files are parsed)."""

    stage: Stage
    phase: Phase
    done: int
    total: int | None = None

    @property
    def unit(self) -> str:
        return STAGE_UNITS[self.stage]

    def to_dict(self) -> dict:
        return {"event": "progress", **asdict(self), "unit": self.unit}


ProgressSink = Callable[[ProgressEvent], None]


def no_progress(event: ProgressEvent) -> None:
    """The sink of runs nobody watches."""


class StageCounter:
    """Counts one stage and reports it to a sink: begin, advances, end."""

    def __init__(self, sink: ProgressSink, stage: Stage, total: int | None = None):
        self.sink, self.stage, self.total, self.done = sink, stage, total, 0
        sink(ProgressEvent(stage, "begin", 0, total))

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.sink(ProgressEvent(self.stage, "advance", self.done, self.total))

    def end(self) -> None:
        self.sink(ProgressEvent(self.stage, "end", self.done, self.total))
