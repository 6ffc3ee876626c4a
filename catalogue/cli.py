"""The ``catalogue`` command: a thin layer over ``catalogue.api``.

Exit codes: 0 success, 1 a data or harvest error (the catalogue is left as it
was, or with only the good nodes replaced), 2 a usage error (bad option,
source or IRI that does not exist).
"""

# Why this module is longer than 600 lines: it is the one place where the command line
# is declared, one click command per verb (more than twenty), each a shell of at most
# a screen over one library call; splitting the verbs over modules would scatter the
# command's help and options without making any verb simpler.

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from catalogue.errors import CatalogueError, display_location
from catalogue.validate import DEFAULT_PROFILE, PROFILES

DB_HELP = "Catalogue database: a file path or SQLAlchemy URL [env CATALOGUE_DB; default ./catalogue.db]."


def _fail(exc: CatalogueError) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(exc.exit_code)


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn catalogue errors into one line on stderr and their exit code (:func:`catalogue.api.classify_error`)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from catalogue.api import classify_error

        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            sys.exit(0)
        except Exception as exc:
            error = classify_error(exc)
            if error is None:
                raise
            _fail(error)

    return wrapper


def db_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--db", "db", envvar="CATALOGUE_DB", default=None, help=DB_HELP)(func)


def _open(db: str | None):
    from catalogue.api import open as open_catalogue

    return open_catalogue(db)


def _output(path: str | None):
    return click.open_file(path or "-", "w", encoding="utf-8", atomic=bool(path))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="zarr-catalogue")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug).")
