"""A validation report as SHACL triples, stored in the hierarchy's graph.

The report follows the SHACL validation report vocabulary, so SHACL tools and
plain SPARQL read it alike::

    <root> zarr:validationReport <root#validation> .
    <root#validation> a sh:ValidationReport ; sh:conforms false ;
        zarr:validationProfile "corrected" ; dct:created "..."^^xsd:dateTime ;
        sh:result [ a sh:ValidationResult ;
            sh:focusNode <node> ; sh:resultPath zarr:fillValue ;
            sh:resultSeverity sh:Violation ; sh:resultMessage "..." ;
            sh:sourceConstraintComponent rule:v3.fill_value ; zarr:rule "v3.fill_value" ;
            zarr:document <file> ; zarr:jsonPointer "/fill_value" ] .

and every catalogued node gets ``zarr:valid true|false``. ``sh:conforms`` is
SHACL's: true only when there are no results at all (infos included).
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

from rdflib import RDF, SH, XSD, BNode, Literal, URIRef
from rdflib.namespace import DCTERMS

from catalogue.model.nodes import Hierarchy
from catalogue.rdf.convert import Triple
from catalogue.rdf.vocabulary import ZARR
from catalogue.resources import CATALOGUE_CONTEXT, context_document
from catalogue.validate.findings import Report
from catalogue.validate.rules import RULES, Severity

SEVERITY = {Severity.ERROR: SH.Violation, Severity.WARNING: SH.Warning, Severity.INFO: SH.Info}


@cache
def key_properties() -> dict[str, URIRef]:
    """Metadata key -> the property the catalogue context maps it to (for sh:resultPath)."""
    ctx = context_document(CATALOGUE_CONTEXT)["@context"]
    prefixes = {k: v for k, v in ctx.items() if isinstance(v, str) and v.endswith(("#", "/"))}
    out: dict[str, URIRef] = {}
    for key, value in ctx.items():
        iri = value if isinstance(value, str) else value.get("@id") if isinstance(value, dict) else None
        if not iri or key.startswith("@") or key in prefixes or iri == "rdf:type":
            continue
        prefix, _, local = iri.partition(":")
        if prefix in prefixes:
            out[key] = URIRef(prefixes[prefix] + local)
    return out


def report_iri(h: Hierarchy) -> URIRef:
    return URIRef(h.url + "#validation")


def report_triples(report: Report, h: Hierarchy, catalogued: set[str], *, now: datetime | None = None) -> list[Triple]:
    """The report and the zarr:valid flags of the ``catalogued`` node paths."""
    root = URIRef(h.url)
    rep = report_iri(h)
    created = (now or datetime.now(UTC)).replace(microsecond=0)
    triples: list[Triple] = [
        (root, ZARR.validationReport, rep),
        (rep, RDF.type, SH.ValidationReport),
        (rep, SH.conforms, Literal(not report.findings)),
        (rep, ZARR.validationProfile, Literal(report.profile)),
        (rep, DCTERMS.created, Literal(created.isoformat().replace("+00:00", "Z"), datatype=XSD.dateTime, normalize=False)),
    ]
    props = key_properties()
    for f in report.findings:
        r = BNode()
        triples += [
            (rep, SH.result, r),
            (r, RDF.type, SH.ValidationResult),
            (r, SH.focusNode, URIRef(h.iri(f.path))),
            (r, SH.resultSeverity, SEVERITY[f.severity]),
            (r, SH.resultMessage, Literal(f.message)),
            (r, SH.sourceConstraintComponent, RULES[f.rule].iri),
            (r, ZARR.rule, Literal(f.rule)),
            (r, ZARR.document, URIRef(f.file)),
            (r, ZARR.jsonPointer, Literal(f.pointer)),
        ]
        if f.key in props:
            triples.append((r, SH.resultPath, props[f.key]))
    invalid = report.invalid_paths()
    for path in catalogued:
        triples.append((URIRef(h.iri(path)), ZARR.valid, Literal(path not in invalid)))
    return triples
