"""The team store's graph: the edges the local indexer resolves (by scope, type and import), kept
with how each was resolved, read back by callers and callees, and rewritten for an unchanged file
when a change elsewhere resolves its calls otherwise."""

from __future__ import annotations

from team_helpers import HELPERS, SHIPPING, index, store_fixture, write  # noqa: F401 - the store fixture

from codesearch.config import Settings
from codesearch.search.requests import RelationsRequest
from codesearch.team.team_search import TeamSearcher
from codesearch.team.team_service import TeamService

SHAPES = {
    "pkg/shapes.py": '''class Circle:
    def area(self):
        return 3.14


class Square:
    def area(self):
        return 1.0
''',
    "pkg/use.py": '''from pkg.shapes import Circle


def circle_area():
    shape = Circle()
    return shape.area()
''',
}


def relations(store, name: str, direction: str = "callers") -> list[tuple[str, str, str | None, tuple | None]]:
    answer = TeamSearcher(store, Settings(), None).relations(RelationsRequest(name=name, direction=direction))
    return [(r.name, r.path, r.resolution, r.sites) for r in answer.results]


def test_a_call_through_a_local_type_reaches_that_types_method_alone(store, tmp_path):
    index(store, write(tmp_path / "shapes", SHAPES), "shapes")
    assert relations(store, "Circle.area") == [("circle_area", "pkg/use.py", "type", (6,))]
    assert relations(store, "Square.area") == []
    assert relations(store, "circle_area", "callees") == [("Circle", "pkg/shapes.py", "import", (5,)),
                                                          ("area", "pkg/shapes.py", "type", (6,))]


def test_callers_json_says_how_each_call_was_resolved(store, tmp_path):
    index(store, write(tmp_path / "ship", SHIPPING), "shipping")
    index(store, write(tmp_path / "shapes", SHAPES), "shapes")
    service = TeamService(store, Settings(), None)
    answer = service.relations(RelationsRequest(name="cheapestCarrier", direction="callers")).to_dict()
    assert [(r["name"], r["resolution"], r["sites"]) for r in answer["results"]] == [("PlanRoute", "exact", [5])]
    answer = service.relations(RelationsRequest(name="area", direction="callers")).to_dict()
    assert [(r["name"], r["repo"], r["resolution"]) for r in answer["results"]] == [("circle_area", "shapes", "type")]


def test_a_changed_callee_file_rewires_its_unchanged_callers(store, tmp_path):
    root = write(tmp_path / "helpers", HELPERS)
    index(store, root, "helpers")
    # `helper` is not in the module main.py imports it from: a guess at the one definition elsewhere
    assert relations(store, "helper") == [("run", "pkg/main.py", "name-only", (5,))]
    write(root, {"pkg/helpers.py": "def assist():\n    return 1\n\n\ndef helper():\n    return 3\n"})
    report = index(store, root, "helpers")
    assert (report.modified, report.rewired, report.unchanged) == (1, 1, 2)
    assert relations(store, "helper") == [("run", "pkg/main.py", "import", (5,))]
    assert relations(store, "run", "callees") == [("helper", "pkg/helpers.py", "import", (5,))]
    (root / "pkg/helpers.py").write_text("def assist():\n    return 1\n")
    report = index(store, root, "helpers")
    assert (report.modified, report.rewired) == (1, 1)
    assert relations(store, "helper") == [("run", "pkg/main.py", "name-only", (5,))]
    assert relations(store, "run", "callees") == [("helper", "pkg/other.py", "name-only", (5,))]
    again = index(store, root, "helpers")  # nothing changed: no generation, no edges written
    assert (again.modified, again.rewired, again.generation) == (0, 0, report.generation)


def test_a_search_that_asks_for_callers_puts_them_first(store, tmp_path):
    from codesearch.search.requests import SearchRequest
    index(store, write(tmp_path / "shapes", SHAPES), "shapes")
    searcher = TeamSearcher(store, Settings(), None)
    answer = searcher.search(SearchRequest(query="who calls Circle.area", retrievers=("keyword", "graph")))
    assert [(r.name, r.sources.get("graph")) for r in answer.results][:1] == [("circle_area", 1)]