def main(verbose: int) -> None:
    """A linked-data catalogue of Zarr hierarchies: harvest, query, export."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s", stream=sys.stderr)


@main.command()
@click.argument("sources", nargs=-1, metavar="[SOURCE]...")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None, metavar="SOURCES.TOML",
              help="Harvest the [[source]] entries of this file too (docs/harvesting.md).")
@db_option
@click.option("--max-document-size", type=click.IntRange(min=1), default=None, metavar="BYTES",
              help="Refuse metadata documents larger than this (default 4 MiB; consolidated metadata gets 64x).")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary.")
@click.option("--profile", type=click.Choice(PROFILES), default=DEFAULT_PROFILE, show_default=True,
              help="Validation profile (see catalogue validate).")
@click.option("--strict", is_flag=True, help="Exit with 1 when validation finds errors (invalid nodes are catalogued all the same).")
@click.option("--wait", is_flag=True, help="If another harvest of a source is running, wait for it instead of skipping the source (exit 3).")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=None, help="Metadata documents fetched at once (default 16).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None, help="Seconds per request (default 30).")
@click.option("--retries", type=click.IntRange(min=0), default=None, help="Retries of transient errors, with backoff (default 3).")
@click.option("--full", is_flag=True,
              help="Read every source whole, even one whose listing or consolidated metadata is as last harvested.")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Sources harvested at once, in worker processes (one progress display, one summary).")
@click.option("--coordinate-bytes", type=click.IntRange(min=0), default=None, metavar="BYTES",
              help="Coordinate values read per store for its extent (default 16 MiB; 0: attributes only).")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Only these paths: stores below a folder of stores, else nodes (repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Not these paths (and nothing below them; repeatable).")
@click.option("--max-depth", type=click.IntRange(min=0), default=None,
              help="Deepest store below a folder of stores (1: its own folders), else deepest node.")
@click.option("--max-listings", type=click.IntRange(min=1), default=None,
              help="Folders listed at most to find the stores below a SOURCE that is not one (default 10,000).")
@click.option("--prune", is_flag=True, help="Remove the graphs of stores below a folder of stores, and of versions of an "
              "Icechunk repository, that are gone.")
@click.option("--no-discover", is_flag=True, help="Refuse a SOURCE that is not itself a Zarr store (no discovery).")
@click.option("--history", type=click.IntRange(min=0), default=None, metavar="N",
              help="Icechunk repositories: also the N latest snapshots of each branch (default: branch and tag heads).")
@handle_errors
def harvest(sources: tuple[str, ...], config: str | None, db: str | None, max_document_size: int | None,
            as_json: bool, profile: str, strict: bool, wait: bool, concurrency: int | None,
            timeout: float | None, retries: int | None, full: bool, jobs: int, coordinate_bytes: int | None,
            include: tuple[str, ...], exclude: tuple[str, ...], max_depth: int | None, max_listings: int | None,
            prune: bool, no_discover: bool, history: int | None) -> None:
    """Harvest Zarr hierarchies (folders, file://, http(s)://, s3:// URLs) into the catalogue.

    Each source goes into its own graph, replaced atomically; a source that
    fails leaves its graph untouched and the others go on. A node whose
    metadata cannot be read keeps its previously catalogued version. Every
    node is validated (findings go into the graph; errors and warnings are
    printed as warnings) and every run is recorded (catalogue harvests).
    A SOURCE that is not itself a Zarr store (a folder, bucket prefix or HTTP
    index of stores) is searched for the stores below it, each harvested into
    its own graph (--include/--exclude/--max-depth then choose stores; --prune
    removes the graphs of stores that are gone). A folder named *.zarr without
    a root document is one store whose root is implicit. A kerchunk/VirtualiZarr
    reference file (*.json, *.parq) is a store. An Icechunk repository is
    harvested as versions: every branch and tag head (REPO@REF names one).
    One harvest of a source at a time; harvests of different sources run side
    by side. A source whose listing (S3) or
    consolidated metadata is as it was last harvested costs that one request
    (and the listing, or on HTTP the reads, that tell a store from a folder of
    stores) and is recorded as unchanged (--full reads it all the same).
    With --jobs N, N sources are harvested at once in worker processes; each
    source still has its own lock, so several harvest commands (on one machine
    or several sharing a PostgreSQL catalogue) can split a sources file.
    Exit code: 0 if every source was harvested fully, 1 if any source or node
    failed, 2 on usage errors, 3 if a source was skipped because another harvest
    of it was running (or the database stayed locked): try again later.
    """
    from catalogue.harvest.batch import plan_sources
    from catalogue.storage.access import DEFAULT_MAX_DOCUMENT_BYTES

    entries = plan_sources(sources, config, include=include, exclude=exclude, max_depth=max_depth,
                           max_listings=max_listings, prune=prune or None, discover=False if no_discover else None,
                           history=history)
    common = {k: v for k, v in (("concurrency", concurrency), ("timeout", timeout), ("retries", retries),
                                ("coordinate_bytes", coordinate_bytes)) if v is not None}
    interactive = not as_json and sys.stderr.isatty()

    def done(result: Any) -> None:
        from tqdm import tqdm

        with tqdm.external_write_mode(file=sys.stderr):  # above the progress display
            if result.error is not None:
                click.echo(f"error: {result.error_line()}", err=True)
                return
            _print_report(result.report)
            if len(entries) == 1 and not as_json:
                click.echo(result.report.summary(), err=not result.report.ok)

    # Warnings logged while a bar is on screen (a discovery's, from the thread that finds
    # the sources of a --jobs harvest) are written above it, not through it.
    from tqdm.contrib.logging import logging_redirect_tqdm

    with _open(db) as cat, logging_redirect_tqdm() if interactive else contextlib.nullcontext():
        batch = cat.harvest_sources(entries, strict=strict, progress=_progress if interactive else None,
                                    overall=_overall if interactive else None, jobs=jobs,
                                    on_result=done, profile=profile, full=full, wait=wait,
                                    max_document_bytes=max_document_size or DEFAULT_MAX_DOCUMENT_BYTES, **common)
    if as_json:
        click.echo(json.dumps(batch.as_json(), indent=2))
    elif len(entries) > 1 or len(batch.results) > 1:
        click.echo(batch.summary(), err=batch.exit_code != 0)
    if batch.exit_code:
        sys.exit(batch.exit_code)


def _progress(source: Any, number: int, total: int) -> Any:
    """A bar counting the nodes read from one source, with nodes per second (TTY only)."""
    from tqdm import tqdm

    desc = f"[{number}/{total}] {source.label}" if total > 1 else source.label
    if len(desc) > 48:
        desc = "…" + desc[-47:]
    return tqdm(desc=desc, unit=" nodes", file=sys.stderr, dynamic_ncols=True, leave=False, mininterval=0.2)


def _overall(total: int) -> Any:
    """One bar counting the sources done, for --jobs (TTY only)."""
    from tqdm import tqdm

    return tqdm(desc="harvesting", total=total, unit=" sources", file=sys.stderr, dynamic_ncols=True,
                leave=False, mininterval=0.2)


def _print_report(report: Any) -> None:
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
    for message in getattr(report, "undiscovered", []):
        click.echo(f"warning: {message}", err=True)
    failed = set(report.failed_paths)
    shown = [f for f in report.validation.findings if f.path not in failed and f.severity != "info"] if report.validation else []
    for finding in shown[:MAX_HARVEST_FINDINGS]:
        click.echo(f"warning: {finding.one_line()}", err=True)
    if len(shown) > MAX_HARVEST_FINDINGS:
        click.echo(f"warning: ... and {len(shown) - MAX_HARVEST_FINDINGS} more findings "
                   f"(catalogue validate {report.graph})", err=True)


@main.command()
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Rows to list [default: 20 runs, every source].")
@click.option("--json", "as_json", is_flag=True)
@click.option("--sources", "by_source", is_flag=True,
              help="One line per source: its latest outcome, when, how long, and since when it fails "
                   "(the sources failing for longest first).")
@click.option("--failing", is_flag=True, help="With --sources: only the sources whose latest run failed.")
@db_option
@handle_errors
def harvests(limit: int | None, as_json: bool, by_source: bool, failing: bool, db: str | None) -> None:
    """List recent harvest runs, newest first (from their PROV-O records).

    A run that has not ended is "running" while its process lives and
    "interrupted" once it is gone (killed, crashed), with its host and pid.
    With --sources, one line per source instead, failing ones first.
    """
    if failing and not by_source:
        raise click.UsageError("--failing goes with --sources")
    if by_source:
        with _open(db) as cat:
            found = cat.harvest_status(limit, failing=failing)
        if as_json:
            click.echo(json.dumps([s.as_json() for s in found], indent=2))
            return
        for s in found:
            _print_source(s)
        return
    with _open(db) as cat:
        runs = cat.harvests(limit or 20)
    if as_json:
        click.echo(json.dumps(runs, indent=2))
        return
    for r in runs:
        counts = f"+{r['added']} ~{r['changed']} ={r['unchanged']} -{r['removed']} !{r['failed']}"
        who = f"  (host {r['host']}, pid {r['pid']})" if r["outcome"] in ("running", "interrupted") and r["pid"] else ""
        click.echo(f"{r['started']}  {r['outcome']:11}  {counts:24}  {r['name'] or r['source']}{who}")
        for error in r["errors"][:3]:
            click.echo(f"    error: {error}")


def _print_source(s: Any) -> None:
    """One source's line (and its error, indented, when its latest run failed)."""
    when = s.ended or s.started
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ") if when is not None else "-"
    took = f"{s.seconds:8.1f} s" if s.seconds is not None else "       - "
    failing = ""
    if s.failing_since is not None:
        failing = f"  failing since {s.failing_since.strftime('%Y-%m-%dT%H:%M:%SZ')} ({s.failures} run(s))"
    click.echo(f"{stamp}  {s.outcome:11}  {took}  {s.name or s.source}{failing}")
    if s.error and s.outcome in ("failed", "interrupted", "partial"):
        click.echo(f"    error: {s.error.splitlines()[0][:300]}")


#: Validation findings a harvest prints; the rest are in the graph and in ``catalogue validate``.
MAX_HARVEST_FINDINGS = 20


@main.command()
@click.argument("target", metavar="SOURCE_OR_IRI")
@db_option
@click.option("--profile", type=click.Choice(PROFILES), default=DEFAULT_PROFILE, show_default=True,
              help="corrected: the GeoZarr array schema with its bugs fixed; upstream: that schema verbatim.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--store", "from_store", is_flag=True,
              help="Read SOURCE_OR_IRI from its store even when it is a catalogued node.")
@click.option("--max-document-size", type=click.IntRange(min=1), default=None, metavar="BYTES",
              help="Refuse metadata documents larger than this (default 4 MiB).")
@handle_errors
def validate(target: str, db: str | None, profile: str, fmt: str, from_store: bool,
             max_document_size: int | None) -> None:
    """Validate a Zarr hierarchy: a store (folder, file:// URL) or a catalogued node IRI.

    A catalogued node is validated from the graph, with everything below it;
    anything else is read from its store and nothing is catalogued. Prints
    one line per finding (file#pointer: severity: message [rule]) and a
    summary. Exit code 0 without errors, 1 with errors, 2 on usage errors.
    """
    from catalogue.api import validate_store
    from catalogue.storage.access import DEFAULT_MAX_DOCUMENT_BYTES

    report = None
    if not from_store and "://" in target and _catalogue_exists(db):
        with _open(db) as cat:
            if cat.has_node(target):
                report = cat.validate(target, profile=profile)
    if report is None:
        report = validate_store(target, profile=profile,
                                max_document_bytes=max_document_size or DEFAULT_MAX_DOCUMENT_BYTES)
    if fmt == "json":
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        for finding in report.findings:
            click.echo(finding.one_line())
        click.echo(report.summary(), err=True)
    if report.errors:
        sys.exit(1)


@main.command()
@click.argument("iri", metavar="ARRAY_IRI")
@click.option("--selection", default=None, metavar="SEL",
              help='NumPy basic indexing, e.g. "0:10,5,:" or "...,-1" (default: the whole array).')
@click.option("--indent", type=int, default=None, help="JSON indentation (default: one line).")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None, metavar="SOURCES.TOML",
              help="Take storage options (endpoint, credentials) from the source holding ARRAY_IRI.")
