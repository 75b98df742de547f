"""What a long query says about code: frames, paths, identifiers, messages, and the prose."""

from __future__ import annotations

import pytest

from codesearch.analysis.query_shape import (
    EMBED_WORDS,
    MAX_KEYWORD_TERMS,
    MAX_PHRASES,
    Frame,
    code_words,
    embedding_text,
    exact_phrases,
    is_code_style,
    is_file_path,
    is_long_query,
    keyword_terms,
    mentions,
    normalize_path,
    shape_of,
    symbol_names,
)

PYTHON_TRACE = '''Calling app.test_client() inside a blueprint crashes

Traceback (most recent call last):
  File "/home/me/venv/lib/python3.11/site-packages/flask/app.py", line 1455, in wsgi_app
    response = self.full_dispatch_request()
  File "/home/me/project/src/flask/ctx.py", line 301, in push
    self.app_context().push()
KeyError: 'SERVER_NAME'
'''

JAVA_TRACE = '''Gson throws on a map whose first value is null
Exception in thread "main" com.google.gson.JsonSyntaxException: duplicate key: null
    at com.google.gson.internal.bind.MapTypeAdapterFactory$Adapter.read(MapTypeAdapterFactory.java:211)
    at com.google.gson.Gson.fromJson(Gson.java:1227)
    ... 3 more
'''

JS_TRACE = '''res.send sets the Content-Type twice
TypeError: Cannot read properties of undefined (reading 'charset')
    at ServerResponse.send (/srv/app/node_modules/express/lib/response.js:142:21)
    at Layer.handle [as handle_request] (/srv/app/node_modules/express/lib/router/layer.js:95:5)
    at /srv/app/index.js:12:7
'''

GO_TRACE = '''panic: runtime error: invalid memory address or nil pointer dereference

goroutine 1 [running]:
github.com/spf13/cobra.(*Command).execute(0xc0000f4000, {0xc000012090, 0x1, 0x1})
\t/home/me/go/pkg/mod/github.com/spf13/cobra@v1.8.0/command.go:989 +0x8a
main.main()
\t/home/me/tool/main.go:10 +0x25
'''

RUST_TRACE = '''thread 'main' panicked at serde_derive/src/de.rs:1123:9:
called `Option::unwrap()` on a `None` value
stack backtrace:
   0: rust_begin_unwind
  12: serde_derive::de::deserialize_struct
             at ./serde_derive/src/de.rs:1123:9
'''


@pytest.mark.parametrize("report, path, line, function", [
    (PYTHON_TRACE, "/home/me/project/src/flask/ctx.py", 301, "push"),
    (JAVA_TRACE, "MapTypeAdapterFactory.java", 211, "com.google.gson.internal.bind.MapTypeAdapterFactory$Adapter.read"),
    (JS_TRACE, "/srv/app/node_modules/express/lib/response.js", 142, "ServerResponse.send"),
    (GO_TRACE, "/home/me/go/pkg/mod/github.com/spf13/cobra/command.go", 989,
     "github.com/spf13/cobra.(*Command).execute"),
    (RUST_TRACE, "serde_derive/src/de.rs", 1123, "serde_derive::de::deserialize_struct"),
])
def test_traceback_frames(report, path, line, function):
    frames = shape_of(report).frames
    assert any(f.path == path and f.line == line for f in frames), frames
    assert function in {f.function for f in frames}


def test_python_traceback_parts():
    shape = shape_of(PYTHON_TRACE)
    assert shape.frames[0] == Frame("/home/me/venv/lib/python3.11/site-packages/flask/app.py", 1455, "wsgi_app")
    assert shape.paths[:2] == ("/home/me/venv/lib/python3.11/site-packages/flask/app.py",
                               "/home/me/project/src/flask/ctx.py")
    assert {"wsgi_app", "push", "KeyError", "app.test_client"} <= set(shape.symbols)
    assert shape.title == "Calling app.test_client() inside a blueprint crashes"
    assert "Traceback" not in shape.prose and "File" not in shape.prose


