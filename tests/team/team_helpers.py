"""Small repositories to index into a team store, vectors that need no model, and the store: a
Milvus Lite file under tmp_path (the tests need the `team` extra). Not a conftest: the suite's
root conftest is imported by that name."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pymilvus")

from codesearch.config import Settings
from codesearch.team.team_indexer import TeamIndexer, TeamIndexReport

DIMENSION = 8


def word_vectors(hashes, texts) -> np.ndarray:
    """Vectors from the words of each text, hashed into DIMENSION buckets: the store's own code is
    under test here, not a model (tests that need a model's meaning load the real one)."""
    out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            out[row, hashlib.blake2b(word.encode(), digest_size=1).digest()[0] % DIMENSION] += 1
        out[row] += 1e-3
    return out


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def index(store, root: Path, repo: str, branch: str = "main") -> TeamIndexReport:
    return TeamIndexer(store, root, repo, branch, Settings(), "words", DIMENSION, word_vectors).run()


BILLING = {
    "billing/invoice.py": '''"""Invoices and their totals."""


def compute_invoice_total(lines):
    """Sum the invoice lines with tax."""
    return sum(apply_tax(line) for line in lines)


def apply_tax(line):
    return line * 1.2
''',
    "billing/retry.py": '''def retry_with_backoff(call, attempts=5):
    """Call again after a growing delay when the payment gateway times out."""
    for attempt in range(attempts):
        try:
            return call()
        except TimeoutError:
            wait_exponentially(attempt)


def wait_exponentially(attempt):
    return 2 ** attempt
''',
}

SHIPPING = {
    "ship/route.go": '''package ship

// PlanRoute finds the cheapest route for a parcel.
func PlanRoute(parcel string) string {
	return cheapestCarrier(parcel)
}

func cheapestCarrier(parcel string) string {
	return "post"
}
''',
}

HELPERS = {  # `helper` is not in the module main.py imports it from: a guess at the one definition elsewhere
    "pkg/helpers.py": "def assist():\n    return 1\n",
    "pkg/other.py": "def helper():\n    return 2\n",
    "pkg/main.py": '''from pkg.helpers import helper


def run():
    return helper()
''',
}


@pytest.fixture(name="store")
def store_fixture(tmp_path):
    from codesearch.team.front import open_store
    opened = open_store(f"milvus://{tmp_path}/team.db")
    yield opened
    opened.close()