@db_option
@handle_errors
def resolve(iri: str, selection: str | None, indent: int | None, config: str | None, db: str | None) -> None:
    """Print where every chunk of a selection of ARRAY_IRI lives, as JSON.

    For each chunk: grid index, key, URL and, for sharded arrays, the shard
    and the byte range of the inner chunk (from the shard index). Absent chunks
    are listed with "fill": true: they read as the fill value.
    """
    with _open(db) as cat:
        result = cat.resolve(iri, selection, stream=True, storage_options=_chunk_options(cat, iri, config))
        chunks = result.pop("chunks")
        _write_resolution(result, chunks, indent)


def _chunk_options(cat: Any, iri: str, config: str | None) -> dict[str, Any] | None:
    """Storage options for reading ARRAY_IRI's chunks: those of its source in the sources file."""
    if config is None:
        return None
    from catalogue.harvest.sources import load_sources, storage_options_for

    return storage_options_for(load_sources(config), cat.layout(iri).base_url)


def _write_resolution(header: dict[str, Any], chunks: Any, indent: int | None) -> None:
    """The resolve JSON, written as it is produced: one chunk entry at a time."""
    out = sys.stdout
    head = json.dumps(header, indent=indent)
    nl, pad = ("\n", " " * indent) if indent is not None else ("", "")
    out.write(head[:-1].rstrip() + f',{nl}{pad}"chunks": [')
    fills = 0
    for i, chunk in enumerate(chunks):
        fills += bool(chunk["fill"])
        out.write(("," if i else "") + nl + pad * 2 + json.dumps(chunk))
    out.write(f"{nl}{pad}],{nl}{pad}" + f'"fill_chunks": {fills}{nl}' + "}\n")


