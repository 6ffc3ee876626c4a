"""Chunk key encodings: grid index <-> key, one key or a whole grid at a time.

Encodings:

* v3 ``default``: ``c`` then, per dimension, the separator (``/`` by default)
  and the index (``c/1/23/45``); a 0-d array's only key is ``c``.
* v3 ``v2`` and Zarr v2 (``dimension_separator``): indices joined by the
  separator (``.`` by default), ``0`` for a 0-d array.
* ``prefix`` / ``suffix`` (proposed with the dependent-arrays convention):
  configuration ``prefix`` or ``suffix`` plus ``base_encoding`` (one of the
  above, as a name or a ``{name, configuration}`` object); the key is
  ``prefix + base key`` or ``base key + suffix``. They nest.

Keys of a selection are built per dimension and concatenated as an outer
product of NumPy object arrays: a million keys take a fraction of a second,
where formatting them one by one takes seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalogue.errors import CatalogueError

SEPARATORS = ("/", ".")


class UnsupportedEncoding(CatalogueError):
    """A chunk key encoding the catalogue cannot produce keys for."""


@dataclass(frozen=True)
class KeyEncoding:
    base: str  # "default" or "v2"
    separator: str
    prefix: str = ""
    suffix: str = ""

    # ------------------------------------------------------------ building
    @classmethod
    def from_v3(cls, encoding: Any, _depth: int = 0) -> KeyEncoding:
        """From a v3 ``chunk_key_encoding`` value."""
        if isinstance(encoding, str):
            encoding = {"name": encoding}
        if not isinstance(encoding, dict) or _depth > 8:
            raise UnsupportedEncoding(f"malformed chunk key encoding {encoding!r}")
        name = encoding.get("name")
        conf = encoding.get("configuration") or {}
        if not isinstance(conf, dict):
            raise UnsupportedEncoding(f"malformed chunk key encoding configuration {conf!r}")
        if name in ("default", "v2"):
            separator = conf.get("separator", "/" if name == "default" else ".")
            if separator not in SEPARATORS:
                raise UnsupportedEncoding(f"chunk key separator {separator!r} is not '/' or '.'")
            return cls(name, separator)
        if name in ("prefix", "suffix"):
            affix = conf.get(name)
            if not isinstance(affix, str):
                raise UnsupportedEncoding(f"the {name!r} chunk key encoding needs a string {name!r}")
            base = cls.from_v3(conf.get("base_encoding", "default"), _depth + 1)
            if name == "prefix":
                return cls(base.base, base.separator, affix + base.prefix, base.suffix)
            return cls(base.base, base.separator, base.prefix, base.suffix + affix)
        raise UnsupportedEncoding(f"unknown chunk key encoding {name!r}")

    @classmethod
    def from_v2(cls, dimension_separator: Any = ".") -> KeyEncoding:
        """From a v2 ``.zarray``'s ``dimension_separator`` (``.`` when absent)."""
        if dimension_separator not in SEPARATORS:
            raise UnsupportedEncoding(f"dimension_separator {dimension_separator!r} is not '/' or '.'")
        return cls("v2", dimension_separator)

    # -------------------------------------------------------------- keys
    def key(self, index: Sequence[int]) -> str:
        if self.base == "default":
            core = "c" + "".join(self.separator + str(int(i)) for i in index)
        else:
            core = self.separator.join(str(int(i)) for i in index) if len(index) else "0"
        return self.prefix + core + self.suffix

    def grid_keys(self, axes: Sequence[np.ndarray]) -> np.ndarray:
        """Keys of the cartesian product of per-dimension chunk indices, in C order (object array)."""
        if not axes:
            return np.array([self.key(())], dtype=object)
        out = np.array([self.prefix + ("c" if self.base == "default" else "")], dtype=object)
        for d, axis in enumerate(axes):
            lead = "" if (self.base == "v2" and d == 0) else self.separator
            parts = np.array([lead + str(int(i)) for i in axis], dtype=object)
            out = (out[:, None] + parts[None, :]).ravel()
        if self.suffix:
            out = out + self.suffix
        return out

    def decode(self, key: str, rank: int) -> tuple[int, ...] | None:
        """The grid index a key stands for (no bounds check), or None if this encoding cannot produce it."""
        if not (key.startswith(self.prefix) and key.endswith(self.suffix)):
            return None
        core = key[len(self.prefix): len(key) - len(self.suffix)]
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
        return tuple(int(p) for p in parts)

    def as_v3(self) -> dict[str, Any]:
        """The base encoding as v3 metadata (prefix and suffix are not expressible there)."""
        return {"name": self.base, "configuration": {"separator": self.separator}}
