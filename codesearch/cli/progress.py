"""Index progress for people and editors: tqdm bars on a terminal (a moving rate, and an ETA only
once there is a rate), JSON lines with --progress-json, nothing on a pipe. The indexer reports
embedding in parts sized to take about events.PART_SECONDS each, so both move that often."""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from ..indexing.events import RATE_WEIGHT, STAGE_TITLES, ProgressEvent, ProgressSink, no_progress

# tqdm's own ETA is `?` until it has a rate; a stage without a total shows no ETA at all
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar:24}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]"
COUNT_FORMAT = "{desc}: {n_fmt} [{elapsed}, {rate_fmt}]"
REFRESH_SECONDS = 0.1
MIN_COLUMNS, MIN_ROWS = 60, 4


class TerminalProgress:
    """One bar per stage, created at its begin event and closed at its end."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.bars: dict[str, Any] = {}

    def __call__(self, event: ProgressEvent) -> None:
        from tqdm import tqdm  # only when a terminal watches: the query path stays light
        bar = self.bars.get(event.stage)
        if event.phase == "begin" or bar is None:
            if bar is not None:
                bar.close()
            columns, rows = _screen()
            bar = tqdm(total=event.total, desc=STAGE_TITLES[event.stage], unit=f" {event.unit}",
                       file=self.stream, leave=True, ncols=columns, nrows=rows, mininterval=REFRESH_SECONDS,
                       smoothing=RATE_WEIGHT,
                       bar_format=BAR_FORMAT if event.total is not None else COUNT_FORMAT)
            self.bars[event.stage] = bar
        if event.done > bar.n:
            bar.update(event.done - bar.n)
        if event.phase == "end":
            bar.close()
            del self.bars[event.stage]


def _screen() -> tuple[int, int]:
    """The terminal's size ($COLUMNS and $LINES first). One that reports 0 x 0 (a fresh pty)
    gets 100 x 24: tqdm draws nothing at all on a screen of no rows."""
    import shutil
    size = shutil.get_terminal_size((100, 24))
    return max(MIN_COLUMNS, size.columns), max(MIN_ROWS, size.lines)


class JsonProgress:
    """One JSON object a line (`{"event": "progress", "stage", "phase", "done", "total",
    "rate_per_second", "eta_seconds", "unit"}`); advances at most every 0.1 s per stage, begin
    and end always."""

    def __init__(self, stream: IO[str]):
        import time
        self.stream = stream
        self.clock = time.monotonic
        self.last: dict[str, float] = {}

    def __call__(self, event: ProgressEvent) -> None:
        now = self.clock()
        if event.phase == "advance" and now - self.last.get(event.stage, 0.0) < REFRESH_SECONDS:
            return
        self.last[event.stage] = now
        self.stream.write(json.dumps(event.to_dict()) + "\n")
        self.stream.flush()


def progress_sink(json_events: bool = False, quiet: bool = False, stream: IO[str] | None = None) -> ProgressSink:
    """Where a foreground run's progress goes: JSON lines when asked, bars on a terminal, else
    nowhere (a pipe or a log file gets no carriage returns)."""
    out = stream or sys.stderr
    if json_events:
        return JsonProgress(out)
    if quiet or not out.isatty():
        return no_progress
    return TerminalProgress(out)
