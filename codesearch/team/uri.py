"""Where a team store is: `--store URI` read into what the Milvus client connects to."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

TOKEN_ENV = "CODESEARCH_MILVUS_TOKEN"
DEFAULT_PORT = 19530
SCHEMES = ("milvus", "milvus+http", "milvus+https")


class StoreUriError(ValueError):
    """A store URI that names no Milvus store; the message is the one line the user sees."""


@dataclass(frozen=True)
class StoreUri:
    """`address`: a Milvus Lite file's absolute path, or a server's http(s) URL."""

    text: str
    address: str
    lite: bool
    token: str = ""

    def __str__(self) -> str:
        return self.text


def parse_store_uri(text: str, environ: dict[str, str] | None = None) -> StoreUri:
    """`milvus:///abs/path.db` (Milvus Lite in that file), `milvus://host[:port]` (a server or
    cluster over http), `milvus+https://host[:port]`; the token comes from CODESEARCH_MILVUS_TOKEN
    (never from the URI: it would show in process lists and shell history)."""
    env = os.environ if environ is None else environ
    usage = "give milvus:///ABSOLUTE/PATH.db, milvus://HOST[:PORT] or milvus+https://HOST[:PORT]"
    parts = urlsplit(text.strip())
    if parts.scheme not in SCHEMES:
        raise StoreUriError(f"store URI {text!r} is not a Milvus store: {usage}")
    if parts.username or parts.password:
        raise StoreUriError(f"store URI {text!r} holds credentials; set {TOKEN_ENV} instead")
    token = env.get(TOKEN_ENV, "")
    if not parts.netloc:
        if parts.scheme != "milvus" or not parts.path.startswith("/") or parts.path.endswith("/"):
            raise StoreUriError(f"store URI {text!r} names no Milvus Lite file: {usage}")
        if not parts.path.endswith(".db"):
            raise StoreUriError(f"store URI {text!r}: a Milvus Lite file's name ends in .db")
        return StoreUri(text, parts.path, lite=True, token=token)
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise StoreUriError(f"store URI {text!r} has a bad port: {usage}") from None
    if parts.hostname and parts.hostname.endswith(".db"):
        raise StoreUriError(f"store URI {text!r}: a Milvus Lite file needs an absolute path, milvus:///ABSOLUTE/PATH.db")
    if not parts.hostname or parts.path not in ("", "/"):
        raise StoreUriError(f"store URI {text!r} names no Milvus server: {usage}")
    scheme = "https" if parts.scheme == "milvus+https" else "http"
    return StoreUri(text, f"{scheme}://{parts.hostname}:{port}", lite=False, token=token)
