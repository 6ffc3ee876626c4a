"""Dataset discovery: the search index (catalogue/discovery/) and GET /datasets.

The known catalogue: the three examples, four stores of tests/support/stores.py (a v2
group with odd dtypes, a v3 lone array, and two readable but invalid lone
arrays) and ten synthetic datasets of bench/web_data.py. Expected answers come
from an oracle that reads the metadata files on disk (not the catalogue), so
the index's SPARQL reading, list rebuilding and normalisation are checked
against an independent path. The logic tests run on SQLite and PostgreSQL;
the HTTP tests run a real server on a loopback port.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import catalogue
from bench.web_data import build_catalogue
from catalogue.discovery.normalise import fold
from catalogue.discovery.query import FACETS, QueryError, SearchQuery, SearchResult
from catalogue.discovery.summary import DatasetSummary
from catalogue.model.datatypes import v3_vocabulary_name
from catalogue.web.settings import Settings
from tests.support import stores
from tests.support.paths import (  # bench/ (not an installed package) is found through pyproject's pythonpath
    EXAMPLES,
)
from tests.support.search_graphs import summary, variable, write_datasets
from tests.support.webserver import serve

N_SYNTHETIC = 10
#: Datasets flagged invalid: the two broken stores and synthetic dataset 7 (every 25th from 7).
INVALID_NAMES = {"missing_key.zarr", "wrong_types.zarr", "ds-0007.zarr"}

# ------------------------------------------------------------------ the oracle
#: The v2 dtypes of the known catalogue, in the v3 vocabulary (written out by hand).
V2_DTYPES = {"<f4": "float32", "<f8": "float64", "<f2": "float16", "<i8": "int64", "<i4": "int32",
             "<i2": "int16", "<u2": "uint16", "|u1": "uint8", "|S4": "null_terminated_bytes"}


def _codec_names(codecs: Any) -> list[str]:
    out = []
    for c in codecs or []:
        name = c if isinstance(c, str) else c["name"]
        out.append(name.lower().removeprefix("numcodecs."))
        if name == "sharding_indexed":
            out += _codec_names(c["configuration"].get("codecs"))
    return out


def _keywords(value: Any) -> list[str]:
    if isinstance(value, str):
        words = value.replace(";", ",").split(",")
    elif isinstance(value, list):
        words = [w for w in value if isinstance(w, str)]
    else:
        words = []
    return [w.strip() for w in words if w.strip()]


@dataclass
class Expected:
    """What the metadata files of one hierarchy say (read with plain json, not the catalogue)."""

    iri: str
    name: str
    zarr_format: int
    title: str | None
    summary: str | None
    keywords: list[str]
    facets: dict[str, set[str]] = field(default_factory=dict)
    array_names: set[str] = field(default_factory=set)
    long_names: set[str] = field(default_factory=set)
    arrays: int = 0
    groups: int = 0

    @property
    def valid(self) -> bool:
        return self.name not in INVALID_NAMES


def read_expected(root: pathlib.Path, iri: str) -> Expected:
    values: dict[str, set[str]] = {name: set() for name in FACETS}
    found = Expected(iri=iri, name=root.name, zarr_format=0, title=None, summary=None, keywords=[])
    for dirpath, _dirs, files in os.walk(root):
        here = pathlib.Path(dirpath)
        meta: dict[str, Any] | None = None
        if "zarr.json" in files:
            doc = json.loads((here / "zarr.json").read_text())
            fmt, attrs, kind = 3, doc.get("attributes") or {}, doc["node_type"]
            if kind == "array":
                dtype = doc.get("data_type")
                meta = {"dtype": dtype if isinstance(dtype, str) else dtype["name"],
                        "dims": doc.get("dimension_names") or [], "codecs": _codec_names(doc.get("codecs"))}
        elif ".zarray" in files or ".zgroup" in files:
            attrs = json.loads((here / ".zattrs").read_text()) if (here / ".zattrs").exists() else {}
            fmt, kind = 2, "array" if ".zarray" in files else "group"
            if kind == "array":
                doc = json.loads((here / ".zarray").read_text())
                dtype = doc.get("dtype")
                codecs = [f["id"] for f in doc.get("filters") or []]
                codecs += [doc["compressor"]["id"]] if doc.get("compressor") else []
                meta = {"dtype": "structured" if isinstance(dtype, list) else V2_DTYPES[dtype] if dtype else None,
                        "dims": attrs.get("_ARRAY_DIMENSIONS", []), "codecs": codecs}
        else:
            continue
        if here == root:
            found.zarr_format = fmt
            found.title, found.summary = attrs.get("title"), attrs.get("summary")
            found.keywords = _keywords(attrs.get("keywords"))
        if meta is None:
            found.groups += 1
            continue
        found.arrays += 1
        found.array_names.add(here.name)
        if isinstance(attrs.get("long_name"), str):
            found.long_names.add(attrs["long_name"])
        if meta["dtype"]:
            values["dtype"].add(meta["dtype"])
        values["dimension"].update(d for d in meta["dims"] if d)
        values["codec"].update(meta["codecs"])
        for key in ("standard_name", "units"):
            if isinstance(attrs.get(key), str) and attrs[key]:
                values[key].add(attrs[key])
    values["zarr_format"] = {str(found.zarr_format)}
    values["valid"] = {"true" if found.valid else "false"}
    found.facets = values
    return found


def text_matches(e: Expected, q: str) -> bool:
    """Free-text semantics written out plainly: every term a token or the Snowball stem of a
    prose token (titles, summaries, keywords, long names; not identifiers), the last one
    also a prefix of a token."""
    import snowballstemmer

    english = snowballstemmer.stemmer("english")
    prose = re.findall(r"[a-z0-9]+", fold(" ".join([e.title or "", e.summary or "", *e.keywords, *e.long_names])))
    identifiers = re.findall(r"[a-z0-9]+", fold(" ".join([*e.array_names, *e.facets["standard_name"]])))
    tokens = set(prose) | set(identifiers)
    stems = {english.stemWord(t) for t in prose}
    terms = re.findall(r"[a-z0-9]+", fold(q))
    *exact, last = terms

    def found(term: str) -> bool:
        return term in tokens or english.stemWord(term) in tokens | stems

    return all(found(t) for t in exact) and (found(last) or any(t.startswith(last) for t in tokens))


def facet_counts(expected: list[Expected], facet: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in expected:
        for value in e.facets[facet]:
            counts[value] = counts.get(value, 0) + 1
    return counts


# ------------------------------------------------------------------ the known catalogue
@dataclass
class Known:
    db: str
    expected: dict[str, Expected]  # iri -> oracle
    order: list[str]  # harvest order
    roots: list[pathlib.Path]  # the stores, in harvest order
    cat: catalogue.Catalogue

    def iri(self, name: str) -> str:
        return next(iri for iri, e in self.expected.items() if e.name == name)

    def search(self, query: SearchQuery) -> SearchResult:
        return self.cat.search(query)

    def get(self, iri: str) -> DatasetSummary | None:
        """The dataset as the index holds it (its stored hit)."""
        hits = [h for h in self.search(SearchQuery(limit=200)).hits if h.iri == iri]
        return hits[0].summary() if hits else None

    def datasets(self) -> list[DatasetSummary]:
        return [h.summary() for h in self.search(SearchQuery(limit=200)).hits]

    def hits(self, **kwargs: Any) -> list[str]:
        return [d.iri for d in self.search(SearchQuery(limit=200, **kwargs)).hits]

    def names(self, **kwargs: Any) -> set[str]:
        return {self.expected[iri].name for iri in self.hits(**kwargs)}


def _build_known(db: str, folder: pathlib.Path) -> Known:
    roots = [*sorted(EXAMPLES.glob("*.zarr")),
             stores.build_zarr_v2_plain(folder), stores.build_zarr_v3_lone_array(folder),
             stores.build_missing_key(folder), stores.build_wrong_types(folder)]
    order: list[str] = []
    with catalogue.open(db) as cat:
        for root in roots:
            order.append(cat.harvest(str(root)).graph)
    synthetic = build_catalogue(db, N_SYNTHETIC, seed=0, folder=folder / "synthetic")
    roots += sorted((folder / "synthetic").glob("*.zarr"))
    order += synthetic
    expected = {}
    for root, iri in zip(roots, order, strict=True):
        expected[iri] = read_expected(root, iri)
    return Known(db=db, expected=expected, order=order, roots=roots, cat=catalogue.open(db))


@pytest.fixture(scope="module")
def known(module_db_url, tmp_path_factory) -> Known:
    found = _build_known(module_db_url, tmp_path_factory.mktemp("known"))
    yield found
    found.cat.close()


# ------------------------------------------------------------------ normalisation
@pytest.mark.parametrize(("native", "v3"), [
    ("<f4", "float32"), (">f4", "float32"), ("float32", "float32"), ("|b1", "bool"), ("bool", "bool"),
    ("<c8", "complex64"), ("<i8", "int64"), ("|u1", "uint8"), ("<u2", "uint16"), ("<f2", "float16"),
    ("<U4", "fixed_length_utf32"), ("|S4", "null_terminated_bytes"), ("<M8[ns]", "numpy.datetime64"),
    ("<m8[s]", "numpy.timedelta64"), ("|V2", "r16"), ("r16", "r16"), ("|O", "object"),
    ('[["a","<i4"],["b","<f8"]]', "structured"), ('{"name":"numpy.datetime64","configuration":{}}', "numpy.datetime64"),
    ("string", "string"), (None, None),
])
def test_dtype_vocabulary(native, v3):
    assert v3_vocabulary_name(native) == v3


def test_object_dtype_follows_its_codec():
    assert v3_vocabulary_name("|O", ["vlen-utf8"]) == "string"
    assert v3_vocabulary_name("|O", ["vlen-bytes"]) == "variable_length_bytes"


def test_fold_is_case_and_accent_insensitive():
    assert fold("Température ÉTÉ") == fold("temperature ete") == "temperature ete"


# ------------------------------------------------------------------ the index against the oracle
def test_every_dataset_is_indexed_as_its_files_say(known):
    assert {d.iri for d in known.datasets()} == set(known.expected)
    for iri, e in known.expected.items():
        d = known.get(iri)
        assert d is not None
        assert d.zarr_format == e.zarr_format, iri
        assert d.title == (e.title or iri.rsplit("/", 1)[-1])
        assert d.summary == e.summary
        assert sorted(d.keywords, key=str.casefold) == sorted(e.keywords, key=str.casefold)
        assert (d.arrays, d.groups) == (e.arrays, e.groups), iri
        assert {v.name for v in d.variables} == e.array_names, iri
        assert d.valid is e.valid, iri
        assert d.harvested is not None and d.harvested.tzinfo is not None
    assert known.get("file:///nowhere.zarr") is None


def test_variables_carry_shape_chunks_dimensions_codecs(known):
    ocean = known.get(known.iri("ocean_model_v3.zarr"))
    ssh = next(v for v in ocean.variables if v.path == "ocean/surface/ssh")
    assert (ssh.shape, ssh.chunks, ssh.dimensions) == ([8, 32, 32], [4, 32, 32], ["time", "y", "x"])
    assert ssh.codecs == ["sharding_indexed", "bytes", "zstd"]  # the shard's inner codecs follow it
    assert (ssh.standard_name, ssh.units, ssh.long_name, ssh.dtype) == (
        "sea_surface_height_above_geoid", "m", "Sea surface height", "float32")
    count = next(v for v in ocean.variables if v.name == "station_count")
    assert (count.shape, count.chunks, count.dimensions) == ([], [], [])  # 0-d
    sea = known.get(known.iri("cf_sea_surface_v2.zarr"))
    sst = next(v for v in sea.variables if v.name == "sst")
    assert (sst.dtype, sst.native_dtype, sst.codecs, sst.dimensions) == ("float32", "<f4", ["blosc"], ["time", "lat", "lon"])
    plain = known.get(known.iri("zarr_v2_plain.zarr"))
    temp = next(v for v in plain.variables if v.name == "temperature")
    assert temp.codecs == ["delta", "blosc"]  # v2 filters, then the compressor
    assert {v.dtype for v in plain.variables} == {"float32", "null_terminated_bytes", "structured", "int64", "uint16"}


def test_rules_and_validity_of_invalid_datasets(known):
    assert known.names(valid=False) == INVALID_NAMES
    assert known.get(known.iri("missing_key.zarr")).rules == ["v2.required"]
    assert "v3.shape" in known.get(known.iri("wrong_types.zarr")).rules
    assert known.names(valid=True) == {e.name for e in known.expected.values()} - INVALID_NAMES


def test_facet_counts_are_exact(known):
    result = known.search(SearchQuery())
    everything = list(known.expected.values())
    assert result.total == len(everything)
    for facet in FACETS:
        counts = facet_counts(everything, facet)
        assert dict(result.facets[facet]) == counts, facet
        assert result.facets[facet] == sorted(counts.items(), key=lambda vc: (-vc[1], vc[0]))


@pytest.mark.parametrize("filters", [
    {"dtype": ["float32"]},
    {"dtype": ["float32", "int16"], "codec": ["zstd"]},
    {"dimension": ["time"], "zarr_format": [2]},
    {"standard_name": ["air_temperature", "sea_surface_temperature"], "valid": True},
    {"units": ["K"], "codec": ["blosc", "gzip"], "zarr_format": [2, 3]},
    {"valid": False},
])
def test_filters_and_disjunctive_facets(known, filters):
    """Values of one filter OR'd, filters AND'd; each facet counted under the *other* filters."""
    def text(x: Any) -> str:
        return str(x).lower() if isinstance(x, bool) else str(x)

    selected = {k: [text(x) for x in (v if isinstance(v, list) else [v])] for k, v in filters.items()}

    def keep(e: Expected, skip: str | None = None) -> bool:
        return all(e.facets[k] & set(vals) for k, vals in selected.items() if k != skip)

    result = known.search(SearchQuery(limit=200, **filters))
    expected_hits = {e.iri for e in known.expected.values() if keep(e)}
    assert {d.iri for d in result.hits} == expected_hits and result.total == len(expected_hits)
    for facet in FACETS:
        counts = facet_counts([e for e in known.expected.values() if keep(e, skip=facet)], facet)
        for value in selected.get(facet, []):
            counts.setdefault(value, 0)  # a selected value is listed even when nothing has it
        assert dict(result.facets[facet]) == counts, facet


def test_each_filter_alone(known):
    everything = known.expected.values()
    for facet in ("dtype", "dimension", "standard_name", "units", "codec"):
        for value, _count in known.search(SearchQuery()).facets[facet]:
            assert set(known.hits(**{facet: [value]})) == {e.iri for e in everything if value in e.facets[facet]}
    assert set(known.hits(zarr_format=[2])) == {e.iri for e in everything if e.zarr_format == 2}
    assert known.hits(dtype=["no-such-type"]) == []


def test_filter_values_are_normalised_like_facets(known):
    assert known.hits(dtype=["<f4"]) == known.hits(dtype=["float32"]) == known.hits(dtype=[">f4", "float32"])
    assert known.hits(codec=["ZSTD"]) == known.hits(codec=["numcodecs.zstd"]) == known.hits(codec=["zstd"])
    assert ("float32", len(known.hits(dtype=["float32"]))) in known.search(SearchQuery(dtype=["<f4"])).facets["dtype"]


def test_unknown_selected_value_is_listed_with_zero(known):
    result = known.search(SearchQuery(dtype=["../../etc/passwd"]))
    assert result.total == 0
    assert ("../../etc/passwd", 0) in result.facets["dtype"]
    assert sum(c for _, c in result.facets["dtype"]) > 0  # the alternatives are still counted


def test_free_text_by_field(known):
    synthetic = [e for e in known.expected.values() if e.name.startswith("ds-")]
    assert known.names(q="toy") == {"ocean_model_v3.zarr"}  # title
    assert known.names(q="xarray") == {"cf_air_temperature_v3.zarr", "cf_sea_surface_v2.zarr"}  # summary
    assert known.names(q="ssh") == {"ocean_model_v3.zarr"}  # variable name
    assert known.names(q="centre") == {"ocean_model_v3.zarr"}  # long name ("depth of layer centre")
    cmip6 = {e.name for e in synthetic if any(fold(k) == "cmip6" for k in e.keywords)}
    assert cmip6 and known.names(q="CMIP6") == cmip6  # keyword only
    assert "cf_air_temperature_v3.zarr" in known.names(q="climate")  # keyword of the example
    assert known.names(q="surface_altitude") >= {"zarr_v3_lone_array.zarr"}  # standard name tokens


def test_case_and_accents_do_not_matter(known):
    accented = {e.name for e in known.expected.values() if "modèle" in e.keywords}
    assert known.names(q="MODELE") >= accented
    assert known.names(q="TOY Océan") == known.names(q="toy ocean") == {"ocean_model_v3.zarr"}


def test_all_terms_must_match(known):
    assert known.names(q="toy xarray") == set()
    assert known.names(q="sea surface temperature monthly") >= {"cf_sea_surface_v2.zarr"}


@pytest.mark.parametrize("q", ["sea", "sea ice", "ocean temp", "Température", "arctic sea", "air_temperature",
                               "monthly mean", "synthetic daily", "x", "depth m", "glacier hydrology", "zzz"])
def test_free_text_matches_the_oracle(known, q):
    assert known.names(q=q) == {e.name for e in known.expected.values() if text_matches(e, q)}


def test_last_term_is_a_prefix(known):
    assert known.names(q="cent") == {"ocean_model_v3.zarr"}
    assert known.names(q="toy cent") == {"ocean_model_v3.zarr"}
    assert known.names(q="cent toy") == set()  # only the last term is a prefix
    assert known.names(q="xarr") == known.names(q="xarray")


def test_too_many_terms_and_bad_sort_are_refused(known):
    with pytest.raises(QueryError):
        known.search(SearchQuery(q=" ".join(f"w{i}" for i in range(40))))
    with pytest.raises(QueryError):
        known.search(SearchQuery(sort="drop"))


def _dataset(iri: str, title: str, *, keywords=(), var=("v", None), summary_text=None, harvested=None):
    return summary(iri, title, keywords=keywords, variables=[variable(iri, var[0], var[1], valid=True)],
                   summary_text=summary_text, harvested=harvested, valid=True)


def _order(cat: catalogue.Catalogue, **kw: Any) -> list[str]:
    return [h.iri for h in cat.search(SearchQuery(**kw)).hits]


def test_ranking_title_then_keywords_then_variables_then_summary(db_url):
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    datasets = [
        _dataset("x:summary", "A", summary_text="about glaciers", harvested=t0),
        _dataset("x:variable", "B", var=("glacier_mass", None), harvested=t0 + timedelta(days=1)),
        _dataset("x:longname", "C", var=("m", "Glacier mass"), harvested=t0 + timedelta(days=2)),
        _dataset("x:keyword", "D", keywords=["Glaciers"], harvested=t0 + timedelta(days=3)),
        _dataset("x:title2", "Zermatt glacier", harvested=t0 + timedelta(days=4)),
        _dataset("x:title1", "Aletsch Glacier", harvested=t0 + timedelta(days=5)),
        _dataset("x:none", "E", summary_text="nothing here"),
    ]
    with catalogue.open(db_url) as cat:
        write_datasets(cat, datasets)
        # what the index holds is what was written (read back from the graphs)
        stored = {h.iri: h.summary() for h in cat.search(SearchQuery(limit=50)).hits}
        assert stored == {d.iri: d for d in datasets}
        # title matches first (ties by title), then keywords, then variables (ties by title), then summary
        assert _order(cat, q="glacier") == ["x:title1", "x:title2", "x:keyword", "x:variable", "x:longname",
                                            "x:summary"]
        # "glacier" is exact in titles and variables, a prefix of "glaciers": the last term matches both
        assert _order(cat, q="mass glacier") == ["x:variable", "x:longname"]
        assert _order(cat, q="glacier", sort="title")[:2] == ["x:summary", "x:title1"]
        assert _order(cat, sort="-harvested", limit=2) == ["x:title1", "x:title2"]
        assert _order(cat, sort="harvested", limit=1) == ["x:summary"]
        assert _order(cat, sort="harvested")[-1] == "x:none"  # undated last
        # the stem of a query term finds the word's other forms
        assert set(_order(cat, q="glaciers mass")) == {"x:longname", "x:variable"}


def test_prose_is_stemmed_identifiers_are_not(db_url):
    with catalogue.open(db_url) as cat:
        write_datasets(cat, [_dataset("s:prose", "P", var=("m", "Glaciers mass")),
                             _dataset("s:identifier", "I", var=("glaciers_mass", None))])
        # "glacier" (not the last term, so no prefix) is the stem of the long name's "glaciers"
        assert _order(cat, q="glacier mass") == ["s:prose"]
        assert set(_order(cat, q="glaciers mass")) == {"s:prose", "s:identifier"}
        assert set(_order(cat, q="mass glacier")) == {"s:prose", "s:identifier"}  # the last: a prefix


def test_scores_add_up_over_terms(db_url):
    with catalogue.open(db_url) as cat:
        write_datasets(cat, [_dataset("a:summary", "Glacier", summary_text="mass balance"),
                             _dataset("b:variable", "Glacier", var=("mass", None))])
        # both match "glacier" in the title; "mass" in a variable (2) beats "mass" in the summary (1)
        assert _order(cat, q="glacier mass") == ["b:variable", "a:summary"]
        assert _order(cat, q="glacier") == ["a:summary", "b:variable"]


@pytest.mark.parametrize("sort", ["relevance", "title", "harvested", "-harvested"])
def test_paging_is_disjoint_and_complete(known, sort):
    q = "sea" if sort == "relevance" else ""
    full = known.hits(q=q, sort=sort)
    assert len(full) == known.search(SearchQuery(q=q)).total > 5
    pages: list[str] = []
    for offset in range(0, len(full) + 4, 4):
        result = known.search(SearchQuery(q=q, sort=sort, limit=4, offset=offset))
        assert result.total == len(full)
        pages += [d.iri for d in result.hits]
    assert pages == full and len(set(pages)) == len(pages)


def test_sorting(known):
    titles = [known.get(i).title for i in known.hits(sort="title")]
    assert titles == sorted(titles, key=lambda t: (fold(t), t))
    assert known.hits() == known.hits(sort="title")  # relevance without q is title order
    oldest = known.hits(sort="harvested")
    times = [known.get(i).harvested for i in oldest]
    assert times == sorted(times)
    assert oldest[0] == known.order[0] and known.hits(sort="-harvested")[0] == known.order[-1]


def test_harvested_since(known):
    times = sorted(d.harvested for d in known.datasets())
    middle = times[len(times) // 2]
    since = set(known.hits(harvested_since=middle))
    assert since == {d.iri for d in known.datasets() if d.harvested >= middle}
    assert 0 < len(since) < len(times)
    assert known.hits(harvested_since=times[-1] + timedelta(seconds=1)) == []
    assert len(known.hits(harvested_since=datetime(2000, 1, 1))) == len(times)  # naive: UTC
    result = known.search(SearchQuery(harvested_since=middle))
    assert sum(c for _, c in result.facets["zarr_format"]) == len(since)  # facets honour it too


# ------------------------------------------------------------------ the server: no build, cached answers
def test_answers_are_cached_until_the_index_changes(db_url):
    """A server builds nothing at start; each process keeps answers until the index's
    generation changes, and a harvest is seen within the recheck interval."""
    from catalogue.web.app import create_app
    from catalogue.web.datasets import datasets_encoded
    from catalogue.web.search_cache import search_cache

    with catalogue.open(db_url) as cat:
        cat.harvest(str(EXAMPLES / "cf_air_temperature_v3.zarr"))

    async def scenario() -> None:
        app = create_app(Settings(db=db_url))
        async with app.router.lifespan_context(app):
            cache = search_cache(app)
            pool = app.state.pool
            first = await asyncio.gather(*(cache.answer(pool, "datasets", SearchQuery(), datasets_encoded,
                                                        recheck=0.0) for _ in range(5)))
            assert len({id(b) for b in first}) == 1 and json.loads(first[0].plain())["total"] == 1
            assert (cache.misses, cache.hits) == (1, 4)  # computed once, shared by the concurrent requests
            generation = cache.generation
            await asyncio.to_thread(_harvest, db_url, EXAMPLES / "ocean_model_v3.zarr")
            # within the recheck interval the cached answer serves; after it, the new one
            kept = await cache.answer(pool, "datasets", SearchQuery(), datasets_encoded, recheck=3600)
            assert json.loads(kept.plain())["total"] == 1
            after = json.loads((await cache.answer(pool, "datasets", SearchQuery(), datasets_encoded,
                                                   recheck=0.0)).plain())
            assert after["total"] == 2 and cache.generation != generation

    asyncio.run(scenario())


def _harvest(db: str, source: pathlib.Path) -> None:
    with catalogue.open(db) as cat:
        cat.harvest(str(source))


# ------------------------------------------------------------------ HTTP
def get(base: str, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        body = e.read()
        return e.code, json.loads(body)


@pytest.fixture(scope="module")
def catalogue_sources(known) -> list[pathlib.Path]:
    """The known catalogue's stores: ``web_server`` (tests/web/conftest.py) serves it."""
    return known.roots


