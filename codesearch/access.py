"""What a client may read or search: one rule for `read`, `grep`, snippets and every front-end.

Refused: anything in a `.git` folder at any depth (remote URLs with tokens, hooks, a nested
repository's objects), anything in an index folder (logs, the catalog), and a file that the
repository ignores and whose name says it holds secrets (`.env`, private keys, credentials). A
committed file is readable by whoever has the repository already; an ignored one exists only on
this machine, so an agent or a web page reaching the daemon must not be handed it.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from .ingest.ignore import IgnoreRules
from .paths import INDEX_DIR_NAME

PRIVATE_FOLDERS = frozenset({".git", INDEX_DIR_NAME})  # refusal() tests for each name as a substring first
# names that hold secrets by convention (dotenv files, private keys, key stores, credential files)
SECRET_NAME = re.compile(
    r"\.env(\..+)?|.+\.(pem|key|p12|pfx|jks|keystore|kdbx|tfvars|tfstate)|id_(rsa|dsa|ecdsa|ed25519)"
    r"|\.(netrc|pgpass|htpasswd|npmrc|pypirc|git-credentials)|credentials(\.json)?|secrets?\.(json|ya?ml|toml)",
    re.IGNORECASE)


# every SECRET_NAME starts or ends so: a cheap test before the pattern (grep asks for every file)
SECRET_STARTS = (".", "id_", "credentials", "secret")
SECRET_ENDS = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".tfvars", ".tfstate")


def looks_like_secret(name: str) -> bool:
    folded = name.lower()
    if not folded.startswith(SECRET_STARTS) and not folded.endswith(SECRET_ENDS):
        return False
    return SECRET_NAME.fullmatch(name) is not None


class AccessRule:
    """The rule for one repository (`root` resolved, `index_dir` where its index lives)."""

    def __init__(self, root: Path, index_dir: Path):
        self.root = root
        self.index_rel = index_dir.relative_to(root).as_posix() if index_dir.is_relative_to(root) else None

    @cached_property
    def _ignore(self) -> IgnoreRules:
        return IgnoreRules(self.root)

    def refusal(self, rel: str) -> str | None:
        """Why a client may not read `rel` (indexed form, relative to the root), or None."""
        if (".git" in rel or INDEX_DIR_NAME in rel) and PRIVATE_FOLDERS.intersection(rel.split("/")):
            return "a private folder (.git or an index)"  # the substring test first: grep asks per file
        if self.index_rel and (rel == self.index_rel or rel.startswith(self.index_rel + "/")):
            return "the index folder"
        if looks_like_secret(rel[rel.rfind("/") + 1:]) and self._ignore.is_ignored_anywhere(rel, is_dir=False):
            return "an ignored file that may hold secrets"
        return None

    def rg_exclusions(self) -> list[str]:
        """ripgrep globs that keep private folders out of a walk. They go after a client's own
        globs: a later glob wins, so `--glob '**'` cannot whitelist them back."""
        globs = [f"!{name}" for name in sorted(PRIVATE_FOLDERS)]
        if self.index_rel and self.index_rel.rsplit("/", 1)[-1] not in PRIVATE_FOLDERS:
            globs.append(f"!/{self.index_rel}/")
        return [arg for glob in globs for arg in ("--glob", glob)]
