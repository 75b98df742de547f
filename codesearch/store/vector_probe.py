"""Run as a child process by `vectors.probe`: open the store, count it, search it once, and
print {"count": N} (null when the collection does not exist). A crash here harms no one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str]) -> int:
    index_dir, collection, dimension = Path(argv[0]), argv[1], int(argv[2])
    from .vectors import STORE_FOLDER, _client

    client = _client(index_dir, "")
    if collection not in {c.name for c in client.list_collections()}:
        print(json.dumps({"count": None}))
        return 0
    store = client.get_collection(collection)
    count = store.count()
    if count:
        probe = np.full(dimension, 1 / np.sqrt(dimension), dtype=np.float32)
        store.query(query_embeddings=[probe], n_results=min(10, count), include=["distances"])
        store.get(include=[], limit=10)
    print(json.dumps({"count": count, "folder": str(index_dir / STORE_FOLDER)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
