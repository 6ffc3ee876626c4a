"""Zarr conventions a node declares (``zarr_conventions``): which ones, by what identity.

The zarr-conventions framework lets a group or array say which conventions its
attributes follow: a list under the ``zarr_conventions`` attribute of objects with
at least one of ``uuid``, ``schema_url`` and ``spec_url`` (and optionally ``name`` and
``description``). GeoZarr's ``proj:``, ``spatial:`` and ``multiscales`` are such
conventions, and readers recognise them by UUID or by name.

The rules for one declaration live here once (:func:`convention_problems`): the
validator reports every problem with its JSON pointer, :func:`parse_convention` raises
with the first, and :func:`declared_conventions` gives readers the well-formed
declarations of a node, skipping the rest.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from catalogue.errors import CatalogueError
from catalogue.model.json import short

__all__ = [
    "CONVENTION_KEYS",
    "Convention",
    "ConventionError",
    "convention_problems",
    "declared_conventions",
    "parse_convention",
]

#: The attribute that holds a node's declarations.
ATTRIBUTE: Final = "zarr_conventions"
#: The keys a declaration may have.
CONVENTION_KEYS: Final = ("uuid", "schema_url", "spec_url", "name", "description")
#: The keys that identify a convention: a declaration needs at least one.
IDENTITY_KEYS: Final = ("uuid", "schema_url", "spec_url")


class ConventionError(CatalogueError):
    """A convention declaration that is not one (the message names the value received)."""


@dataclass(frozen=True)
class Convention:
    """One declared convention, as the node wrote it."""

    uuid: str | None = None
    schema_url: str | None = None
    spec_url: str | None = None
    name: str | None = None
    description: str | None = None

    def to_dict(self) -> dict[str, str]:
        return {key: value for key, value in asdict(self).items() if value is not None}


def is_uuid(value: Any) -> bool:
    """A UUID in its canonical text form (lower case accepted, as RFC 9562 writes it)."""
    if not isinstance(value, str):
        return False
    try:
        return str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def is_url(value: Any) -> bool:
    """An absolute http(s) URL."""
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def convention_problems(entry: Any) -> list[tuple[tuple[str, ...], str]]:
    """What is wrong with one declaration: ``(pointer tokens below the entry, message)``
    pairs, in document order; empty for a well-formed declaration."""
    if not isinstance(entry, dict):
        return [((), f"expected a convention object, got {short(entry)}")]
    problems: list[tuple[tuple[str, ...], str]] = [
        ((key,), f"unexpected key {key!r} in a convention object") for key in entry if key not in CONVENTION_KEYS
    ]
    if not any(key in entry for key in IDENTITY_KEYS):
        problems.append(((), "a convention needs at least one of uuid, schema_url, spec_url"))
    if "uuid" in entry and not is_uuid(entry["uuid"]):
        problems.append((("uuid",), f"not a UUID: {short(entry['uuid'])}"))
    for key in ("schema_url", "spec_url"):
        if key in entry and not is_url(entry[key]):
            problems.append(((key,), f"not an http(s) URL: {short(entry[key])}"))
    for key in ("name", "description"):
        if key in entry and not isinstance(entry[key], str):
            problems.append(((key,), f"expected a string, got {short(entry[key])}"))
    return problems


def parse_convention(entry: Any) -> Convention:
    """One declaration as a :class:`Convention`; :class:`ConventionError` with its first problem."""
    problems = convention_problems(entry)
    if problems:
        tokens, message = problems[0]
        where = f" at {'/'.join(tokens)}" if tokens else ""
        raise ConventionError(f"convention declaration{where}: {message}")
    return Convention(**{key: entry[key] for key in CONVENTION_KEYS if key in entry})


def declared_conventions(attributes: Any) -> tuple[Convention, ...]:
    """The well-formed declarations of a node's attributes (malformed ones skipped)."""
    entries = attributes.get(ATTRIBUTE) if isinstance(attributes, dict) else None
    if not isinstance(entries, list):
        return ()
    return tuple(parse_convention(entry) for entry in entries if not convention_problems(entry))
