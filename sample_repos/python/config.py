"""Configuration loading helpers for the inventory service."""

import os

DEFAULTS = {"max_items": 100, "currency": "USD"}


def parse_config(path: str) -> dict:
    """Parse a simple key=value config file, falling back to defaults."""
    settings = dict(DEFAULTS)
    if not os.path.exists(path):
        return settings
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            key, value = _split_line(line)
            if key:
                settings[key] = _coerce(value)
    return settings


def _split_line(line: str) -> tuple:
    """Split one config line into a (key, value) pair."""
    line = line.strip()
    if not line or line.startswith("#") or "=" not in line:
        return None, None
    key, value = line.split("=", 1)
    return key.strip(), value.strip()


def _coerce(value: str):
    """Convert numeric strings to int, leaving other strings untouched."""
    return int(value) if value.isdigit() else value


def clamp(value: float, low: float, high: float) -> float:
    """Restrict value to the closed interval [low, high]."""
    return max(low, min(value, high))
