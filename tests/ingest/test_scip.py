"""The SCIP reader: scip-typescript's bytes read into documents and occurrences, symbols taken
apart into descriptors, and any cut or foreign file refused with ScipError, never another error."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import SAMPLES

from codesearch.ingest.scip import (
    METHOD,
    NAMESPACE,
    PARAMETER,
    TERM,
    TYPE,
    TYPE_PARAMETER,
    ScipError,
    descriptors,
    parse_index,
    read_index,
    rebased,
)

FIXTURE = SAMPLES / "scip" / "index.scip"


def test_the_fixture_reads_into_documents_and_definitions() -> None:
    index = read_index(FIXTURE)
    assert sorted(index.documents) == ["src/main.ts", "src/shapes.ts", "src/stack.ts"]
    definitions = index.definitions()
    assert definitions["scip-typescript npm . . src/`shapes.ts`/Square#area()."] == [("src/shapes.ts", 19, 2)]
    assert definitions["local 2 in src/main.ts"] == [("src/main.ts", 4, 8)]  # a local means something in its file only
    assert not any("lib.es5.d.ts" in symbol for symbol in definitions)  # the standard library is defined elsewhere
    push = [o for o in index.documents["src/main.ts"] if o.symbol.endswith("Array#push().")]
    assert [(o.line, o.start, o.end, o.definition) for o in push] == [(18, 8, 12, False)]


@pytest.mark.parametrize(("symbol", "expected"), [
    ("scip-typescript npm . . src/`shapes.ts`/Circle#`<constructor>`().(radius)",
     [("src", NAMESPACE), ("shapes.ts", NAMESPACE), ("Circle", TYPE), ("<constructor>", METHOD),
      ("radius", PARAMETER)]),
    ("scip-typescript npm typescript 5.9.3 lib/`lib.es5.d.ts`/Math#max().",
     [("lib", NAMESPACE), ("lib.es5.d.ts", NAMESPACE), ("Math", TYPE), ("max", METHOD)]),
    ("scip-python python my  pkg 0.1 `a.b`/C#d(+1).", [("a.b", NAMESPACE), ("C", TYPE), ("d", METHOD)]),
    ("scip-typescript npm . . src/`stack.ts`/Stack#[T]", [("src", NAMESPACE), ("stack.ts", NAMESPACE),
                                                          ("Stack", TYPE), ("T", TYPE_PARAMETER)]),
    ("semanticdb maven . . `a``b`/x.", [("a`b", NAMESPACE), ("x", TERM)]),
    ("scip-typescript npm zod 4.3.6 src/v3/tests/`Mocker.ts`/Mocker#`<get>string`().",
     [("src", NAMESPACE), ("v3", NAMESPACE), ("tests", NAMESPACE), ("Mocker.ts", NAMESPACE), ("Mocker", TYPE),
      ("string", METHOD)]),
    ("local 5", []),
    ("too short", []),
])
def test_descriptors(symbol: str, expected: list[tuple[str, str]]) -> None:
    assert [(d.name, d.suffix) for d in descriptors(symbol)] == expected


def test_each_descriptor_names_the_symbol_it_ends() -> None:
    chain = descriptors("scip-typescript npm . . src/`shapes.ts`/Circle#area().")
    assert chain[-1].symbol == "scip-typescript npm . . src/`shapes.ts`/Circle#area()."
    assert chain[-2].symbol == "scip-typescript npm . . src/`shapes.ts`/Circle#"


def test_every_cut_of_the_index_reads_or_is_refused() -> None:
    """A file cut anywhere reads as the documents it still holds whole, or raises ScipError."""
    data = FIXTURE.read_bytes()
    refused = 0
    for end in range(len(data)):
        try:
            parse_index(data[:end])
        except ScipError:
            refused += 1
    assert refused > len(data) // 2


@pytest.mark.parametrize("data", [
    b"# a README, not a SCIP index\n" * 10,
    b"\x00" * 64,
    bytes(random.Random(7).randrange(256) for _ in range(4096)),
    b'{"documents": []}',
    b"\x12\xff\xff\xff\xff\x0f",  # a document that claims 4 GB
])
def test_foreign_bytes_are_refused(data: bytes) -> None:
    with pytest.raises(ScipError):
        parse_index(data)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScipError, match="cannot read the SCIP index"):
        read_index(tmp_path / "none.scip")


def test_paths_are_rebased_onto_the_indexed_root(tmp_path: Path) -> None:
    """scip-typescript writes paths relative to its project (where tsconfig.json is): an index
    of a folder inside it, or around it, sees them relative to its own root."""
    project = tmp_path / "packages" / "lib"
    (project / "src").mkdir(parents=True)
    index = read_index(FIXTURE)
    index.project_root = str(project)
    assert sorted(rebased(index, project / "src").documents) == ["main.ts", "shapes.ts", "stack.ts"]
    assert sorted(rebased(index, tmp_path).documents)[0] == "packages/lib/src/main.ts"
    assert rebased(index, project).documents is index.documents
    made_elsewhere = read_index(FIXTURE)
    made_elsewhere.project_root = str(tmp_path / "gone")  # another machine's folder: paths taken as they are
    assert sorted(rebased(made_elsewhere, tmp_path).documents) == ["src/main.ts", "src/shapes.ts", "src/stack.ts"]
