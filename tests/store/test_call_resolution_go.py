"""Go calls resolved as gopls would: a bare call reaches only its own package (a function of the
caller's folder, or a function literal its own body declares), and a receiver's type comes from
`new(T)`, type assertions, `range` loops and the results of calls as the repository's signatures
declare them, across files; a value of a type from outside the repository links nothing here."""

from __future__ import annotations

import pytest
from conftest import direct_relations, keyword_indexed_files

from codesearch.indexing.index import Index

ROUTER = {
    "go.mod": "module example.com/mux\n",
    "mux.go": (
        "package mux\n\n"
        "type Router struct {\n\troutes []*Route\n\tnamed  map[string]*Router\n}\n\n"
        "func (r *Router) Match() {\n\tfor _, route := range r.routes {\n\t\troute.Host(\"x\")\n\t}\n"
        "\tfor name, sub := range r.named {\n\t\tsub.Name(name)\n\t}\n}\n\n"
        "func NewRouter() *Router { return &Router{} }\n\n"
        "func (r *Router) NewRoute() *Route { return &Route{} }\n\n"
        "func (r *Router) Name(name string) *Route { return r.NewRoute() }\n\n"
        "func (r *Router) Get(name string) *Route { return nil }\n\n"
        "func helper() {}\n"
    ),
    "route.go": (
        "package mux\n\n"
        "type Route struct{}\n\n"
        "func (r *Route) Name(name string) *Route { return r }\n\n"
        "func (r *Route) Host(tpl string) *Route { return r }\n\n"
        "func (r *Route) Subrouter() *Router { return &Router{} }\n\n"
        "func (r *Route) Err() (*Route, error) { return r, nil }\n\n"
        "type routeError struct{}\n\n"
        "func (e routeError) Error() string { return \"\" }\n"
    ),
    "mux_test.go": (
        "package mux\n\n"
        "import (\n\t\"net/http\"\n\t\"strings\"\n)\n\n"
        "func TestRoutes() {\n"
        "\trouter := NewRouter()\n"
        "\trouter.NewRoute().Name(\"a\")\n"
        "\tnew(Route).Host(\"h\").Subrouter().Name(\"b\")\n"
        "\troute, err := router.Get(\"x\").Err()\n"
        "\troute.Host(\"y\")\n"
        "\t_ = err.Error()\n"
        "\tstrings.NewReader(\"s\").Len()\n"
        "\tvar value interface{} = router\n"
        "\tcast := value.(*Route)\n"
        "\tcast.Subrouter()\n"
        "\thelper()\n"
        "\thandler := func() {}\n"
        "\thandler()\n"
        "}\n\n"
        "func TestOther() {\n"
        "\thandler := func() {}\n"
        "\thandler()\n"
        "\tGet(\"x\")\n"
        "\tfirst, err := NewRouter().Get(\"x\").Err()\n"
        "\tsecond, err := new(Route).Err()\n"
        "\t_, _, _ = first, second, err.Error()\n"
        "}\n\n"
        "func Len() int { return 0 }\n\n"
        "func serve(r *http.Request) { r.Header.Get(\"x\") }\n"
    ),
    "other/helper.go": "package other\n\nfunc helper() {}\n\nfunc Get(name string) {}\n",
    "cmd/main.go": ("package main\n\nimport \"example.com/mux\"\n\n"
                    "func main() {\n\tmux.NewRouter().NewRoute()\n\tmux.Get(\"x\")\n\tunknown().Subrouter()\n}\n"),
}


@pytest.fixture
def router(tmp_path):
    # the module's last part: its root package is the indexed folder
    index = keyword_indexed_files(tmp_path / "mux", ROUTER)
    yield index
    index.close()


def _callees(index: Index, name: str) -> set[tuple[str, str, str]]:
    """(path, qualified name, resolution) of the direct callees of the definitions named `name`."""
    return {(chunk.path, chunk.qualified_name, how) for chunk, how in direct_relations(index, name, "callees")}


