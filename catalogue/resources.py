"""Access to the files shipped with the package: contexts, ontology, schemas.

They live in the top-level ``contexts/`` and ``schemas/`` folders of the source
tree and are installed as the packages ``catalogue.contexts`` and
``catalogue.schemas`` (see pyproject), so ``importlib.resources`` finds them in
an editable install, a wheel and a zip alike.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

CATALOGUE_CONTEXT = "catalogue.jsonld"
ILIAD_CONTEXT = "iliad-zarr-array-metadata.jsonld"
ILIAD_CONTEXT_FIXED = "iliad-zarr-array-metadata.fixed.jsonld"
ONTOLOGY = "zarr.ttl"


def context_text(name: str) -> str:
    """The text of a shipped file in ``contexts/``."""
    return files("catalogue.contexts").joinpath(name).read_text(encoding="utf-8")


@cache
def context_document(name: str) -> dict[str, Any]:
    """A shipped JSON-LD context document, parsed once per process."""
    return json.loads(context_text(name))


def ontology_turtle() -> str:
    """The catalogue ontology in Turtle."""
    return context_text(ONTOLOGY)


def schema_text(name: str) -> str:
    """The text of a shipped file in ``schemas/``."""
    return files("catalogue.schemas").joinpath(name).read_text(encoding="utf-8")
