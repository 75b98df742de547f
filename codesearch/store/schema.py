"""The catalog's tables: their SQL, the versions that say when an index must be rebuilt, and the
indexes a first index creates only at the end."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..vocabulary import NON_DEFINITION_KINDS
from .sqlite import CONTENTLESS_DELETE, sqlite3

SCHEMA_VERSION = 11  # what `meta.schema_version` says; an index of another version is rebuilt (3: file
# chunks read as their outline before their imports; Ruby's `class << self` named `self`; 4: terms
# of one character and stopwords not in the keyword index; 5: call sites carry their receiver's
# hint and references that are not calls; 6: chunks carry their message templates; 7: those of code
# alone, each with a run of two words or more; 8: receiver hints from call chains, results, ranges
# and paths, and in Java, C#, Kotlin, Rust, PHP and Ruby; 9: in TypeScript and JavaScript the values
# a name's scope declares, `require` bindings and functions assigned to properties; chains of values
# bounded; 10: there, the functions and classes a block declares, seen in that block alone; 11: data
# and build files of the content class configuration)
LAYOUT_VERSION = 5  # PRAGMA user_version: the tables' shape (format 1 had text ids and text copies;
# 2 kept chunk ids unique inside the chunks table and clustered calls by name; 3 had no hint or
# reference mark on call sites and no resolution on edges; 4 had no message templates,
# near-duplicate fingerprints or content classes)

# FTS5 keeps the index alone: no copy of the analysed text (`content=''`), whose rows can still
# be deleted from SQLite 3.43 on; an older library keeps a copy so that deletes work.
FTS_OPTIONS = "content='', contentless_delete=1" if CONTENTLESS_DELETE else ""
EDGE_KINDS = {"calls": 0, "imports": 1}  # `contains` is chunks.parent
CALLS, IMPORTS, CONTAINS = EDGE_KINDS["calls"], EDGE_KINDS["imports"], len(EDGE_KINDS)
assert CONTAINS < 4, "adjacency packs an edge's kind into two bits"
# how a call edge was resolved (`edges.how`): in the caller's own file or class, through an import,
# by the receiver's type, by a name defined once, to the declaration of an interface's method, or
# by a SCIP index that a type-aware indexer wrote (store/scip_edges.py)
RESOLUTIONS = ("exact", "import", "type", "name-only", "dynamic", "scip")
EXACT, BY_IMPORT, BY_TYPE, BY_NAME, DYNAMIC, BY_SCIP = range(len(RESOLUTIONS))

NOT_DEFINITIONS = ", ".join(f"'{kind}'" for kind in sorted(NON_DEFINITION_KINDS))

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    fid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER, mtime_ns INTEGER, content_hash TEXT,
    language TEXT, skip_reason TEXT, skip_detail TEXT, indexed_at REAL);
CREATE TABLE IF NOT EXISTS chunks(
    rid INTEGER PRIMARY KEY, id TEXT NOT NULL, parent INTEGER, fid INTEGER NOT NULL,
    kind TEXT NOT NULL, name TEXT NOT NULL,
    qualified_name TEXT,  -- NULL: the same as name
    signature TEXT, docstring TEXT, start_line INTEGER, end_line INTEGER, part INTEGER,
    name_line INTEGER, name_column INTEGER,  -- where a definition's name stands (NULL: unknown)
    embed_hash BLOB,   -- hash of the text the embedding model sees
    vector_hash BLOB,  -- embed_hash of the vector Chroma holds for this id (NULL: none yet)
    fingerprint INTEGER,     -- near-duplicate SimHash (analysis/fingerprint.py; NULL: none)
    content_class INTEGER);  -- code, test, example, ... (analysis/content_class.py CLASSES)
-- a file's chunks, and where each lies: deleting a file's chunks, and placing a grep match in
-- its chunk, read this index alone (with the rowid it holds)
CREATE INDEX IF NOT EXISTS chunks_span ON chunks(fid, start_line, end_line DESC);
CREATE INDEX IF NOT EXISTS chunks_parent ON chunks(parent);  -- a chunk's children (containment)
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    name, path, signature, body, tokenize = 'porter unicode61'{', ' + FTS_OPTIONS if FTS_OPTIONS else ''});
CREATE TABLE IF NOT EXISTS names(nid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);  -- called names
-- a call of a name from a chunk: clustered by caller (a chunk's calls; a file's come in rid
-- order, so writing them appends), and by name in calls_name (who calls NAME). `guess`:
-- resolution found no better candidates than every definition of the name, so no edge is stored
-- for it; relations answer it by name (store/edges.py). `hint`: what the receiver is
-- (ingest/scopes.py; NULL: nothing known); `ref`: 1 where the name is used, not called, 2 where a
-- SCIP index found a use that the parser did not record (store/scip_edges.py)
CREATE TABLE IF NOT EXISTS calls(nid INTEGER NOT NULL, caller INTEGER NOT NULL, line INTEGER NOT NULL,
                                 guess INTEGER NOT NULL DEFAULT 0, hint TEXT, ref INTEGER NOT NULL DEFAULT 0,
                                 PRIMARY KEY (caller, nid, line)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS imports(fid INTEGER NOT NULL, line INTEGER, module TEXT, text TEXT);
CREATE INDEX IF NOT EXISTS imports_fid ON imports(fid);
-- resolved calls and imports between chunks: out of a chunk by the key, into it by edges_into,
-- which also carries what a centrality needs (kind and weight); `how`: a call's RESOLUTIONS
CREATE TABLE IF NOT EXISTS edges(src INTEGER NOT NULL, kind INTEGER NOT NULL, dst INTEGER NOT NULL,
                                 weight REAL NOT NULL, how INTEGER NOT NULL DEFAULT 0,
                                 PRIMARY KEY (src, kind, dst)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_into ON edges(dst, kind, weight);
CREATE TABLE IF NOT EXISTS vector_deletions(id TEXT PRIMARY KEY);
-- vectors Chroma holds for chunks that a rebuild (reset) dropped and has not written back yet:
-- those that come back with the same id, text and language keep theirs (settle_held_vectors),
-- the rest are deleted from Chroma, instead of emptying it and filling it again
CREATE TABLE IF NOT EXISTS held_vectors(id TEXT PRIMARY KEY, vector_hash BLOB NOT NULL, language TEXT) WITHOUT ROWID;
-- a chunk's message templates (analysis/messages.py, joined by its RECORD), keyed by the chunk's
-- rid: the string literals that hold a message's words, placeholders and joined values as GAP;
-- a pasted message's words find them, its text is then matched against theirs
CREATE VIRTUAL TABLE IF NOT EXISTS messages USING fts5(templates, tokenize = 'unicode61');
-- vectors by the hash of the text they were made from (which names the model too)
CREATE TABLE IF NOT EXISTS embed_cache(text_hash BLOB PRIMARY KEY, vector BLOB NOT NULL, used_at REAL);
"""