@main.command()
@click.argument("iri", metavar="ARRAY_IRI")
@click.option("--selection", default=None, metavar="SEL", help="NumPy basic indexing (default: the whole array).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, writable=True),
              help="The .npy file to write.")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None, metavar="SOURCES.TOML",
              help="Take storage options (endpoint, credentials) from the source holding ARRAY_IRI.")
@db_option
@handle_errors
def read(iri: str, selection: str | None, output: str, config: str | None, db: str | None) -> None:
    """Read a selection of ARRAY_IRI from its store (only the chunks needed) into a .npy file."""
    import io

    import numpy as np

    with _open(db) as cat:
        data = cat.read(iri, selection, storage_options=_chunk_options(cat, iri, config))
    buffer = io.BytesIO()
    np.save(buffer, data, allow_pickle=data.dtype.kind == "O")
    _write_file(output, buffer.getvalue())
    click.echo(f"wrote {output}: shape {list(data.shape)}, dtype {data.dtype}", err=True)


@main.command()
@click.argument("iri", metavar="IRI")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, writable=True),
              help="The .png file to write.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None, metavar="BYTES",
              help="Decoded chunk bytes read at most (default 8 MiB).")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None, metavar="SOURCES.TOML",
              help="Take storage options (endpoint, credentials) from the source holding IRI.")
