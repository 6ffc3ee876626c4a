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

from catalogue.model.chunk_keys import KeyEncoding, UnsupportedEncoding
from catalogue.model.nodes import Hierarchy, Node
from catalogue.validate.context import META, NodeChecker


@dataclass(frozen=True)
class KeyScheme:
    """An array's chunk keys: its encoding and its chunk grid (chunks per dimension)."""

    encoding: KeyEncoding
    grid: tuple[int, ...]

    def key(self, index: tuple[int, ...]) -> str:
        return self.encoding.key(index)

    def decode(self, key: str) -> tuple[int, ...] | None:
        """The in-grid index a key stands for, or None."""
        index = self.encoding.decode(key, len(self.grid))
        if index is None or not all(i < n for i, n in zip(index, self.grid, strict=True)):
            return None
        return index

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
    try:
        if node.zarr_format == 2:
            chunks = meta.get("chunks")
            encoding = KeyEncoding.from_v2(meta.get("dimension_separator", "."))
        else:
            grid = meta.get("chunk_grid")
            conf = grid.get("configuration") if isinstance(grid, dict) else None
            chunks = conf.get("chunk_shape") if isinstance(conf, dict) else None
            encoding = KeyEncoding.from_v3(meta.get("chunk_key_encoding"))
    except UnsupportedEncoding:
        return None
    if not (isinstance(chunks, list) and len(chunks) == len(shape) and all(type(n) is int and n >= 1 for n in chunks)):
        return None
    return KeyScheme(encoding, tuple(-(-s // c) for s, c in zip(shape, chunks, strict=True)))  # exact for huge ints


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
