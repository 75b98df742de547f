"""The address of a daemon's HTTP front-end, and the rule it starts under: never beyond loopback
without a token (the index reveals the source code). Checked by whoever starts a daemon, before
it runs, and by the daemon's process itself."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

TOKEN_ENV = "CODESEARCH_HTTP_TOKEN"
DEFAULT_HOST = "127.0.0.1"


class HttpConfigError(ValueError):
    """An address or token the server refuses to start with."""


@dataclass(frozen=True)
class HttpAddress:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def is_loopback(host: str) -> bool:
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_address(text: str) -> HttpAddress:
    """`PORT`, `HOST:PORT` or `[V6]:PORT`; the host defaults to 127.0.0.1."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise HttpConfigError(f"--http wants [HOST:]PORT with a port from 0 to 65535, not {text!r}")
    return HttpAddress(host, int(port))


def check_exposure(address: HttpAddress, token: str | None) -> None:
    """Refuse to serve beyond loopback without a token: the index reveals the source code."""
    if not address.loopback and not token:
        raise HttpConfigError(f"refusing to serve HTTP on {address.host}, which is not loopback, without a token; "
                              f"set {TOKEN_ENV} or pass --http-token")