@db_option
@handle_errors
def preview(iri: str, output: str, max_bytes: int | None, config: str | None, db: str | None) -> None:
    """Draw a quicklook PNG of an array (a pyramid: its coarsest level), read within a byte budget.

    Two or more dimensions: a 2-D plane on a colour map with its colour bar, fill values
    transparent; one dimension: a line. An array that cannot be read gets a picture saying why.
    """
    with _open(db) as cat:
        png = cat.preview(iri, max_bytes=max_bytes, storage_options=_chunk_options(cat, iri, config))
    _write_file(output, png)
    click.echo(f"wrote {output}: {len(png):,} bytes", err=True)


def _write_file(output: str, data: bytes) -> None:
    """Write ``data`` to ``output`` whole or not at all; a path that cannot be written is a
    usage error naming it (exit 2), not a traceback."""
    import os

    from catalogue.errors import UsageError

    tmp = f"{output}.part"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, output)
    except OSError as exc:
        raise UsageError(f"--output {output}: cannot write it ({exc.strerror or exc})") from None


@main.command("tensorstore-spec")
@click.argument("iri", metavar="ARRAY_IRI")
@click.option("--assume-metadata", is_flag=True,
              help="Put the array's metadata from the catalogue in the spec: TensorStore will not read zarr.json.")
@click.option("--indent", type=int, default=2, show_default=True)
@db_option
@handle_errors
def tensorstore_spec(iri: str, assume_metadata: bool, indent: int, db: str | None) -> None:
    """Print a TensorStore spec (driver zarr3 or zarr) that opens ARRAY_IRI."""
    with _open(db) as cat:
        click.echo(json.dumps(cat.tensorstore_spec(iri, assume_metadata=assume_metadata), indent=indent))


def _catalogue_exists(db: str | None) -> bool:
    """Whether there is a catalogue to look in (never create one just to find out)."""
    import os

    from catalogue.graph.database import database_url

    url = database_url(db)
    if url.startswith("sqlite:///"):
        return os.path.exists(url[len("sqlite:///"):])
    return True


@main.command()
@click.argument("source")
@click.option("--indent", type=int, default=2, show_default=True, help="JSON indentation.")
@handle_errors
def zom(source: str, indent: int) -> None:
    """Print the ZEP 6 Zarr Object Model of the hierarchy at SOURCE as JSON."""
    from catalogue.harvest import load_hierarchy
    from catalogue.model.zom import hierarchy_zom

    hierarchy = load_hierarchy(source)
    for error in hierarchy.errors:
        click.echo(f"error: {error}", err=True)
    if hierarchy.root is None:
        raise CatalogueError(f"{display_location(hierarchy.url)}: the root node could not be read")
    click.echo(json.dumps(hierarchy_zom(hierarchy), indent=indent, ensure_ascii=False, allow_nan=True))
    if hierarchy.errors:
        sys.exit(1)


@main.command()
@click.option("--format", "fmt", type=click.Choice(["turtle", "nt", "json-ld"]), default="turtle", show_default=True)
@handle_errors
def vocab(fmt: str) -> None:
    """Print the catalogue ontology (classes and properties, with labels and comments)."""
    from catalogue.resources import ontology_turtle

    text = ontology_turtle()
    if fmt == "turtle":
        click.echo(text, nl=False)
        return
    from rdflib import Graph

    click.echo(Graph().parse(data=text, format="turtle").serialize(format=fmt), nl=False)


