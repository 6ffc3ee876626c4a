"""Contexts and ontology: shipped, consistent, and faithful to the seeds."""

from __future__ import annotations

import json

from click.testing import CliRunner
from rdflib import OWL, RDF, RDFS, Graph, URIRef

from catalogue.cli import main
from catalogue.rdf.contexts import catalogue_context
from catalogue.rdf.vocabulary import ZARR
from catalogue.resources import (
    ILIAD_CONTEXT,
    ILIAD_CONTEXT_FIXED,
    context_document,
    context_text,
    ontology_turtle,
)
from tests.support.seeds import seed_text

REQUIRED_TERMS = ["Group", "Array", "member", "path", "zarrFormat", "shape", "chunkShape", "dataType",
                  "dimensionNames", "fillValue", "codecs", "chunkKeyEncoding", "attributes"]


def ontology() -> Graph:
    return Graph().parse(data=ontology_turtle(), format="turtle")


def test_required_terms_are_defined():
    g = ontology()
    for name in REQUIRED_TERMS:
        assert (ZARR[name], RDF.type, None) in g, name


def test_every_vocabulary_term_has_label_and_comment():
    g = ontology()
    terms = {s for s in g.subjects(RDF.type, None) if str(s).startswith(str(ZARR))}
    used = {URIRef(str(ZARR) + d.split(":", 1)[1]) for d in _context_iris() if d.startswith("zarr:")}
    assert used <= terms, used - terms
    for term in terms - {URIRef(str(ZARR))}:
        assert g.value(term, RDFS.label) is not None, term
        assert g.value(term, RDFS.comment) is not None, term
        assert g.value(term, RDFS.isDefinedBy) == URIRef(str(ZARR)), term
    assert (URIRef(str(ZARR)), RDF.type, OWL.Ontology) in g


def _context_iris() -> set[str]:
    out = set()
    for definition in catalogue_context().values():
        if isinstance(definition, str):
            out.add(definition)
        elif isinstance(definition, dict) and "@id" in definition:
            out.add(definition["@id"])
    return out


def test_context_covers_v2_and_v3_metadata_keys():
    ctx = catalogue_context()
    v3 = {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value",
          "codecs", "attributes", "storage_transformers", "dimension_names", "name", "configuration", "members"}
    v2 = {"zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters",
          "dimension_separator", "attributes"}
    assert v3 | v2 <= set(ctx)


def test_iliad_context_is_the_seed_verbatim():
    seed = seed_text("geozarr-zarr-array-metadata-building-block.txt")
    block = seed[seed.index("# JSON-LD Context"):]
    start = block.index("```jsonld\n") + len("```jsonld\n")
    verbatim = block[start:block.index("```", start)]
    assert context_text(ILIAD_CONTEXT) == verbatim
    assert "http:/w3id.org/" in verbatim


def test_fixed_iliad_context_differs_only_in_iris():
    fixed = json.dumps(context_document(ILIAD_CONTEXT_FIXED))
    verbatim = json.dumps(context_document(ILIAD_CONTEXT))
    assert "http:/w3id.org" not in fixed.replace("http://w3id.org", "")
    assert fixed == verbatim.replace("http:/w3id.org/", "http://w3id.org/")


def test_vocab_command_prints_the_ontology():
    for fmt, parse_as in (("turtle", "turtle"), ("nt", "nt"), ("json-ld", "json-ld")):
        result = CliRunner().invoke(main, ["vocab", "--format", fmt], catch_exceptions=False)
        assert result.exit_code == 0
        assert len(Graph().parse(data=result.stdout, format=parse_as)) == len(ontology())


def test_every_term_the_code_writes_is_in_the_ontology():
    """``ZARR.name`` in the package's source: each one defined (with label and comment, above)."""
    import re

    from tests.support.paths import REPO

    used = {name for path in (REPO / "catalogue").rglob("*.py")
            for name in re.findall(r"\bZARR\.([A-Za-z_]\w*)", path.read_text(encoding="utf-8"))}
    defined = {str(s)[len(str(ZARR)):] for s in ontology().subjects(RDF.type, None) if str(s).startswith(str(ZARR))}
    assert used and used - {"term"} <= defined, sorted(used - defined)