# Indexes that the writing of a file into an empty catalog never reads: a first index creates them
# at the end of its writing, sorting once, instead of inserting every row into them at a random
# place: each such insert cost a page read and a page write once the B-tree outgrew the cache.
# Chunk ids are hashes, and calls were clustered by name: a batch's new ids and call sites landed
# at random places of their B-trees, and each commit wrote every page it had changed to the WAL
# again; with chunks_id and calls_name deferred and calls clustered by caller, a first index
# writes a fraction of the bytes and takes less time (docs/benchmarks.md, "A 100,000-file
# monorepo").
# Not chunks_parent: searches answered during a first index name it (the graph step's INDEXED
# BY), and its rows come nearly in order. Searches that would use the others scan meanwhile. A
# catalog left without them (a first index killed half way) gets them back at its next writable
# open.
DEFERRED_SCHEMA = f"""
CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name COLLATE NOCASE);  -- names in any case
-- the chunks whose vector Chroma lacks, alone, definitions apart from the rest: the daemon's
-- embedding slices find the next ones, and count them, without scanning the rows already embedded
-- (1.3 million in a monorepo) nor, while definitions go first, the file and block chunks still
-- waiting before them (keyed by rid alone, a slice's search in the monorepo took 27 ms with 8%
-- of its definitions embedded, 55 ms at 46%, 99 ms at 93%; keyed so, 0.02 ms throughout)
CREATE INDEX IF NOT EXISTS chunks_to_embed ON chunks(kind IN ({NOT_DEFINITIONS}), rid)
    WHERE embed_hash IS NOT NULL AND vector_hash IS NOT embed_hash;
-- chunks by id (results, vectors), and ids kept unique: a chunk whose id another chunk has
-- fails to be written, or, written while this index was deferred, has its file skipped
CREATE UNIQUE INDEX IF NOT EXISTS chunks_id ON chunks(id);
CREATE INDEX IF NOT EXISTS calls_name ON calls(nid, guess);  -- who calls NAME (and whose calls were guesses)
"""
DEFERRED_INDEXES = tuple(re.findall(r"INDEX IF NOT EXISTS (\w+) ", DEFERRED_SCHEMA))


def statement_creating(table: str) -> str:
    """SCHEMA's statement that creates `table`."""
    return next(s for s in statements(SCHEMA) if f"CREATE TABLE IF NOT EXISTS {table}(" in s)


# Everything that hangs off a chunk goes with it.
CHUNKS_DELETED_TRIGGER = """CREATE TRIGGER chunks_deleted AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rid;
    DELETE FROM edges WHERE src = old.rid;
    DELETE FROM edges WHERE dst = old.rid;
    DELETE FROM calls WHERE caller = old.rid;
    DELETE FROM messages WHERE rowid = old.rid;
    INSERT OR IGNORE INTO vector_deletions(id) SELECT old.id WHERE old.vector_hash IS NOT NULL;
END"""



def statements(script: str) -> Iterator[str]:
    """The SQL statements of a script, whole (comments may hold semicolons)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""

