"""The debouncer between the watcher and the writer: an isolated change leaves at once, a burst
leaves in few batches. Real threads and real time; the bounds are far apart (a settle of
milliseconds against quiet periods of seconds), so that a loaded machine does not decide."""

from __future__ import annotations

import queue
import time

import pytest

from codesearch.daemon.watcher import FEW_BATCHES, FEW_PATHS, Debouncer


@pytest.fixture
def batches():
    """A debouncer factory whose batches land in a queue; every debouncer is stopped afterwards."""
    made: list[Debouncer] = []
    out: queue.Queue[set[str]] = queue.Queue()

    def make(delay: float, **kwargs) -> Debouncer:
        debouncer = Debouncer(delay, out.put, **kwargs)
        made.append(debouncer)
        return debouncer

    make.out = out  # type: ignore[attr-defined]
    yield make
    for debouncer in made:
        debouncer.stop()


def take(out: queue.Queue, within: float) -> set[str]:
    return out.get(timeout=within)


def test_an_isolated_change_leaves_before_the_quiet_period(batches):
    debouncer = batches(delay=5.0)
    started = time.monotonic()
    debouncer.add("a.py")
    assert debouncer.pending == {"a.py"}
    assert take(batches.out, within=2.5) == {"a.py"}  # the quiet period alone would take 5 s
    assert time.monotonic() - started < 2.5
    assert debouncer.pending == set()


def test_the_events_of_one_save_leave_together(batches):
    """An atomic save: the temporary file written, then renamed over the original."""
    debouncer = batches(delay=5.0)
    for rel in (".a.py.tmp", ".a.py.tmp", "a.py", ".a.py.tmp"):
        debouncer.add(rel)
    assert take(batches.out, within=2.5) == {"a.py", ".a.py.tmp"}
    with pytest.raises(queue.Empty):
        take(batches.out, within=0.3)


def test_a_burst_is_coalesced(batches):
    debouncer = batches(delay=1.0, max_delay=4.0)
    paths = {f"burst/f{i}.py" for i in range(300)}
    started = time.monotonic()
    for rel in sorted(paths):
        debouncer.add(rel)
    assert debouncer.in_burst
    got = [take(batches.out, within=10)]
    # at most a leading batch of the first few paths (if the settle passed mid-loop), then the rest
    if got[0] != paths:
        assert len(got[0]) <= FEW_PATHS
        got.append(take(batches.out, within=10))
        assert time.monotonic() - started >= 1.0, "the burst did not wait for the quiet period"
    assert set().union(*got) == paths
    with pytest.raises(queue.Empty):
        take(batches.out, within=0.3)


def test_a_file_written_again_and_again_becomes_a_burst(batches):
    """FEW_BATCHES saves in a row leave one by one; the next waits for the quiet period."""
    debouncer = batches(delay=1.5)
    for _ in range(FEW_BATCHES):
        debouncer.add("log.py")
        assert take(batches.out, within=1.2) == {"log.py"}
    assert debouncer.in_burst
    started = time.monotonic()
    debouncer.add("log.py")
    assert take(batches.out, within=10) == {"log.py"}
    assert time.monotonic() - started >= 1.5


def test_a_change_after_a_quiet_period_leaves_at_once_again(batches):
    debouncer = batches(delay=0.4, max_delay=1.0)
    for i in range(FEW_PATHS + 5):
        debouncer.add(f"f{i}.py")
    while not batches.out.empty() or debouncer.pending:
        take(batches.out, within=5)
    time.sleep(0.6)  # the episode is over
    debouncer.add("saved.py")
    assert not debouncer.in_burst
    assert take(batches.out, within=5) == {"saved.py"}


def test_a_watch_limit_reached_falls_back_to_polling_and_says_so(tmp_path, monkeypatch):
    """inotify's watches run out on a large tree (ENOSPC from the native observer): the watcher
    polls instead, says why (the daemon's status shows it), and still sees changes."""
    import errno
    from pathlib import Path

    from codesearch.daemon import watcher as watcher_module

    class OutOfWatches(watcher_module.Observer):  # type: ignore[misc,valid-type]
        def schedule(self, *args, **kwargs):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watcher_module, "Observer", OutOfWatches)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "old.py").write_text("x = 1\n")
    seen: queue.Queue[set[str]] = queue.Queue()
    repo_watcher = watcher_module.RepoWatcher(Path(root), tmp_path / "index", seen.put, lambda: None, 0.2)
    try:
        assert repo_watcher.mode == "polling"
        assert "inotify watch limit reached" in repo_watcher.fallback_reason
        assert "polling" in repo_watcher.fallback_reason
        (root / "new.py").write_text("y = 2\n")
        assert "new.py" in take(seen, within=10)  # the poller looks once a second
    finally:
        repo_watcher.stop()
