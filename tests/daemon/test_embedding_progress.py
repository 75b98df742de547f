"""A daemon's embedding progress in `status`, as the LSP and the Neovim plugin show it: while it
embeds, a rate and an ETA that move about once a second (from the parts its slices are embedded
in), and none once it is done. A real daemon and the real model on a generated repository large
enough to take several seconds."""

from __future__ import annotations

import shutil
import time

from daemon_helpers import new_base, start_daemon, wait_for, write

FILES, FUNCTIONS_PER_FILE = 30, 30


def test_status_shows_a_moving_rate_and_eta_while_the_daemon_embeds(request):
    base = new_base()
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    repo = base / "repo"
    for f in range(FILES):
        write(repo / "pkg" / f"group_{f}.py", "".join(
            f'def handler_{f}_{i}(request, retries={i}):\n    """Handle request {i} of group {f}."""\n'
            f"    return request.send(timeout={i})\n\n\n" for i in range(FUNCTIONS_PER_FILE)))
    daemon = start_daemon(request, repo, stop_timeout=20)
    samples: list[tuple[float, float | None, int]] = []  # (when, eta, left)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        status = daemon.status()
        embedding = status["embedding"]
        if status["model_ready"]:
            samples.append((time.monotonic(), embedding["eta_seconds"], embedding["chunks_without_vectors"]))
            if not embedding["chunks_without_vectors"]:
                break
        time.sleep(0.2)
    assert samples and samples[-1][2] == 0, "the daemon did not finish embedding"
    assert samples[-1][1] is None  # done: no ETA
    during = [(t, eta) for t, eta, left in samples if left and eta is not None]
    assert len(during) >= 5, samples
    changes = [t for (t, eta), (_, before) in zip(during[1:], during) if eta != before]
    gaps = [b - a for a, b in zip(changes, changes[1:])]
    assert len(changes) >= 3 and max(gaps) <= 3.0, (gaps, during)
    wait_for(lambda: daemon.status()["embedded_share"] == 1.0, timeout=30, what="the share to reach 1")