def test_java_exception_and_message():
    shape = shape_of(JAVA_TRACE)
    assert "JsonSyntaxException" in shape.symbols
    assert "duplicate key: null" in shape.messages
    assert "MapTypeAdapterFactory.java" in shape.paths and "Gson.java" in shape.paths


def test_js_frames_drop_the_alias():
    functions = [f.function for f in shape_of(JS_TRACE).frames]
    assert "Layer.handle" in functions
    assert "/srv/app/index.js" in shape_of(JS_TRACE).paths


def test_go_panic_message_and_module_version_dropped():
    shape = shape_of(GO_TRACE)
    assert "runtime error: invalid memory address or nil pointer dereference" in shape.messages
    assert "/home/me/tool/main.go" in shape.paths


def test_rust_panic_location():
    shape = shape_of(RUST_TRACE)
    assert shape.paths[0] == "serde_derive/src/de.rs"
    assert "Option::unwrap" in shape.symbols


@pytest.mark.parametrize("text, paths", [
    ("the bug is in src/flask/app.py, near the top", ["src/flask/app.py"]),
    ("see format-inl.h and `include/fmt/base.h`", ["include/fmt/base.h", "format-inl.h"]),  # code spans first
    (r"at C:\Users\me\Dapper\SqlMapper.cs there", ["/Users/me/Dapper/SqlMapper.cs"]),
    ("edit ./lib/router/index.js: it hangs", ["lib/router/index.js"]),
    ("e.g. version 1.2.3 fails. It ends here.", []),
    ("Node 18 and the docs at https://example.com/a/b.html", []),
])
def test_paths(text, paths):
    assert list(shape_of(text).paths) == paths


@pytest.mark.parametrize("text, expected", [
    ("calling parse_config twice", {"parse_config"}),
    ("JsonReader drops the value", {"JsonReader"}),
    ("getUser returns null", {"getUser"}),
    ("an HTTPError is raised", {"HTTPError"}),
    ("GsonBuilder.setDateFormat ignores it", {"GsonBuilder.setDateFormat"}),
    ("std::fs::File is not closed", {"std::fs::File"}),
    ("Class#method and $scope", {"Class#method", "$scope"}),
    ("call uv_accept() then render() again", {"uv_accept", "render"}),
    ("the `run` helper", {"run"}),
    ("It works. Then it fails, e.g. on Mondays (and in URLs).", set()),
    ("the function(s) break", set()),
])
def test_identifiers(text, expected):
    assert set(shape_of(text).symbols) == expected


@pytest.mark.parametrize("token, code", [
    ("parse_config", True), ("__init__", True), ("MAX_SIZE", True), ("getUser", True), ("XMLParser", True),
    ("ab.cd", True), ("a.b.c", False), ("e.g", False), ("Hello", False), ("URLs", False), ("_", False),
    ("value", False),
])
def test_is_code_style(token, code):
    assert is_code_style(token) is code


@pytest.mark.parametrize("token, path", [
    ("app.py", True), ("src/x.rs", True), ("README.md", False), ("docs/README.md", True), ("e.g", False),
    ("v1.2", False), ("end.", False),
])
def test_is_file_path(token, path):
    assert is_file_path(token) is path


def test_normalize_path():
    assert normalize_path(r"C:\a\b.cs") == "/a/b.cs"
    assert normalize_path("./x/y.py") == "x/y.py"
    assert normalize_path("github.com/spf13/cobra@v1.8.0/command.go") == "github.com/spf13/cobra/command.go"


def test_quoted_messages():
    shape = shape_of('It prints "unexpected end of input" and then \'bad argument\' but don\'t worry, it\'s fine')
    assert shape.messages == ("unexpected end of input", "bad argument")


def test_prose_only_report():
    report = ("When I start the server after upgrading, the pages load slowly and sometimes the browser "
              "shows an empty page. I expected them to load as before. This started with the last release.")
    shape = shape_of(report)
    assert shape.symbols == () and shape.paths == () and shape.frames == () and shape.messages == ()
    assert shape.title.startswith("When I start the server")
    terms = keyword_terms(shape)
    assert "server" in terms and "slowly" in terms and "the" not in terms
    assert code_words(shape) == set()