@main.command()
@click.argument("iri")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the extent and pyramid as JSON.")
@handle_errors
def extent(iri: str, db: str | None, as_json: bool) -> None:
    """Print where and when the node IRI covers, as harvested: its CRS84 box, time span,
    native CRS, resolutions and multiscale levels, with the source of each figure
    (docs/extents.md). A store that declares none has none: the command says so, and
    says "not read" instead when the coordinate byte budget stopped a read it needed
    (with the harvest's findings: harvest again with a larger --coordinate-bytes).
    """
    with _open(db) as cat:
        found, pyramid, not_read = cat.extent(iri), cat.multiscales(iri), cat.extent_not_read(iri)
    if as_json:
        click.echo(json.dumps({"iri": iri, "extent": found.as_json() if found is not None else None,
                               "multiscales": pyramid.as_json() if pyramid is not None else None,
                               "not_read": not_read}, indent=2))
        return
    if found is None and not_read:
        from catalogue.rdf.extents import NOT_READ

        click.echo(f"{iri}: no extent ({NOT_READ})")
    elif found is None:
        click.echo(f"{iri}: no extent (its metadata says nothing of where or when)")
    else:
        for label, value in _extent_lines(found):
            click.echo(f"{label:<28} {value}")
        for figure, source in found.sources:
            click.echo(f"{'source of ' + figure:<28} {source.describe()}")
    for message in not_read:
        click.echo(f"{'not read':<28} {message}")
    if pyramid is not None:
        for level in pyramid.levels:
            scale = "" if level.scale is None else f" scale {list(level.scale)}"
            click.echo(f"{'level ' + str(level.index):<28} {level.asset}{scale}")


def _extent_lines(found: Any) -> list[tuple[str, str]]:
    lines = []
    if found.bbox is not None:
        lines.append(("bbox (CRS84)", ", ".join(f"{v:g}" for v in found.bbox.as_list())))
    if found.period is not None:
        calendar = "" if found.period.standard_calendar else f" ({found.period.calendar})"
        lines.append(("period", f"{found.period.start} .. {found.period.end}{calendar}"))
    if found.crs is not None:
        lines.append(("crs", found.crs.iri or found.crs.name or "WKT2"))
    if found.native_bbox is not None:
        lines.append(("native bbox", ", ".join(f"{v:g}" for v in found.native_bbox)))
    if found.spatial_resolution is not None:
        lines.append(("resolution (m)", f"{found.spatial_resolution:,.0f}" if found.spatial_resolution >= 10
                      else f"{found.spatial_resolution:g}"))
    if found.temporal_resolution is not None:
        lines.append(("time step", found.temporal_resolution))
    return lines


@main.command()
@click.argument("iri")
@db_option
@click.option("--indent", type=int, default=2, show_default=True)
@handle_errors
def metadata(iri: str, db: str | None, indent: int) -> None:
    """Rebuild and print the metadata of the node IRI from the graph alone.

    Zarr v3 nodes print their zarr.json; v2 nodes print
    {".zarray" or ".zgroup": ..., ".zattrs": ...}.
    """
    with _open(db) as cat:
        doc = cat.metadata(iri)
    click.echo(json.dumps(doc, indent=indent, ensure_ascii=False, allow_nan=True))


@main.command()
@click.argument("sparql")
@db_option
@click.option("--format", "fmt", default=None,
              type=click.Choice(["table", "json", "csv", "tsv", "xml", "turtle", "json-ld", "nt"]),
              help="Result format: table (default for SELECT), json (SPARQL 1.1 JSON), csv, tsv, xml; "
                   "turtle (default), json-ld or nt for CONSTRUCT/DESCRIBE.")
@click.option("-o", "--output", default=None, help="Write to this file instead of stdout.")
@click.option(
    "--explain",
    is_flag=True,
    help="Also print the SQL that ran (and any part rdflib evaluated) to stderr.",
)
@handle_errors
def query(
    sparql: str, db: str | None, fmt: str | None, output: str | None, explain: bool
) -> None:
    """Run a SPARQL query over every harvested graph (the union default graph).

    SPARQL is the query text, @FILE to read it from a file, or - for stdin.
    Prefixes zarr, dcat, dct, prov, rdf, rdfs, xsd, owl and sh are pre-bound.
    """
    from catalogue.graph.sparql.answer import query_failure
    from catalogue.rdf.results import render

    text = _query_text(sparql)
    with _open(db) as cat:
        try:
            if explain:
                result, statements = cat.explain(text)
            else:
                result, statements = cat.query(text), []
            with _output(output) as out:
                render(result, out, fmt)
            for statement in statements:
                click.echo(statement + "\n", err=True)
        except Exception as exc:  # rdflib raises pyparsing and evaluation errors of many types
            failure = query_failure(exc, name_database_errors=True)
            if failure is exc:
                raise
            raise failure from exc


