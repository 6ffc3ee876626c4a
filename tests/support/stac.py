"""pystac validation with no network: the STAC core schemas pystac ships, the extension
schemas the catalogue bundles (``schemas/stac/``) and the PROJJSON schema pyproj ships.

pystac's :class:`~pystac.validation.JsonSchemaSTACValidator` fetches any schema it does
not hold over HTTP; :class:`OfflineValidator` holds every schema a catalogue collection
needs and refuses to fetch, so a test that validates can never pass by reaching the web
nor fail because it cannot.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pyproj.datadir
from pystac.validation import JsonSchemaSTACValidator

from catalogue.rdf.stac import EXTENSIONS
from catalogue.resources import schema_text

PROJJSON = "https://proj.org/schemas/v0.7/projjson.schema.json"


class SchemaNotBundled(LookupError):
    """A schema the validator would have fetched: bundle it, never download it."""


class OfflineValidator(JsonSchemaSTACValidator):
    def __init__(self) -> None:
        super().__init__()
        for uri, name in EXTENSIONS.items():
            self.schema_cache[uri] = json.loads(schema_text(name))
        projjson = pathlib.Path(pyproj.datadir.get_data_dir()) / "projjson.schema.json"
        self.schema_cache[PROJJSON] = json.loads(projjson.read_text(encoding="utf-8"))
        assert self.schema_cache[PROJJSON]["$id"] == PROJJSON, "pyproj's PROJJSON schema is another version"

    def _get_schema(self, schema_uri: str) -> dict[str, Any]:
        if schema_uri not in self.schema_cache:
            raise SchemaNotBundled(f"{schema_uri} is not bundled (validation never fetches)")
        return self.schema_cache[schema_uri]
