"""The team store's collections in Milvus: chunks (fields, keyword text under BM25, dense vector),
files, graph edges (resolved as the local index resolves them) and one state record per
repository and branch; every read and write of them.

Rows carry the generation (`gen`) of the index run that wrote them. A row is live when the state
record's file map (the files collection read up to the live generation) names its path with its
generation: a file's chunks with the generation its content was written in, its edges with the
generation of its newest file row (a file whose calls resolve otherwise after another file
changed gets new edges, and a new file row, and keeps its chunks). An indexer writes new rows
under a generation nobody reads yet, switches the state record last, and only then removes the
rows it replaced, so a killed indexer leaves the previous state searchable. pymilvus is imported
here alone, when a store is opened.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .uri import StoreUri

CHUNKS, FILES, EDGES, STATES = "codesearch_chunks", "codesearch_files", "codesearch_edges", "codesearch_states"
PLACEHOLDER_DIM = 2  # Milvus asks every collection for a vector field: the bookkeeping ones hold this
MAX_TEXT_BYTES = 60_000  # under Milvus's VARCHAR limit (65,535 bytes)
MAX_NAME_BYTES = 2_000
MAX_LINES_TEXT = 8_192  # an edge's call-site lines, comma-separated
DELETE_PATHS = 200  # paths named in one delete expression
READ_BATCH = 4_000  # rows a query iterator reads at a time
INSERT_BATCH = 2_000  # rows one insert sends (a message under gRPC's size limit)
SEARCH_LIMIT_MAX = 16_384  # Milvus's topk limit

CHUNK_FIELDS = ("uid", "repo", "branch", "gen", "chunk_id", "parent_id", "path", "language", "kind", "name",
                "qualified_name", "signature", "docstring", "start_line", "end_line", "name_line", "name_column",
                "part", "ordinal", "content_hash", "text", "fingerprint", "content_class", "templates")
HIT_FIELDS = ("repo", "branch", "path", "gen")
FILE_FIELDS = ("path", "hash", "gen", "deleted", "content_gen", "edges_hash")
EDGE_FIELDS = ("repo", "branch", "gen", "path", "caller_id", "kind", "target_id", "target_path", "weight", "how",
               "callee", "lines")


class TeamStoreError(RuntimeError):
    """The store cannot be opened or used; the message is one line for the user."""


def row_uid(*parts: object) -> str:
    """A primary key from the parts that make a row unique (repo and branch names may hold any character)."""
    return hashlib.blake2b("\0".join(map(str, parts)).encode("utf-8", "replace"), digest_size=16).hexdigest()


def cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, on a character boundary."""
    data = text.encode("utf-8", "replace")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def literal(value: str) -> str:
    """A string literal of a Milvus boolean expression."""
    return json.dumps(value, ensure_ascii=False)


@dataclass
class RepoState:
    """What the store holds of one repository's branch: the live generation (0: nothing yet), the
    one an indexer is writing (0: none), and what search needs of the whole (vendored folders)."""

    repo: str
    branch: str
    live_gen: int = 0
    writing_gen: int = 0
    cleaned: bool = True  # the rows the live generation replaced are gone
    embedder: str = ""
    vendored: list[str] = field(default_factory=list)
    files: int = 0
    chunks: int = 0
    vectors: int = 0
    updated: float = 0.0

    @property
    def uid(self) -> str:
        return row_uid(self.repo, self.branch)


@dataclass(frozen=True)
class LiveFile:
    hash: str
    gen: int  # of its chunks
    edges_gen: int = 0  # of its edges
    edges_hash: str = ""


def _pymilvus() -> Any:
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")  # gRPC's own keepalive chatter is not the user's concern
    try:
        import pymilvus
    except ImportError as exc:
        raise TeamStoreError(f"the team store needs {exc.name or 'pymilvus'}, which is not installed: "
                             "pip install 'codesearch[team]'") from None
    for name in ("pymilvus", "milvus_lite", "grpc._server"):  # (iterators warn of the Lite server's clock)
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return pymilvus