def _query_text(sparql: str) -> str:
    if sparql == "-":
        return sys.stdin.read()
    if sparql.startswith("@"):
        from pathlib import Path

        from catalogue.errors import UsageError

        path = Path(sparql[1:])
        if not path.is_file():
            raise UsageError(f"{path}: no such query file")
        return path.read_text(encoding="utf-8")
    return sparql


@main.command()
@db_option
@click.option("--format", "fmt", default="turtle", show_default=True,
              type=click.Choice(["turtle", "json-ld", "nt", "nquads", "trig"]))
@click.option("--graph", default=None, help="Export only this named graph (a hierarchy root IRI).")
@click.option("--profile", default="catalogue", show_default=True,
              type=click.Choice(["catalogue", "iliad", "iliad-verbatim"]),
              help="catalogue: the lossless catalogue triples; iliad: v2 arrays in the OGC/ILIAD "
                   "building block's own (lossy) vocabulary, IRIs repaired; iliad-verbatim: its IRIs as published.")
@click.option("-o", "--output", default=None, help="Write to this file (atomically) instead of stdout.")
@handle_errors
def export(db: str | None, fmt: str, graph: str | None, profile: str, output: str | None) -> None:
    """Export the catalogue, or one graph, as RDF."""
    with _open(db) as cat, _output(output) as out:
        cat.export(out, format=fmt, graph=graph, profile=profile)


@main.command()
@db_option
@handle_errors
def graphs(db: str | None) -> None:
    """List the named graphs (one per harvested hierarchy) and their sizes."""
    with _open(db) as cat:
        for iri, count in cat.graphs():
            click.echo(f"{iri}\t{count} triples")


@main.command()
@click.argument("file")
@click.option("--format", "fmt", default=None, metavar="FMT",
              help="nt, nquads, turtle, trig, json-ld, xml or n3 [default: from the extension; "
                   ".gz, .bz2 and .xz files are decompressed].")
@click.option("--graph", default=None, metavar="IRI",
              help="Graph for statements without one (all of a triple format's) "
                   "[default: the dataset's default graph].")
@click.option("--replace", is_flag=True,
              help="Replace the content of that graph with the file's (a triple format), in the same transaction.")
@db_option
@handle_errors
def load(file: str, fmt: str | None, graph: str | None, replace: bool, db: str | None) -> None:
    """Bulk-load the RDF FILE into the catalogue, in one transaction.

    A bad line stops the load and leaves the catalogue as it was (exit code 1).
    """
    from pathlib import Path

    from catalogue.errors import UsageError
    from catalogue.graph.load.bulk import resolve_format

    resolve_format(file, fmt)  # usage errors before the database is opened
    if not Path(file).is_file():
        raise UsageError(f"{file}: no such file")
    with _open(db) as cat:
        report = cat.load(file, format=fmt, graph=graph, replace=replace)
    click.echo(report.summary())


@main.command()
@click.option("--graph", default=None, metavar="IRI", help="Reindex this graph only.")
@click.option("--full", is_flag=True, help="Rebuild the whole search index from the graphs, in one transaction.")
@db_option
@handle_errors
def reindex(graph: str | None, full: bool, db: str | None) -> None:
    """Bring the dataset search index up to date.

    Harvests, loads and SPARQL updates made through zarr-catalogue keep the index in
    their own transaction. Writes made otherwise (a plain rdflib store on the
    database) queue their graphs: without options this indexes the queue (the web
    server does too, within a second). --graph IRI reindexes one graph; --full
    rebuilds everything (a repair). Exit code 1 if a graph could not be read.
    """
    if graph and full:
        raise click.UsageError("give --graph or --full, not both")
    with _open(db) as cat:
        report = cat.reindex(graph, full=full)
    click.echo(report.summary())
    if report.failed:
        sys.exit(1)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--exact", is_flag=True, help="Also count every stored quad (a scan of the catalogue).")
