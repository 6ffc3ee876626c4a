"""The server caps glibc's malloc arenas (catalogue/web/http/memory.py)."""

from __future__ import annotations

import platform

import pytest

from catalogue.web.http.memory import limit_arenas


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc arenas are glibc's")
def test_arenas_are_capped_unless_the_operator_said(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_arenas(2)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert not limit_arenas(2)  # glibc read the operator's value at start: it stands
