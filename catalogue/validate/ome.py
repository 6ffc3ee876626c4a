"""OME-Zarr (NGFF) metadata against the NGFF JSON Schemas of its version.

The schemas of NGFF 0.4 and 0.5 are bundled verbatim (``schemas/ngff/``, W3C Software and
Document License), with their ``$id`` URLs resolved from the bundle, so validation never
fetches anything. Which schemas apply follows the keys present, as the spec's
``ome_zarr.schema`` dispatches: ``multiscales`` (image), ``image-label`` (label),
``plate``, ``well``, ``bioformats2raw.layout``. NGFF 0.4 validates the group's
attributes (``.zattrs``) themselves, 0.5 the whole ``attributes`` object (with its
``ome`` key). Versions without bundled schemas get one ``ome.version`` warning.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING

from catalogue.model.ome import declared_version, ome_attributes
from catalogue.resources import schema_text
from catalogue.validate.context import ATTRS, NodeChecker
from catalogue.validate.schemas import compiled_twin, schema_errors

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = ["VERSIONS", "check_ome"]

VERSIONS = ("0.4", "0.5")
_SCHEMAS = {"multiscales": "image", "image-label": "label", "plate": "plate", "well": "well",
            "bioformats2raw.layout": "bf2raw"}
_FILES = {"0.4": ("image", "label", "plate", "well", "bf2raw", "ome", "strict_image", "strict_label",
                  "strict_plate", "strict_well"),
          "0.5": ("_version", "image", "label", "plate", "well", "bf2raw", "ome", "ome_zarr", "strict_image",
                  "strict_label", "strict_plate", "strict_well")}


def check_ome(c: NodeChecker) -> None:
    attributes = c.node.attributes
    found = ome_attributes(attributes)
    if found is None or c.node.kind != "group":
        return
    prefix, ome = found
    if not set(ome) & set(_SCHEMAS):  # a labels group lists its label images: no schema of its own
        return
    version = declared_version(prefix, ome)
    if version not in VERSIONS:
        c.add("ome.version", ATTRS, (*prefix, "version") if prefix else (),
              f"OME-Zarr version {version!r}: only the NGFF {' and '.join(VERSIONS)} schemas are bundled")
        return
    if version == "0.5" and not prefix:
        c.add("ome.schema", ATTRS, (), "NGFF 0.5 metadata belongs inside the 'ome' attribute")
        return
    document = attributes
    for key, name in _SCHEMAS.items():
        if key not in ome:
            continue
        for tokens, _keyword, message in schema_errors(_validator(str(version), name), document):
            c.add("ome.schema", ATTRS, tokens, f"NGFF {version} {name}: {message}")


@cache
def _validator(version: str, name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    documents = [json.loads(schema_text(f"ngff/{version}/{file}.schema")) for file in _FILES[version]]
    registry = Registry().with_resources(
        (d["$id"], Resource.from_contents(d, default_specification=DRAFT202012)) for d in documents)
    schema = json.loads(schema_text(f"ngff/{version}/{name}.schema"))
    validator = Draft202012Validator(schema, registry=registry)
    compiled_twin(validator, [(d["$id"], d) for d in documents])  # the twin, with the same documents
    return validator