@db_option
@handle_errors
def stats(as_json: bool, exact: bool, db: str | None) -> None:
    """Datasets, groups, arrays and triples (kept by the search index), and sizes."""
    with _open(db) as cat:
        found = cat.stats(exact=exact)
    if as_json:
        click.echo(json.dumps(found.as_json(), indent=2))
        return
    rows = [("datasets", f"{found.datasets:,}"), ("groups", f"{found.groups:,}"), ("arrays", f"{found.arrays:,}"),
            ("triples", f"{found.triples:,} (in dataset graphs)"), ("graphs", f"{found.graphs:,}")]
    if found.quads is not None:
        rows.append(("quads", f"{found.quads:,} (all graphs, counted)"))
    rows += [("waiting for reindex", f"{found.queued:,} graph(s)"),
             ("search index", _size(found.index_bytes)), (f"database ({found.database})", _size(found.database_bytes))]
    for name, value in rows:
        click.echo(f"{name:20} {value}")


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


@main.group()
def db() -> None:
    """Database schema management (Alembic migrations)."""


@db.command("upgrade")
@db_option
@click.option("--revision", default="head", show_default=True)
@handle_errors
def db_upgrade(db: str | None, revision: str) -> None:
    """Create or migrate the catalogue schema (done automatically on first use)."""
    from catalogue.graph.database import current_revision, database_url, make_engine, upgrade

    engine = make_engine(database_url(db))
    try:
        upgrade(engine, revision)
        click.echo(f"{database_url(db)} at revision {current_revision(engine)}")
    finally:
        engine.dispose()


@db.command("current")
@db_option
@handle_errors
def db_current(db: str | None) -> None:
    """Print the schema revision of the catalogue database."""
    from catalogue.graph.database import current_revision, database_url, head_revision, make_engine

    engine = make_engine(database_url(db))
    try:
        current = current_revision(engine)
        click.echo(f"{current or '(empty)'} (head: {head_revision()})")
    finally:
        engine.dispose()


@main.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (0.0.0.0 for all).")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option("--base-url", default=None, metavar="URL",
              help="Public base URL; node IRIs under it dereference by their own path (default: each request's).")
@click.option("--query-timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds a query may run before its database work is stopped.")
@click.option("--max-results", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="Rows or triples a query may return.")
@click.option("--max-body", type=click.IntRange(min=1), default=1_000_000, show_default=True, metavar="BYTES",
              help="Largest request body accepted.")
@click.option("--workers", type=click.IntRange(1, 256), default=4, show_default=True,
              help="Database connections (requests doing database work at once).")
@click.option("--processes", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Server processes (each with --workers connections and its own cache of search answers).")
@click.option("--cors", "cors", multiple=True, metavar="ORIGIN", help="Allow this origin (repeat; * for any).")
@click.option("--search-cache", type=click.IntRange(min=0), default=64, show_default=True, metavar="MB",
              help="Search answers kept per process until the search index changes (0: none).")
@click.option("--admin-token", envvar="CATALOGUE_ADMIN_TOKEN", default=None,
              help="Allow SPARQL Update with 'Authorization: Bearer TOKEN' (env CATALOGUE_ADMIN_TOKEN).")
@handle_errors
def serve(db: str | None, host: str, port: int, base_url: str | None, query_timeout: float, max_results: int,
          max_body: int, workers: int, processes: int, cors: tuple[str, ...], admin_token: str | None,
          search_cache: int) -> None:
    """Serve the catalogue over HTTP: portal, SPARQL endpoint, /datasets, /catalog (DCAT), /export.

    Read-only unless --admin-token is set. See docs/web.md.
    """
    import uvicorn

    from catalogue.web.app import create_app
    from catalogue.web.settings import Settings

    settings = Settings(db=db, base_url=base_url.rstrip("/") if base_url else None, query_timeout=query_timeout,
                        max_results=max_results, max_body_bytes=max_body, workers=workers,
                        cors_origins=cors, admin_token=admin_token or None,
                        search_cache_bytes=search_cache * 1024 * 1024)
    with _open(db):
        pass  # create or migrate the database before the workers open it
    click.echo(f"zarr-catalogue portal: http://{host}:{port}/   (SPARQL: /sparql, API: /docs)", err=True)
    if processes == 1:
        uvicorn.run(create_app(settings), host=host, port=port, log_level="info", access_log=False)
        return
    import os

    from catalogue.web.app import SETTINGS_ENV, settings_to_environment

    os.environ[SETTINGS_ENV] = settings_to_environment(settings)
    uvicorn.run("catalogue.web.app:app_from_environment", factory=True, workers=processes, host=host, port=port,
                log_level="info", access_log=False)


if __name__ == "__main__":  # pragma: no cover
    main()
