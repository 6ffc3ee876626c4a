"""Access to the project's seed documents in ../shared/seeds (tests skip without them)."""

from __future__ import annotations

import json

import pytest

from tests.support.paths import SEEDS


def seed_text(name: str) -> str:
    path = SEEDS / name
    if not path.is_file():
        pytest.skip(f"seed document {path} is absent (the shared/ folder is not beside the repository)")
    return path.read_text(encoding="utf-8")


def json_blocks(text: str) -> list:
    """Every top-level JSON object printed in a seed text, in order (invalid ones skipped)."""
    decoder = json.JSONDecoder()
    found, i = [], 0
    while (start := text.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        found.append(value)
        i = end
    return found
