"""What the language server shows as work-done progress for a daemon's status."""

from __future__ import annotations

import pytest

from codesearch.transports.lsp_progress import progress_of

EMBEDDED = {"ready": True, "model_ready": True, "embedding": {"chunks_without_vectors": 0}, "embedded_share": 1.0}
CASES = {
    "parsing files": ({**EMBEDDED, "indexing": [{"stage": "parse", "done": 30, "total": 120, "unit": "files"}]},
                      ("indexing: 30/120 files", 25)),
    "writing chunks (no total)": ({**EMBEDDED, "indexing": [{"stage": "write", "done": 900, "total": None,
                                                             "unit": "chunks"}]}, ("indexing: 900 chunks", None)),
    "starting": ({"ready": False}, ("indexing the repository", None)),
    "loading the model": ({**EMBEDDED, "model_ready": False, "embedding": {"chunks_without_vectors": 5}},
                          ("loading the embedding model", None)),
    "embedding": ({**EMBEDDED, "embedding": {"chunks_without_vectors": 40}, "embedded_share": 0.6},
                  ("embedding: 40 chunks left", 60)),
    "the model failed: nothing to wait for": ({**EMBEDDED, "model_ready": False, "model_error": "gone",
                                               "embedding": {"chunks_without_vectors": 5}}, None),
    "done": (EMBEDDED, None),
}


@pytest.mark.parametrize("status, shown", list(CASES.values()), ids=list(CASES))
def test_progress_of_a_status(status, shown):
    assert progress_of(status) == shown
