"""Dependent arrays: chunk keys of a primary array and its dependents must not collide.

The convention stores every dependent array's chunks under the primary
array's prefix, so two arrays whose chunk key encodings can produce the same
key would overwrite each other's chunks ("Implementation notes: Chunking").
Each array's keys are modelled as prefix + base key + suffix, where the base
key is the v3 ``default`` (``c/0/0``) or ``v2`` (``0.0``) form; a collision
is a chunk of one array whose key decodes as a chunk inside the other
array's grid. Checked chunks: the first, the last, and each axis' first step
(keys of the same encoding family differ only in their numbers, so these
decide).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalogue.model.nodes import Hierarchy, Node
from catalogue.validate.context import META, NodeChecker


@dataclass(frozen=True)
class KeyScheme:
    base: str  # "default" or "v2"
    separator: str
    prefix: str
    suffix: str
    grid: tuple[int, ...]  # chunks per dimension

    def key(self, index: tuple[int, ...]) -> str:
        if self.base == "default":
            core = "c" + "".join(self.separator + str(i) for i in index) if index else "c"
        else:
            core = self.separator.join(map(str, index)) if index else "0"
        return self.prefix + core + self.suffix

    def decode(self, key: str) -> tuple[int, ...] | None:
        if not (key.startswith(self.prefix) and key.endswith(self.suffix)):
            return None
        core = key[len(self.prefix): len(key) - len(self.suffix)]
        rank = len(self.grid)
        if self.base == "default":
            if rank == 0:
                return () if core == "c" else None
            if not core.startswith("c" + self.separator):
                return None
            core = core[2:]
        elif rank == 0:
            return () if core == "0" else None
        parts = core.split(self.separator)
        if len(parts) != rank or not all(p.isdigit() and (p == "0" or not p.startswith("0")) for p in parts):
            return None
        index = tuple(int(p) for p in parts)
        return index if all(i < n for i, n in zip(index, self.grid, strict=True)) else None

    def samples(self) -> list[tuple[int, ...]]:
        if any(n == 0 for n in self.grid):
            return []
        rank = len(self.grid)
        out = {tuple(0 for _ in self.grid), tuple(n - 1 for n in self.grid)}
        for d in range(min(rank, 32)):
            if self.grid[d] > 1:
                out.add(tuple(1 if e == d else 0 for e in range(rank)))
        return sorted(out)


def key_scheme(node: Node) -> KeyScheme | None:
    """The chunk key scheme of an array, or None when its metadata cannot say (reported elsewhere)."""
    meta = node.metadata
    shape = meta.get("shape")
    if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
        return None
    if node.zarr_format == 2:
        chunks = meta.get("chunks")
        sep = meta.get("dimension_separator", ".")
        encoding: Any = {"name": "v2", "configuration": {"separator": sep}}
    else:
        grid = meta.get("chunk_grid")
        conf = grid.get("configuration") if isinstance(grid, dict) else None
        chunks = conf.get("chunk_shape") if isinstance(conf, dict) else None
        encoding = meta.get("chunk_key_encoding")
    if not (isinstance(chunks, list) and len(chunks) == len(shape) and all(type(n) is int and n >= 1 for n in chunks)):
        return None
    grid_counts = tuple(-(-s // c) for s, c in zip(shape, chunks, strict=True))  # exact for huge ints
    parsed = _encoding(encoding)
    if parsed is None:
        return None
    base, sep, prefix, suffix = parsed
    return KeyScheme(base, sep, prefix, suffix, grid_counts)


def _encoding(encoding: Any, depth: int = 0) -> tuple[str, str, str, str] | None:
    if isinstance(encoding, str):
        encoding = {"name": encoding}
    if not isinstance(encoding, dict) or depth > 4:
        return None
    name = encoding.get("name")
    conf = encoding.get("configuration") or {}
    if not isinstance(conf, dict):
        return None
    if name in ("default", "v2"):
        sep = conf.get("separator", "/" if name == "default" else ".")
        return (name, sep, "", "") if sep in ("/", ".") else None
    if name in ("prefix", "suffix"):
        affix = conf.get(name)
        if not isinstance(affix, str):
            return None
        base = _encoding(conf.get("base_encoding", "default"), depth + 1)
        if base is None:
            return None
        b, sep, p, s = base
        return (b, sep, affix + p, s) if name == "prefix" else (b, sep, p, s + affix)
    return None


def check_collisions(h: Hierarchy, checkers: dict[str, NodeChecker]) -> None:
    """Report every dependent array whose chunk keys collide with an earlier array of its family."""
    for primary in h.nodes.values():
        if not primary.dependents:
            continue
        family = [primary] + [h.nodes[p] for p in primary.dependents if p in h.nodes]
        schemes = [(n, key_scheme(n)) for n in family]
        for j in range(1, len(schemes)):
            node, scheme = schemes[j]
            if scheme is None:
                continue
            for other, other_scheme in schemes[:j]:
                if other_scheme is None:
                    continue
                key = _collision(scheme, other_scheme)
                if key is not None:
                    c = checkers[node.path]
                    where = ("chunk_key_encoding",) if "chunk_key_encoding" in node.declared_keys else ()
                    c.add("dependent.chunk-key-collision", META, where,
                          f"chunk key {key!r} of dependent array {node.name!r} is also a chunk key of "
                          f"{other.name or '(root)'!r}; give it a distinct chunk key encoding (e.g. a prefix)")
                    break


def _collision(a: KeyScheme, b: KeyScheme) -> str | None:
    for index in a.samples():
        key = a.key(index)
        if b.decode(key) is not None:
            return key
    for index in b.samples():
        key = b.key(index)
        if a.decode(key) is not None:
            return key
    return None
