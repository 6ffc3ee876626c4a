"""The JSON-LD contexts the catalogue ships, served to pyld without network.

pyld fetches remote contexts by default. The catalogue never lets it: a
document loader answers the known context IRIs from the bundled files and
refuses everything else, so converting a hostile document cannot make the
harvester talk to the network.
"""

from __future__ import annotations

from typing import Any

from catalogue.resources import (
    CATALOGUE_CONTEXT,
    ILIAD_CONTEXT,
    ILIAD_CONTEXT_FIXED,
    context_document,
)

#: Where the catalogue context is published (and how documents refer to it).
CATALOGUE_CONTEXT_IRI = "https://w3id.org/zarr-catalogue/context.jsonld"
#: The building block's own context URL, as its JSON-LD example uses it.
ILIAD_CONTEXT_IRI = (
    "https://ogcincubator.github.io/iliad-apis-features/build/annotated/hosted/"
    "iliad/api/features/zarr_array_metadata/context.jsonld"
)
#: The same context with its ``http:/`` IRIs repaired (a catalogue-local IRI).
ILIAD_CONTEXT_FIXED_IRI = "https://w3id.org/zarr-catalogue/iliad-context-fixed.jsonld"

_BUNDLED = {
    CATALOGUE_CONTEXT_IRI: CATALOGUE_CONTEXT,
    ILIAD_CONTEXT_IRI: ILIAD_CONTEXT,
    ILIAD_CONTEXT_FIXED_IRI: ILIAD_CONTEXT_FIXED,
}


def document_loader(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """pyld document loader: bundled contexts only, never the network."""
    name = _BUNDLED.get(url)
    if name is None:
        from pyld.jsonld import JsonLdError  # pyld is calling: it is imported already

        raise JsonLdError(
            f"refusing to load remote JSON-LD document {url!r}: only bundled contexts are used",
            "jsonld.LoadDocumentError",
            code="loading document failed",
        )
    return {"contextUrl": None, "documentUrl": url, "document": context_document(name)}


def catalogue_context() -> dict[str, Any]:
    """The ``@context`` value of the catalogue context."""
    return context_document(CATALOGUE_CONTEXT)["@context"]


def export_context() -> dict[str, Any]:
    """The context JSON-LD exports are compacted with.

    The same terms as the catalogue context, except that rdf:JSON-typed terms
    (attributes, configuration, extra_fields) are typed ``@json``: pyld's
    fromRDF turns rdf:JSON literals into native JSON values, and only a
    ``@json`` term compacts those, so exported attributes read as JSON
    objects rather than escaped strings. Ingest keeps ``rdf:JSON`` because
    pyld canonicalises ``@json`` values on the way into RDF (see convert).
    """
    ctx = dict(catalogue_context())
    for term, definition in ctx.items():
        if isinstance(definition, dict) and definition.get("@type") == "rdf:JSON":
            ctx[term] = {**definition, "@type": "@json"}
    return ctx