def test_receivers_typed_by_what_calls_return(router):
    callees = {(path, qualified) for path, qualified, _ in _callees(router, "TestRoutes")}
    assert {("mux.go", "NewRouter"), ("mux.go", "Router.NewRoute"), ("route.go", "Route.Name"),
            ("route.go", "Route.Host"), ("route.go", "Route.Subrouter"), ("mux.go", "Router.Name"),
            ("mux.go", "Router.Get"), ("route.go", "Route.Err")} <= callees
    # a strings.Reader's Len is not the package's Len; the other package's helper is not this one's;
    # err, Err's second result, is an error, not the package's only type with an Error method
    assert ("mux_test.go", "Len") not in callees
    assert ("route.go", "routeError.Error") not in callees
    assert _callees(router, "serve") == set()  # a field of an *http.Request holds no Router
    assert ("other/helper.go", "helper") not in callees


def test_range_loops_over_fields_of_the_files_own_types(router):
    assert {q for _, q, _ in _callees(router, "Router.Match")} == {"Route.Host", "Router.Name"}


def test_bare_calls_stay_in_their_package_and_their_function(router):
    mine = _callees(router, "TestRoutes")
    assert ("mux.go", "helper", "exact") in mine
    assert ("mux_test.go", "TestRoutes.handler", "exact") in mine
    assert ("mux_test.go", "TestOther.handler", "exact") not in mine
    # a bare Get is no method of Router, nor the other package's Get: nothing here defines it; err,
    # declared twice, is an error either way
    assert {qualified for _, qualified, _ in _callees(router, "TestOther")} == {
        "TestOther.handler", "NewRouter", "Router.Get", "Route.Err"}


def test_package_qualified_calls_and_receivers_nothing_is_known_of(router):
    """`mux.F()` from another package is a function of the module's root package, never a method
    of the same name; a method called on a value of unknown type links the only method of that
    name in the caller's package and the packages it imports, by name."""
    assert _callees(router, "main") == {("mux.go", "NewRouter", "exact"), ("mux.go", "Router.NewRoute", "type"),
                                        ("route.go", "Route.Subrouter", "name-only")}


def test_a_value_made_from_itself_is_unknown_not_an_endless_walk(tmp_path):
    """`utf16 := utf16.Encode(...)` names the package and the value alike, and `data :=
    data.(type)` binds a name to itself: the file is indexed, its calls kept, nothing overflows."""
    index = keyword_indexed_files(tmp_path / "ole", {"com.go": (
        "package ole\n\nimport \"unicode/utf16\"\n\n"
        "func Encode(v string) *uint16 {\n\tutf16 := utf16.Encode([]rune(v))\n\tptr := &utf16[0]\n"
        "\tptr.Grow(len(utf16))\n\treturn ptr\n}\n\n"
        "func Read(data interface{}) {\n\tswitch data := data.(type) {\n\tcase []byte:\n"
        "\t\tEncode(string(data))\n\t}\n}\n")})
    try:
        assert _callees(index, "Read") == {("com.go", "Encode", "exact")}
        assert _callees(index, "Encode") == set()  # the standard library's, not this Encode
    finally:
        index.close()


def test_a_field_of_a_type_of_the_repository_is_no_function_of_its_name(tmp_path):
    """`match.Vars` where `match` is a RouteMatch reads its field Vars: not the package's
    function Vars, as a reference nor as a call; a method of the type is still its own."""
    index = keyword_indexed_files(tmp_path / "mux", {"mux.go": (
        "package mux\n\ntype RouteMatch struct {\n\tVars map[string]string\n}\n\n"
        "func (m *RouteMatch) Clear() {}\n\n"
        "func Vars(r string) map[string]string { return nil }\n\n"
        "func keep(v map[string]string) {}\n\n"
        "func Serve() {\n\tvar match RouteMatch\n\tkeep(match.Vars)\n\tmatch.Clear()\n}\n")})
    try:
        assert _callees(index, "Serve") == {("mux.go", "keep", "exact"), ("mux.go", "RouteMatch.Clear", "type")}
    finally:
        index.close()
