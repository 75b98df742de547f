"""A team store in a Milvus Lite file under tmp_path (the tests need the `team` extra)."""

from __future__ import annotations

import pytest

pytest.importorskip("pymilvus")


@pytest.fixture
def store(tmp_path):
    from codesearch.team.front import open_store
    opened = open_store(f"milvus://{tmp_path}/team.db")
    yield opened
    opened.close()