class MilvusStore:
    """One connection to a team store; the collections are made on first use with the embedder's
    vector dimension (a store holds one model's vectors)."""

    def __init__(self, uri: StoreUri):
        self.uri = uri
        self.milvus = _pymilvus()
        try:
            if uri.lite:
                self.client = self.milvus.MilvusClient(uri.address)
            else:
                self.client = self.milvus.MilvusClient(uri=uri.address, token=uri.token)
        except Exception as exc:  # noqa: BLE001 - the client raises many kinds; the user needs one line
            raise TeamStoreError(f"cannot open the team store {uri}: {_first_line(exc)}") from None
        self._loaded: set[str] = set()

    def close(self) -> None:
        """Close the connection; Milvus Lite's server (a thread of this process holding the file's
        lock) stops too, so that another process may open the file."""
        self.client.close()
        if self.uri.lite:
            from milvus_lite.server_manager import server_manager_instance
            server_manager_instance.release_server(self.uri.address)

    # --- collections --------------------------------------------------------------------
    def ensure(self, dimension: int) -> None:
        """Create what is missing; refuse a store made for vectors of another dimension."""
        dt = self.milvus.DataType
        if not self.client.has_collection(CHUNKS):
            self._create_chunks(dimension)
        else:
            have = self._dimension()
            if have and have != dimension:
                raise TeamStoreError(f"the team store {self.uri} holds vectors of {have} dimensions; "
                                     f"this embedder makes {dimension}")
            self._check_fields(CHUNKS, CHUNK_FIELDS)
        self._bookkeeping(FILES, [("repo", dt.VARCHAR, 512), ("branch", dt.VARCHAR, 512), ("gen", dt.INT64, 0),
                                  ("path", dt.VARCHAR, 8192), ("hash", dt.VARCHAR, 64), ("deleted", dt.BOOL, 0),
                                  ("content_gen", dt.INT64, 0), ("edges_hash", dt.VARCHAR, 64)])
        self._check_fields(FILES, FILE_FIELDS)
        self._bookkeeping(EDGES, [("repo", dt.VARCHAR, 512), ("branch", dt.VARCHAR, 512), ("gen", dt.INT64, 0),
                                  ("path", dt.VARCHAR, 8192), ("caller_id", dt.VARCHAR, 64), ("kind", dt.VARCHAR, 16),
                                  ("target_id", dt.VARCHAR, 64), ("target_path", dt.VARCHAR, 8192),
                                  ("weight", dt.DOUBLE, 0), ("how", dt.VARCHAR, 32),
                                  ("callee", dt.VARCHAR, MAX_NAME_BYTES), ("lines", dt.VARCHAR, MAX_LINES_TEXT)])
        self._bookkeeping(STATES, [("repo", dt.VARCHAR, 512), ("branch", dt.VARCHAR, 512),
                                   ("record", dt.VARCHAR, 65_535)])

    def _check_fields(self, name: str, wanted: Sequence[str]) -> None:
        """Refuse a collection made by a codesearch whose rows lacked fields this one writes."""
        have = {f.get("name") for f in self.client.describe_collection(name).get("fields", [])}
        missing = [f for f in wanted if f not in have]
        if missing:
            raise TeamStoreError(f"the team store {self.uri} was made by an earlier codesearch (its {name} lack "
                                 f"{', '.join(missing)}): index into a new store")

    def exists(self) -> bool:
        return bool(self.client.has_collection(STATES))

    def _dimension(self) -> int:
        for f in self.client.describe_collection(CHUNKS).get("fields", []):
            if f.get("name") == "dense":
                return int(f.get("params", {}).get("dim", 0))
        return 0

    def _create_chunks(self, dimension: int) -> None:
        m = self.milvus
        dt = m.DataType
        schema = self.client.create_schema(auto_id=False)
        schema.add_field("uid", dt.VARCHAR, is_primary=True, max_length=64)
        for name, length in (("repo", 512), ("branch", 512), ("chunk_id", 64), ("parent_id", 64), ("path", 8192),
                             ("language", 64), ("kind", 64), ("name", MAX_NAME_BYTES),
                             ("qualified_name", MAX_NAME_BYTES), ("signature", 8192), ("docstring", 8192),
                             ("content_hash", 64), ("text", 65_535), ("templates", 65_535)):
            schema.add_field(name, dt.VARCHAR, max_length=length)
        for name in ("gen", "start_line", "end_line", "name_line", "name_column", "part", "ordinal", "fingerprint",
                     "content_class"):
            schema.add_field(name, dt.INT64)
        schema.add_field("has_vector", dt.BOOL)
        # the terms are codesearch's own (analysis/tokens.py, Porter-stemmed): the standard
        # tokenizer only splits them at the spaces between them
        schema.add_field("keywords", dt.VARCHAR, max_length=65_535, enable_analyzer=True,
                         analyzer_params={"tokenizer": "standard"})
        schema.add_field("sparse", dt.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", dt.FLOAT_VECTOR, dim=dimension)
        schema.add_function(m.Function(name="keywords_bm25", function_type=m.FunctionType.BM25,
                                       input_field_names=["keywords"], output_field_names=["sparse"]))
        index = self.client.prepare_index_params()
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        index.add_index("dense", index_type=self.dense_index(), metric_type="COSINE")
        self.client.create_collection(CHUNKS, schema=schema, index_params=index)

    def dense_index(self) -> str:
        """Milvus Lite's: FLAT, exact. Its AUTOINDEX clusters sealed segments (IVF) and searches
        the few clusters nearest the query: with a repository filter, a repository whose chunks
        lie in other clusters answered nothing. A server's AUTOINDEX is HNSW, which a filter does
        not empty."""
        return "FLAT" if self.uri.lite else "AUTOINDEX"

    def _bookkeeping(self, name: str, fields: list[tuple[str, Any, int]]) -> None:
        if self.client.has_collection(name):
            return
        dt = self.milvus.DataType
        schema = self.client.create_schema(auto_id=False)
        schema.add_field("uid", dt.VARCHAR, is_primary=True, max_length=64)
        for fname, kind, length in fields:
            schema.add_field(fname, kind, **({"max_length": length} if kind == dt.VARCHAR else {}))
        schema.add_field("placeholder", dt.FLOAT_VECTOR, dim=PLACEHOLDER_DIM)
        index = self.client.prepare_index_params()
        index.add_index("placeholder", index_type="FLAT", metric_type="L2")
        self.client.create_collection(name, schema=schema, index_params=index)

    def _ready(self, name: str) -> None:
        if name not in self._loaded:
            # a search of a store made by an earlier codesearch: one line, not a query error
            if name in (CHUNKS, FILES, EDGES) and not self.client.has_collection(name):
                raise TeamStoreError(f"the team store {self.uri} was made by an earlier codesearch (it has no "
                                     f"{name}): index into a new store")
            if name in (CHUNKS, FILES):
                self._check_fields(name, CHUNK_FIELDS if name == CHUNKS else FILE_FIELDS)
            self.client.load_collection(name)
            self._loaded.add(name)

    # --- state records --------------------------------------------------------------------
    def states(self) -> list[RepoState]:
        if not self.exists():
            return []
        self._ready(STATES)
        rows = self.client.query(STATES, filter='repo != ""', output_fields=["record"], limit=SEARCH_LIMIT_MAX)
        return sorted((RepoState(**json.loads(r["record"])) for r in rows), key=lambda s: (s.repo, s.branch))

    def state(self, repo: str, branch: str) -> RepoState | None:
        self._ready(STATES)
        rows = self.client.get(STATES, ids=[row_uid(repo, branch)], output_fields=["record"])
        return RepoState(**json.loads(rows[0]["record"])) if rows else None

    def put_state(self, state: RepoState) -> None:
        """One upsert: the switch an indexer makes last."""
        state.updated = time.time()
        record = json.dumps(state.__dict__, ensure_ascii=False)
        if len(record.encode()) > 65_535:
            state.vendored = state.vendored[:100]
            record = json.dumps(state.__dict__, ensure_ascii=False)
        self.client.upsert(STATES, [{"uid": state.uid, "repo": state.repo, "branch": state.branch,
                                     "record": record, "placeholder": [0.0] * PLACEHOLDER_DIM}])

    # --- writes ---------------------------------------------------------------------------
    def insert(self, name: str, rows: list[dict]) -> None:
        if not rows:
            return
        if name != CHUNKS:
            for row in rows:
                row["placeholder"] = [0.0] * PLACEHOLDER_DIM
        try:
            for start in range(0, len(rows), INSERT_BATCH):
                self.client.insert(name, rows[start:start + INSERT_BATCH])
        except Exception as exc:  # noqa: BLE001 - one line for the user, whatever the client raised
            raise TeamStoreError(f"writing to the team store {self.uri} failed: {_first_line(exc)}") from None

    def delete_where(self, name: str, expression: str) -> None:
        self.client.delete(name, filter=expression)

    def delete_paths(self, repo: str, branch: str, paths: Sequence[str], generation: str,
                     names: Sequence[str] = (CHUNKS, EDGES, FILES)) -> None:
        """Rows of these paths whose generation matches `generation` (`< 5`, `== 3`), in these collections."""
        for start in range(0, len(paths), DELETE_PATHS):
            some = paths[start:start + DELETE_PATHS]
            where = f"{self.scope(repo, branch)} and gen {generation} and path in [{', '.join(map(literal, some))}]"
            for name in names:
                self.delete_where(name, where)

    def discard_generations_after(self, repo: str, branch: str, gen: int) -> None:
        """What a killed indexer wrote and never switched to."""
        for name in (CHUNKS, EDGES, FILES):
            self.delete_where(name, f"{self.scope(repo, branch)} and gen > {gen}")

    def flush(self) -> None:
        for name in (CHUNKS, EDGES, FILES, STATES):
            self.client.flush(name)

    # --- reads ----------------------------------------------------------------------------
    @staticmethod
    def scope(repo: str, branch: str) -> str:
        return f"repo == {literal(repo)} and branch == {literal(branch)}"

    def rows(self, name: str, expression: str, fields: Sequence[str]) -> Iterator[dict]:
        """Every row matching `expression`, read in batches."""
        self._ready(name)
        iterator = self.client.query_iterator(name, batch_size=READ_BATCH, filter=expression,
                                              output_fields=list(fields))
        try:
            while True:
                batch = iterator.next()
                if not batch:
                    return
                yield from batch
        finally:
            iterator.close()

    def file_rows(self, repo: str, branch: str, up_to_gen: int) -> Iterable[dict]:
        return self.rows(FILES, f"{self.scope(repo, branch)} and gen <= {up_to_gen}", FILE_FIELDS)

    def chunks_where(self, expression: str, limit: int, fields: Sequence[str] = CHUNK_FIELDS) -> list[dict]:
        self._ready(CHUNKS)
        return list(self.client.query(CHUNKS, filter=expression, output_fields=list(fields),
                                      limit=min(limit, SEARCH_LIMIT_MAX)))

    def chunks_by_uid(self, uids: Sequence[str]) -> dict[str, dict]:
        if not uids:
            return {}
        self._ready(CHUNKS)
        return {r["uid"]: r for r in self.client.get(CHUNKS, ids=list(uids), output_fields=list(CHUNK_FIELDS))}

    def edges_where(self, expression: str, limit: int) -> list[dict]:
        self._ready(EDGES)
        return list(self.client.query(EDGES, filter=expression, limit=min(limit, SEARCH_LIMIT_MAX),
                                      output_fields=list(EDGE_FIELDS)))

    def keyword_search(self, queries: Sequence[str], expression: str, limit: int, keywords: bool = False
                       ) -> list[dict]:
        """Hits of each query (its terms, space-separated) best first, one query's after
        another's: uid, score (BM25), and what liveness is checked by (repo, branch, path, gen);
        `keywords`: the keyword field too."""
        self._ready(CHUNKS)
        fields = [*HIT_FIELDS, "keywords"] if keywords else list(HIT_FIELDS)
        found = self.client.search(CHUNKS, data=list(queries), anns_field="sparse",
                                   limit=min(limit, SEARCH_LIMIT_MAX), filter=expression, output_fields=fields,
                                   search_params={"metric_type": "BM25"})
        return [_hit(hit, abs(float(hit["distance"])), fields) for hits in found for hit in hits]

    def vector_search(self, vector: Sequence[float], expression: str, limit: int) -> list[dict]:
        """Hits best first (score: cosine similarity), among chunks that have a vector of their own."""
        self._ready(CHUNKS)
        where = f"({expression}) and has_vector == true" if expression else "has_vector == true"
        found = self.client.search(CHUNKS, data=[list(map(float, vector))], anns_field="dense",
                                   limit=min(limit, SEARCH_LIMIT_MAX), filter=where, output_fields=list(HIT_FIELDS),
                                   search_params={"metric_type": "COSINE"})
        return [_hit(hit, float(hit["distance"])) for hit in found[0]]

    def counts(self) -> dict[str, int]:
        out = {}
        for name in (CHUNKS, FILES, EDGES):
            if self.client.has_collection(name):
                out[name] = int(self.client.get_collection_stats(name).get("row_count", 0))
        return out


def live_files(rows: Iterable[dict]) -> dict[str, LiveFile]:
    """path -> the file as of its newest row read (a deleted one left out): its chunks'
    generation, and its edges' (the row's own)."""
    newest: dict[str, dict] = {}
    for row in rows:
        have = newest.get(row["path"])
        if have is None or row["gen"] > have["gen"]:
            newest[row["path"]] = row
    return {p: LiveFile(r["hash"], r["content_gen"], r["gen"], r["edges_hash"])
            for p, r in newest.items() if not r["deleted"]}


def is_live(row: Mapping[str, Any], live: Mapping[str, LiveFile] | None, collection: str = CHUNKS) -> bool:
    """Whether a row of `collection` (a chunk, an edge or a file row: path and gen) is live in
    the branch whose live file map is `live` (None: a branch not covered): the map names its path
    with the row's generation, for a chunk its file's content's, else its file's newest row's."""
    found = live.get(row["path"]) if live is not None else None
    return found is not None and (found.gen if collection == CHUNKS else found.edges_gen) == row["gen"]


def live_scope(states: Sequence[RepoState]) -> str:
    """The rows of these branches up to their live generation (those being written left out)."""
    return "(" + " or ".join(f"({MilvusStore.scope(s.repo, s.branch)} and gen <= {s.live_gen})" for s in states) + ")"


def _hit(hit: Any, score: float, fields: Sequence[str] = HIT_FIELDS) -> dict:
    entity = hit.get("entity", hit)
    return {"uid": hit["uid"] if "uid" in hit else entity["uid"], "score": score,
            **{name: entity[name] for name in fields}}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