@pytest.fixture(scope="module")
def catalogue_db(known) -> str:
    return known.db


def test_http_search_answers_are_gzipped_for_clients_that_accept_it(web_server, known):
    """Pages of hits go compressed to clients accepting gzip (the cache keeps them so),
    plain to the others; both carry Vary: Accept-Encoding and the same JSON."""
    import gzip

    def fetch(*accept: str) -> tuple[dict[str, str], bytes]:
        """GET with these Accept-Encoding lines (none: no such header at all)."""
        import http.client
        import urllib.parse as parse

        url = parse.urlsplit(web_server.base)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        try:
            conn.putrequest("GET", "/datasets?limit=50", skip_accept_encoding=True)
            for line in accept:
                conn.putheader("Accept-Encoding", line)
            conn.endheaders()
            r = conn.getresponse()  # http.client does not decompress
            assert r.status == 200
            return {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    plain_headers, plain = fetch()
    assert "content-encoding" not in plain_headers and plain_headers["vary"] == "Accept-Encoding"
    assert len(plain) >= 1024  # long enough to be compressed
    for accept in (("gzip",), ("br, gzip;q=0.5",), ("*",), ("deflate, x-gzip",), ("br", "gzip")):
        headers, body = fetch(*accept)
        assert headers["content-encoding"] == "gzip", accept
        assert int(headers["content-length"]) == len(body) < len(plain)
        assert json.loads(gzip.decompress(body)) == json.loads(plain)
    for refused in (("identity",), ("gzip;q=0",), ("br",), ("*;q=0",), ("*, gzip;q=0",), ("br", "gzip;q=0")):
        headers, body = fetch(*refused)
        assert "content-encoding" not in headers and body == plain, refused


def test_accept_encoding_and_encoded_bodies():
    import gzip

    from catalogue.web.http.encoding import MIN_BYTES, accepts_gzip, encode

    assert accepts_gzip("gzip") and accepts_gzip("GZIP;q=0.1") and accepts_gzip("*") and accepts_gzip("x-gzip")
    assert accepts_gzip("gzip;q=oops")  # a malformed q-value counts as 1
    assert accepts_gzip("gzip;q=nan, gzip") and accepts_gzip("gzip;q=-1") and accepts_gzip("gzip;q=inf")
    assert not accepts_gzip(None) and not accepts_gzip("") and not accepts_gzip("identity")
    assert not accepts_gzip("gzip;q=0, *") and not accepts_gzip("*;q=0") and not accepts_gzip("br, deflate")
    small, large = b"x" * (MIN_BYTES - 1), b'{"a": 1}' * 1000
    assert encode(small).data == small and not encode(small).gzip and encode(small).plain() == small
    packed = encode(large)
    assert packed.gzip and gzip.decompress(packed.data) == large == packed.plain()
    assert len(packed) == len(packed.data) < len(large) // 10  # what the cache counts
    assert encode(large).data == packed.data  # no timestamp: equal bodies, equal bytes


def test_http_search_response(web_server, known):
    status, page = get(web_server.base, "/datasets?q=toy")
    assert status == 200
    assert set(page) >= {"total", "limit", "offset", "hits", "facets"}
    assert (page["total"], page["limit"], page["offset"], page["sort"]) == (1, 20, 0, "relevance")
    hit = page["hits"][0]
    iri = known.iri("ocean_model_v3.zarr")
    assert hit["iri"] == iri and hit["title"] == "Toy regional ocean model output (synthetic)"
    assert set(hit) >= {"summary", "keywords", "zarr_format", "harvested", "valid", "groups", "arrays", "variables"}
    encoded = urllib.parse.quote(iri, safe="")
    assert hit["links"] == {"node": f"/node?iri={encoded}", "portal": f"/browse?iri={encoded}",
                            "metadata": f"/node?iri={encoded}&format=json",
                            "turtle": f"/node?iri={encoded}&format=turtle"}
    assert "%3A%2F%2F" in hit["links"]["node"]
    ssh = next(v for v in hit["variables"] if v["name"] == "ssh")
    assert ssh["codecs"] == ["sharding_indexed", "bytes", "zstd"] and ssh["shape"] == [8, 32, 32]
    assert datetime.fromisoformat(hit["harvested"]) == known.get(iri).harvested
    assert set(page["facets"]) == set(FACETS)
    assert page["facets"]["zarr_format"] == [{"value": "3", "count": 1}]


def test_http_sortby_is_sort_in_the_stac_syntax(web_server, known):
    for sortby, sort in (("-datetime", "-start"), ("+datetime", "start"), ("start_datetime", "start"),
                         ("title", "title"), ("-harvested", "-harvested"), (" harvested", "harvested")):
        status, page = get(web_server.base, "/datasets?" + urllib.parse.urlencode({"sortby": sortby, "limit": 50}))
        assert status == 200 and page["sort"] == sort
        assert [h["iri"] for h in page["hits"]] == known.hits(sort=sort)[:50]


def test_http_filters_paging_and_facets_match_the_index(web_server, known):
    path = ("/datasets?dtype=float32&dtype=int16&codec=zstd&valid=true&limit=3&offset=1&sort=-harvested"
            "&harvested_since=2000-01-01")
    status, page = get(web_server.base, path)
    assert status == 200
    direct = known.search(SearchQuery(dtype=["float32", "int16"], codec=["zstd"], valid=True, limit=3,
                                            offset=1, sort="-harvested",
                                            harvested_since=datetime(2000, 1, 1, tzinfo=UTC)))
    assert page["total"] == direct.total and [h["iri"] for h in page["hits"]] == [d.iri for d in direct.hits]
    assert page["facets"] == {f: [{"value": v, "count": c} for v, c in direct.facets[f]] for f in FACETS}
    status, page = get(web_server.base, "/datasets?zarr_format=2&harvested_since=2000-01-01T00:00:00Z&q=S%C3%A9A")
    assert status == 200 and page["total"] == len(known.hits(zarr_format=[2], q="sea"))


@pytest.mark.parametrize("query", [
    "limit=1000000000000", "limit=0", "limit=201", "offset=-1", "offset=10001", "sort=drop", "sort=title;DROP",
    "q=" + "a" * 501, "q=%FF", "q=caf%C3", "dtype=%C3%28", "harvested_since=yesterday",
    "harvested_since=2024-13-01", "zarr_format=4", "zarr_format=x", "valid=maybe", "limit=abc",
    "dtype=" + "x" * 201, "&".join(["codec=c"] * 51), "q=" + "+".join(f"w{i}" for i in range(33)),
    "q=%00%01", "units=%0A", "sortby=-title", "sortby=size", "sortby=title,-datetime", "sort=title&sortby=title",
    "sortby=" + "x" * 201,
])
def test_http_hostile_parameters_are_400(web_server, query):
    status, body = get(web_server.base, "/datasets?" + query)
    assert status == 400, body
    assert set(body) == {"error", "status"} and body["status"] == 400
    assert "\n" not in body["error"] and "Traceback" not in body["error"] and len(body["error"]) < 300


@pytest.mark.parametrize("query", ["q=..%2F..%2Fetc%2Fpasswd", "dtype=%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                                   "standard_name=../../etc/passwd", "q=%3Cscript%3E"])
def test_http_traversal_strings_are_just_search_text(web_server, query):
    """Nothing is read from files by a search: such values simply match nothing."""
    status, page = get(web_server.base, "/datasets?" + query)
    assert status == 200 and page["total"] == 0 and page["hits"] == []


def test_openapi_documents_datasets(web_server):
    status, doc = get(web_server.base, "/openapi.json")
    assert status == 200
    from openapi_spec_validator import validate

    validate(doc)  # the whole document: every endpoint's operations and schemas
    assert {"/datasets", "/sparql", "/node", "/catalog", "/export", "/health"} <= set(doc["paths"])
    operation = doc["paths"]["/datasets"]["get"]
    params = {p["name"]: p for p in operation["parameters"]}
    assert set(params) == {"q", "dtype", "dimension", "standard_name", "units", "zarr_format", "codec", "valid",
                           "harvested_since", "bbox", "datetime", "limit", "offset", "sort", "sortby", "axis_type",
                           "axis_unit"}
    assert all(p["in"] == "query" and p.get("description") for p in params.values())
    assert "antimeridian" in params["bbox"]["description"] and "'..'" in params["datetime"]["description"]
    assert set(params["sort"]["schema"]["enum"]) >= {"start", "-start"}
    assert params["dtype"]["schema"]["type"] == "array"
    assert params["limit"]["schema"]["maximum"] == 200 and params["offset"]["schema"]["maximum"] == 10_000
    ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok["$ref"].endswith("/DatasetsPage")
    page = doc["components"]["schemas"]["DatasetsPage"]
    assert set(page["properties"]) >= {"total", "limit", "offset", "hits", "facets"}
    assert "400" in operation["responses"]


def test_http_sees_a_new_harvest_without_restart(db_url):
    with catalogue.open(db_url) as cat:
        cat.harvest(str(EXAMPLES / "cf_sea_surface_v2.zarr"))
    with serve(Settings(db=db_url)) as base:
        status, page = get(base, "/datasets?q=toy")
        assert status == 200 and page["total"] == 0
        _harvest(db_url, EXAMPLES / "ocean_model_v3.zarr")
        deadline = datetime.now(UTC) + timedelta(seconds=20)
        while True:
            status, page = get(base, "/datasets?q=toy")
            assert status == 200
            if page["total"] == 1 or datetime.now(UTC) > deadline:
                break
            time.sleep(0.2)
        assert page["total"] == 1 and page["hits"][0]["title"].startswith("Toy")
        status, page = get(base, "/datasets")
        assert page["total"] == 2


def test_empty_catalogue(db_url):
    with catalogue.open(db_url) as cat:
        result = cat.search(SearchQuery(q="anything", dtype=["float32"], harvested_since=datetime(2020, 1, 1)))
        assert (result.total, result.hits) == (0, [])
        assert result.facets["dtype"] == [("float32", 0)] and result.facets["codec"] == []
        assert cat.search(SearchQuery()).total == 0 and cat.totals().datasets == 0


def test_dependent_arrays_are_variables(db_url, tmp_path):
    root = stores.build_dependent_arrays(tmp_path)
    with catalogue.open(db_url) as cat:
        iri = cat.harvest(str(root)).graph
        found = cat.search(SearchQuery()).hits[0].summary()
    assert found.iri == iri
    paths = {v.path for v in found.variables}
    assert {"multiscale", "multiscale/s1", "multiscale/s2", "labels", "labels/coarse"} <= paths
    assert found.arrays == len(paths)
