"""Near-duplicate fingerprints (analysis/fingerprint.py): translations of a document and copies of
code come out near, different documents and different code far, and tiny chunks get none."""

from __future__ import annotations

import random
import zlib

import pytest

from codesearch.analysis.fingerprint import (
    MIN_FEATURES,
    SALT,
    distance,
    document_features,
    fingerprints,
    simhash,
)
from codesearch.analysis.tokens import index_text
from codesearch.search.collapse import CODE_BITS, DOCUMENT_BITS

CODE_BLOCK = """```python
from shop.cart import Cart, checkout

cart = Cart(currency="EUR")
cart.add_item("apple", quantity=3, price=0.5)
total = checkout(cart, coupon="SPRING10")
print(total.amount, total.currency)
```"""

TRANSLATIONS = {
    "en": f"## Checking out\n\nTo pay for a [Cart](https://shop.example/docs/cart.html), call `checkout` "
          f"with the cart and an optional coupon:\n\n{CODE_BLOCK}\n\nThe total is rounded to cents.",
    "de": f"## Bezahlen\n\nUm einen [Warenkorb](https://shop.example/docs/cart.html) zu bezahlen, rufen Sie "
          f"`checkout` mit dem Warenkorb und einem optionalen Gutschein auf:\n\n{CODE_BLOCK}\n\n"
          f"Die Summe wird auf Cent gerundet.",
    "zh": f"## 结账\n\n要为[购物车](https://shop.example/docs/cart.html)付款，请使用购物车和可选的优惠券调用"
          f"`checkout`：\n\n{CODE_BLOCK}\n\n总额四舍五入到分。",
    "ja": f"## チェックアウト\n\n[カート](https://shop.example/docs/cart.html)の支払いには、カートと任意の"
          f"クーポンを指定して`checkout`を呼び出します。\n\n{CODE_BLOCK}\n\n合計はセント単位に丸められます。",
}

OTHER_PAGE = """## Logging

Logs go through [logging](https://docs.python.org/3/library/logging.html); set `LOG_LEVEL`:

```python
import logging
from shop.settings import configure_logging

configure_logging(level=logging.DEBUG, json_lines=True)
logger = logging.getLogger("shop.orders")
logger.warning("order %s delayed", order_id)
```"""


def fingerprint_of(language: str, text: str) -> int:
    """One chunk's fingerprint, its code terms analysed as the indexer does (analysis/rows.py)."""
    return fingerprints([(language, text, index_text(text))])[0]


def brute_simhash(features: set[str]) -> int:
    """SimHash by its definition, one bit at a time."""
    hashes = [zlib.crc32(f.encode()) << 32 | zlib.crc32(f.encode(), SALT) for f in features]
    value = sum(1 << bit for bit in range(64) if 2 * sum(h >> bit & 1 for h in hashes) > len(hashes))
    return (value - (1 << 64) if value >> 63 else value) or 1


@pytest.mark.parametrize("size", [MIN_FEATURES, 9, 16, 17, 40, 257])
def test_the_bit_sliced_simhash_is_simhash(size):
    rng = random.Random(size)
    for _ in range(20):
        features = {f"w{rng.randrange(10 ** 9)}" for _ in range(size)}
        assert simhash(features) == brute_simhash(features)


def test_translations_of_a_page_are_near_and_another_page_is_far():
    prints = {lang: fingerprint_of("markdown", text) for lang, text in TRANSLATIONS.items()}
    assert all(prints.values())
    for lang, value in prints.items():
        assert distance(value, prints["en"]) <= DOCUMENT_BITS, lang
    assert distance(fingerprint_of("markdown", OTHER_PAGE), prints["en"]) > 2 * DOCUMENT_BITS


def test_a_document_is_fingerprinted_from_what_translations_keep():
    features = document_features(TRANSLATIONS["de"])
    assert {"checkout", "Cart", "coupon", "link:https://shop.example/docs/cart.html"} <= features
    assert not {"Warenkorb", "bezahlen", "Summe"} & features  # the prose is not


def test_copied_code_is_near_and_different_code_is_far():
    body = ("def cpu_count(logical=True):\n    counts = read_proc_stat('/proc/cpuinfo')\n"
            "    if logical:\n        return len(counts.processors)\n    return len(set(counts.core_ids))\n")
    other = ("def memory_info(pid):\n    fields = read_status_file(pid)\n    rss = int(fields['VmRSS']) * 1024\n"
             "    vms = int(fields['VmSize']) * 1024\n    return MemoryInfo(rss=rss, vms=vms)\n")
    copy = fingerprint_of("python", body.replace("'/proc/cpuinfo'", "'/proc/cpuinfo' "))
    assert distance(fingerprint_of("python", body), copy) <= CODE_BITS
    assert distance(fingerprint_of("python", body), fingerprint_of("python", other)) > 2 * CODE_BITS


def test_a_chunk_with_few_features_gets_no_fingerprint():
    assert fingerprint_of("python", "def f(x):\n    return x\n") == 0
    assert fingerprint_of("markdown", "## Thanks\n\nThank you to every contributor of this project.") == 0
