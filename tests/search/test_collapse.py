"""Near-duplicate results collapsed (search/collapse.py): translations of one page become one
result that lists the others as `similar`, a function copied into platform files too; different
functions and different pages stay apart. End to end on a real keyword index, and the JSON and
text the user gets."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import keyword_indexed_files, run_cli

from codesearch.analysis.content_class import CLASS_NUMBERS
from codesearch.model import Chunk
from codesearch.search.collapse import (
    CANDIDATE_BITS,
    CODE_BITS,
    COPY_RESEMBLANCE,
    WINDOW,
    Resemblance,
    collapse,
    collapse_ranked,
    indexed_traits,
    near_duplicates,
)
from codesearch.search.ranking import Ranked
from codesearch.search.requests import SearchAnswer, SearchRequest
from codesearch.search.searcher import Searcher

CODE_BLOCK = """```python
from shop.cart import Cart, checkout

cart = Cart(currency="EUR")
cart.add_item("apple", quantity=3, price=0.5)
total = checkout(cart, coupon="SPRING10")
print(total.amount, total.currency)
```"""

FILES = {
    "README.md": f"# Shop\n\n## Checking out\n\nTo pay for a [Cart](https://shop.example/docs/cart.html), call "
                 f"`checkout` with the cart and an optional coupon:\n\n{CODE_BLOCK}\n\nThe total is rounded.\n",
    "README.de.md": f"# Shop\n\n## Bezahlen\n\nUm einen [Warenkorb](https://shop.example/docs/cart.html) zu "
                    f"bezahlen, rufen Sie `checkout` mit dem Warenkorb und einem Gutschein auf:\n\n{CODE_BLOCK}\n\n"
                    f"Die Summe wird gerundet.\n",
    "README.zh.md": f"# Shop\n\n## 结账\n\n要为[购物车](https://shop.example/docs/cart.html)付款，请调用`checkout`：\n\n"
                    f"{CODE_BLOCK}\n\n总额四舍五入。\n",
    "docs/logging.md": "# Logging\n\nLogs of a checkout go through "
                       "[logging](https://docs.python.org/3/library/logging.html); set `LOG_LEVEL`:\n\n"
                       "```python\nimport logging\nfrom shop.settings import configure_logging\n\n"
                       "configure_logging(level=logging.DEBUG, json_lines=True)\n"
                       "logger = logging.getLogger('shop.checkout')\nlogger.warning('cart %s delayed', cart_id)\n```\n",
    "shop/cart.py": "def checkout(cart, coupon=None):\n    \"\"\"Pay for the cart, with a coupon.\"\"\"\n"
                    "    discount = lookup_coupon(coupon) if coupon else 0\n"
                    "    total = sum(item.price * item.quantity for item in cart.items) - discount\n"
                    "    return Receipt(amount=round(total, 2), currency=cart.currency)\n",
    "shop/log.py": "def warn_checkout(cart, message, *args):\n"
                   "    record = make_record(cart.owner, cart.currency, message, args, level=WARNING)\n"
                   "    handlers_for(cart.shop).emit(record, flush=False, retries=3)\n\n\n"
                   "def error_checkout(cart, message, *args):\n"
                   "    record = make_record(cart.owner, cart.currency, message, args, level=ERROR)\n"
                   "    handlers_for(cart.shop).emit(record, flush=False, retries=3)\n",
    "shop/platform/linux.py": "def checkout_lock_path(cart, shop_root):\n"
                              "    folder = os.path.join(shop_root, 'locks', cart.currency)\n"
                              "    os.makedirs(folder, exist_ok=True)\n"
                              "    return os.path.join(folder, f'{cart.owner}-{cart.id}.lock')\n",
    "shop/platform/darwin.py": "def checkout_lock_path(cart, shop_root):\n"
                               "    folder = os.path.join(shop_root, 'locks', cart.currency)\n"
                               "    os.makedirs(folder, exist_ok=True)\n"
                               "    return os.path.join(folder, f'{cart.owner}-{cart.id}.lock')\n",
}
# one method in three classes: two copies whose fingerprints lie far apart (one call renamed), and one
# of the same words written differently
FINISH = ("    def finish(self, exc_type: Optional[Type[BaseException]], exc_value: Optional[BaseException],\n"
          "               traceback: Optional[TracebackType], flush_to: Optional[Stream] = None) -> None:\n")
FILES |= {
    "shop/status.py": "class Status:\n" + FINISH +
                      "        \"\"\"Stop the display when the context closes, flushing what is left.\"\"\"\n"
                      "        self.stop_display(flush_to)\n",
    "shop/reader.py": "class Reader:\n" + FINISH +
                      "        \"\"\"Stop the display when the context closes, flushing what is left.\"\"\"\n"
                      "        self.close_stream(flush_to)\n",
    "shop/progress.py": "class Progress:\n" + FINISH +
                        "        \"\"\"Close the stream and stop the display when the context is done.\"\"\"\n"
                        "        if exc_type is None and flush_to is not None:\n"
                        "            self.stop_display(flush_to)\n",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    index = keyword_indexed_files(tmp_path_factory.mktemp("collapse"), FILES)
    yield index
    index.close()


def search(index, query: str, limit: int = 10):
    return Searcher(index).search(SearchRequest(query=query, mode="keyword", limit=limit)).results


def test_translations_of_a_page_collapse_into_one_result_with_similar(index):
    results = search(index, "checkout cart coupon currency")
    readmes = [r for r in results if r.path.startswith("README")]
    assert len(readmes) == 1
    kept = readmes[0]
    assert kept.content_class == "documentation"
    assert {s.path for s in kept.similar or ()} == {"README.md", "README.de.md", "README.zh.md"} - {kept.path}
    assert any(r.path == "docs/logging.md" for r in results)  # another page stays a result of its own


def test_a_copied_function_collapses_and_different_functions_do_not(index):
    results = search(index, "checkout lock path currency owner")
    locks = [r for r in results if r.name == "checkout_lock_path"]
    assert len(locks) == 1 and [s.path for s in locks[0].similar or ()] and locks[0].content_class == "code"
    logged = {r.name for r in search(index, "record cart message level emit handlers")}
    assert {"warn_checkout", "error_checkout"} <= logged


def test_copies_far_apart_in_their_fingerprints_collapse_when_their_texts_are_alike(index):
    """Status.finish and Reader.finish differ in one call (their fingerprints 13 bits apart, past
    CODE_BITS): one result. Progress.finish has their words in another order: a result of its own."""
    finishes = [r for r in search(index, "finish display stream flush context") if r.name == "finish"]
    assert {r.path for r in finishes} - {"shop/progress.py"} in ({"shop/status.py"}, {"shop/reader.py"})
    assert "shop/progress.py" in {r.path for r in finishes}
    copy = next(r for r in finishes if r.path != "shop/progress.py")
    assert [s.path for s in copy.similar or ()] == [({"shop/status.py", "shop/reader.py"} - {copy.path}).pop()]
    assert not next(r for r in finishes if r.path == "shop/progress.py").similar


def test_the_json_contract_of_similar_and_content_class(index):
    results = search(index, "checkout cart coupon currency")
    doc = next(r.to_dict() for r in results if r.path.startswith("README"))
    assert set(doc["similar"][0]) == {"id", "path", "start_line", "end_line", "language"}
    alone = next(r.to_dict() for r in results if not r.similar)
    assert "similar" not in alone and alone["content_class"] in ("code", "documentation")


def test_text_output_says_how_many_are_similar(index):
    done = run_cli("query", "checkout cart coupon currency", "--repo", str(index.root), "--mode", "keyword")
    assert done.returncode == 0, done.stderr
    assert "+2 similar" in done.stdout
    as_json = json.loads(run_cli("query", "checkout cart coupon currency", "--repo", str(index.root), "--mode",
                                 "keyword", "--json").stdout)
    assert sum(len(r.get("similar", ())) for r in as_json["results"]) >= 2


def chunk(cid: str, kind: str, name: str, path: str = "", lines: tuple[int, int] = (1, 5),
          qualified: str = "") -> Chunk:
    return Chunk(cid, None, path or f"{cid}.py", "python", kind, name, qualified or name, "", "", *lines, "", "", "")


CODE = CLASS_NUMBERS["code"]
DOCS = CLASS_NUMBERS["documentation"]


@pytest.mark.parametrize("a, a_traits, b, b_traits, expected", [
    (chunk("1", "function", "f"), (0b1011, CODE), chunk("2", "function", "f", "b.py"), (0b1001, CODE), True),
    (chunk("1", "function", "f"), (0b1011, CODE), chunk("2", "function", "g"), (0b1011, CODE), False),
    # a method copied out as a function (a module-level wrapper), but not a class of the name
    (chunk("1", "function", "f"), (0b1011, CODE), chunk("2", "method", "f"), (0b1011, CODE), True),
    (chunk("1", "function", "f"), (0b1011, CODE), chunk("2", "class", "f"), (0b1011, CODE), False),
    (chunk("1", "function", "f"), (0b1011, CODE), chunk("2", "function", "f"), (0b1011, DOCS), False),
    (chunk("1", "function", "f"), (0, CODE), chunk("2", "function", "f"), (0, CODE), False),
    (chunk("1", "function", "f"), (0xFF, CODE), chunk("2", "function", "f"), (0xF0, CODE), False),
    (chunk("1", "section", "Intro"), (0x1F, DOCS), chunk("2", "section", "Einführung"), (0x00, DOCS), False),
    (chunk("1", "section", "Intro"), (0x1F, DOCS), chunk("2", "section", "Einführung"), (0x01, DOCS), True),
    # a method copied into another class: its name kept, its qualified name not
    (chunk("1", "method", "measure", qualified="Bar.measure"), (0b1011, CODE),
     chunk("2", "method", "measure", qualified="ProgressBar.measure"), (0b1011, CODE), True),
    (chunk("1", "method", "measure", qualified="Bar.measure"), (0xFF, CODE),
     chunk("2", "method", "measure", qualified="Live.measure"), (0xF0, CODE), False),
    # one file's nearly same lines: a method and the part of its class around it, fingerprinted or not
    (chunk("1", "method", "measure", "t.py", (716, 753)), (0, CODE), chunk("2", "class", "Table", "t.py", (716, 755)),
     (0xF0, CODE), True),
    (chunk("1", "method", "measure", "t.py", (716, 753)), (0, CODE), chunk("2", "class", "Table", "t.py", (700, 755)),
     (0xF0, CODE), False),
    (chunk("1", "method", "measure", "t.py", (716, 753)), (0, CODE), chunk("2", "class", "Table", "u.py", (716, 755)),
     (0xF0, CODE), False),
])
def test_the_near_duplicate_rule(a, a_traits, b, b_traits, expected):
    assert near_duplicates(a, a_traits, b, b_traits, lambda *_: 0.0) is expected


@pytest.mark.parametrize("bits, resemblance, expected", [
    (CODE_BITS, 0.0, True),  # the fingerprints alone
    (CODE_BITS + 1, COPY_RESEMBLANCE, True), (CANDIDATE_BITS, 0.9, True),  # in doubt: the texts tell
    (CODE_BITS + 1, COPY_RESEMBLANCE - 0.01, False),
    (CANDIDATE_BITS + 1, 1.0, False),  # too far apart to be read
])
def test_fingerprints_in_doubt_are_settled_by_the_texts(bits, resemblance, expected):
    asked: list[tuple[str, str]] = []

    def resembles(a: Chunk, b: Chunk) -> float:
        asked.append((a.id, b.id))
        return resemblance

    a, b = chunk("1", "method", "finish"), chunk("2", "method", "finish")
    assert near_duplicates(a, (-1, CODE), b, ((1 << bits) - 1 ^ -1, CODE), resembles) is expected
    assert bool(asked) == (CODE_BITS < bits <= CANDIDATE_BITS)


def test_resemblance_reads_a_chunk_s_text_once_and_only_when_it_has_none():
    read: list[str] = []

    def reader(chunks: list[Chunk]) -> None:
        for c in chunks:
            read.append(c.id)
            c.text = "def finish(self): self.stop_display(flush_to); return done"

    a = chunk("1", "method", "finish")
    b = replace(chunk("2", "method", "finish"), text="def finish(self): self.close_stream(flush_to); return done")
    resemblance = Resemblance(reader)
    assert resemblance(a, b) == resemblance(b, a) == pytest.approx(3 / 9)  # 3 runs of 3 shared, of 9
    assert read == ["1"]
    assert Resemblance(None)(chunk("3", "method", "f"), b) == 0.0  # no text: nothing alike


def test_resemblance_reads_a_pair_without_text_in_one_call():
    calls: list[list[str]] = []

    def reader(chunks: list[Chunk]) -> None:
        calls.append([c.id for c in chunks])
        for c in chunks:
            c.text = "def finish(self): self.stop_display(flush_to); return done"

    resemblance = Resemblance(reader)
    a, b = chunk("1", "method", "finish", "t.py"), chunk("2", "method", "finish", "t.py")
    assert resemblance(a, b) == 1.0 and resemblance(b, a) == 1.0
    assert calls == [["1", "2"]]


def test_collapse_keeps_the_limit_and_lists_later_copies_with_their_first():
    chunks = [chunk(str(i), "function", "f" if i % 2 == 0 else f"g{i}", f"{i}.py") for i in range(8)]
    traits = {c.id: (0b1111, CODE) for c in chunks}
    kept = collapse(chunks, lambda c: c, traits, 3, lambda *_: 0.0)
    assert [c.id for c, _ in kept] == ["0", "1", "3"]
    assert [c.id for c in kept[0][1]] == ["2", "4", "6"]


def test_a_vendored_folder_s_chunk_is_of_the_class_vendored():
    vendored = frozenset({"shop/_vendor"})
    assert indexed_traits(7, CODE, "shop/_vendor/six.py", vendored) == (7, CLASS_NUMBERS["vendored"])
    assert indexed_traits(7, CODE, "shop/vendor_names.py", vendored) == (7, CODE)


def test_collapse_ranked_reads_the_traits_of_its_window_only_and_shows_files_when_asked():
    ranked = [Ranked(chunk(str(i), "function", f"g{i}", f"{i % 4}.py"), 20.0 - i) for i in range(20)]
    read: list[str] = []

    def traits_of(chunks: list[Chunk]) -> dict[str, tuple[int, int]]:
        read.extend(c.id for c in chunks)
        return {c.id: (0, CODE) for c in chunks}

    entries, traits = collapse_ranked(ranked, 2, None, traits_of, None)
    assert [(r.chunk.id, agg) for (r, agg), _ in entries] == [("0", None), ("1", None)]
    assert read == [str(i) for i in range(2 * WINDOW)] and set(traits) == set(read)
    entries, _ = collapse_ranked(ranked, 2, "max_p", traits_of, None)
    assert [(r.chunk.path, agg) for (r, agg), _ in entries] == [("0.py", 20.0), ("1.py", 19.0)]


def test_similar_and_content_class_cross_the_wire(index):
    """What the socket, HTTP and MCP carry: the answer's JSON read back is the same answer."""
    answer = Searcher(index).search(SearchRequest(query="checkout cart coupon currency", mode="keyword"))
    assert any(r.similar for r in answer.results)
    assert SearchAnswer.from_dict(json.loads(json.dumps(answer.to_dict()))) == answer


def test_one_result_per_file_collapses_translated_files_too(index):
    results = Searcher(index).search(SearchRequest(query="checkout cart coupon currency", mode="keyword",
                                                   files=True)).results
    readmes = [r for r in results if r.path.startswith("README")]
    assert len(readmes) == 1 and len(readmes[0].similar or ()) == 2
