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

The GeoZarr conventions this catalogue understands are :data:`PROJ`, :data:`SPATIAL`
and :data:`MULTISCALES` (identities from the zarr-conventions repositories, see
``schemas/conventions/README.md``); :func:`declares` says whether a node declares one,
by UUID (the permanent identity) or by name (``"proj"`` and the older ``"proj:"``).
Their attributes are parsed in ``model/geozarr.py``.
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
    "GEOZARR_CONVENTIONS",
    "MULTISCALES",
    "PROJ",
    "SPATIAL",
    "Convention",
    "ConventionError",
    "KnownConvention",
    "convention_problems",
    "declared_conventions",
    "declares",
    "parse_convention",
    "uses",
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


@dataclass(frozen=True)
class KnownConvention:
    """A convention this catalogue interprets: its permanent UUID, the names declarations
    use for it (the drafts wrote ``"proj:"`` and ``"spatial:"``, the v0.1 releases
    ``"proj"`` and ``"spatial"``), the attribute keys it defines (a prefix such as
    ``"proj:"`` or an exact key such as ``"multiscales"``) and its bundled schema."""

    key: str
    uuid: str
    names: tuple[str, ...]
    #: Attribute keys that start with this prefix belong to the convention.
    prefix: str
    #: The bundled JSON Schema, relative to ``schemas/`` (the corrected copy).
    schema: str
    #: The schema URL the bundled copy was published under.
    schema_url: str

    def owns(self, key: str) -> bool:
        """Whether an attribute key is one of this convention's."""
        return key.startswith(self.prefix) if self.prefix.endswith(":") else key == self.prefix

    def matches(self, convention: Convention) -> bool:
        """A declaration names this convention by UUID, or (without a UUID) by name."""
        if convention.uuid is not None:
            return convention.uuid.lower() == self.uuid
        return convention.name in self.names


PROJ: Final = KnownConvention(
    key="proj", uuid="f17cb550-5864-4468-aeb7-f3180cfb622f", names=("proj", "proj:"), prefix="proj:",
    schema="conventions/proj.json",
    schema_url="https://raw.githubusercontent.com/zarr-conventions/proj/refs/tags/v1/schema.json")
SPATIAL: Final = KnownConvention(
    key="spatial", uuid="689b58e2-cf7b-45e0-9fff-9cfc0883d6b4", names=("spatial", "spatial:"), prefix="spatial:",
    schema="conventions/spatial.json",
    schema_url="https://raw.githubusercontent.com/zarr-conventions/spatial/refs/tags/v0.1/schema.json")
MULTISCALES: Final = KnownConvention(
    key="multiscales", uuid="d35379db-88df-4056-af3a-620245f8e347", names=("multiscales",), prefix="multiscales",
    schema="conventions/multiscales.json",
    schema_url="https://raw.githubusercontent.com/zarr-conventions/multiscales/refs/tags/v1/schema.json")
#: The GeoZarr conventions (the December 2025 reset of the GeoZarr draft).
GEOZARR_CONVENTIONS: Final = (PROJ, SPATIAL, MULTISCALES)


def declares(attributes: Any, known: KnownConvention) -> bool:
    """Whether a node's attributes declare ``known`` in ``zarr_conventions``."""
    return any(known.matches(convention) for convention in declared_conventions(attributes))


def uses(attributes: Any, known: KnownConvention) -> list[str]:
    """The attribute keys of ``known`` a node's attributes hold, in document order."""
    if not isinstance(attributes, dict):
        return []
    return [key for key in attributes if isinstance(key, str) and known.owns(key)]