def test_issue_references_and_conventional_prefix_are_not_terms():
    shape = shape_of("fix(router): hang on a large stack of routes (#1234)\n\nCloses org/repo#56 and GH-7.")
    assert shape.title == "router hang on a large stack of routes"
    assert not any(t.isdigit() for t in keyword_terms(shape))
    assert "fix" not in shape.symbols


def test_keyword_terms_weigh_code_above_prose():
    shape = shape_of("Cache is stale after reload\n\nCalling `parse_config` twice keeps the old value around.")
    terms = keyword_terms(shape)
    assert terms.count("parseconfig") == 3 and terms.count("parse") == 2  # whole identifier, then its parts
    assert terms.count("stale") == 2  # the title
    assert terms.count("value") == 1  # the prose
    assert terms.index("parseconfig") < terms.index("stale") < terms.index("value")


def test_keyword_terms_are_bounded():
    report = "Crash\n\n" + " ".join(f"word{i} name_{i}" for i in range(500))
    assert len(keyword_terms(shape_of(report))) <= MAX_KEYWORD_TERMS


def test_embedding_text_puts_code_before_prose():
    report = "Crash in the parser\n\n" + "Some long story about my setup. " * 40 + "It fails in `parse_config`."
    text = embedding_text(shape_of(report))
    assert text.startswith("Crash in the parser parse_config")
    assert len(text.split()) <= EMBED_WORDS


def test_symbol_names_include_last_parts():
    shape = shape_of("JsonReader.nextString and serde::de::Visitor fail, see `parse_config`")
    assert symbol_names(shape) == ["parse_config", "nextString", "JsonReader", "Visitor"]


def test_code_words_from_identifiers_and_paths():
    shape = shape_of("Error in src/flask/sessions.py when `SecureCookieSessionInterface` rotates keys")
    assert {"sessions", "flask", "secure", "cookie", "session", "interface"} <= code_words(shape)


@pytest.mark.parametrize("query, long", [
    ("how are routes registered", False),
    ("serde_derive Container Variant and Field AST types for Rust struct and enum introspection", False),
    ("Fix hanging on large stack of sync routes", False),
    (" ".join(["word"] * 21), True),
    ("subject\n\nbody line one\nbody line two", True),
    ("subject\n\n", False),
])
def test_is_long_query(query, long):
    assert is_long_query(query) is long


@pytest.mark.parametrize("path, named, expected", [
    ("src/flask/app.py", ("/usr/lib/python3/site-packages/flask/app.py",), True),
    ("src/flask/app.py", ("flask/app.py",), True),
    ("src/flask/app.py", ("app.py",), True),
    ("src/flask/app.py", ("/home/me/project/app.py",), False),  # another folder's app.py
    ("app.py", ("/srv/x/app.py",), True),
    ("src/flask/app.py", ("src/flask/ctx.py", "views.py"), False),
])
def test_mentions(path, named, expected):
    assert mentions(path, named) is expected


def test_exact_phrases_are_runs_of_index_terms():
    # stopwords and one-letter words are not indexed, so they break no run
    assert exact_phrases("ValueError: the inventory is full", None) == ("value error inventory", "error inventory full")
    assert exact_phrases("inventory is full", None) == ()  # two terms: no run of three
    assert exact_phrases("HTTPDigestAuth", None) == ()  # one word's parts: its name, searched as a name


def test_exact_phrases_of_a_report_come_from_its_messages():
    text = ("Adding items crashes once the store is large\n\nWhen I add many items to my inventory the app "
            "stops with an error and nothing is saved, even after a restart of the whole service.\n"
            "ValueError: inventory is full after loading the items")
    report = shape_of(text)
    assert is_long_query(text) and report.messages == ("inventory is full after loading the items",)
    assert exact_phrases(text, report) == ("inventory full loading", "full loading items")


def test_exact_phrases_are_bounded():
    assert len(exact_phrases(" ".join(f"word{i}" for i in range(500)), None)) == MAX_PHRASES
