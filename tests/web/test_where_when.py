"""bbox and datetime: one parser, one meaning, for /datasets, the portal and STAC."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import catalogue
from catalogue.discovery.query import SearchQuery
from catalogue.discovery.summary import DatasetSummary
from catalogue.model.extents import Box, Extent, Period
from catalogue.web.http.errors import HTTPError
from catalogue.web.http.where_when import parse_bbox, parse_datetime
from tests.support.search_graphs import summary, variable, write_datasets


def test_bbox_parses_four_or_six_numbers():
    assert parse_bbox("1,2,3,4") == Box(1, 2, 3, 4)
    assert parse_bbox(" 170, -10, -170, 10 ").crosses_antimeridian
    assert parse_bbox("1,2,0,3,4,100") == Box(1, 2, 3, 4)


@pytest.mark.parametrize("text", ["1,2,3", "a,b,c,d", "1,2,3,nan", "0,50,10,40", "0,-95,10,0", "200,0,210,1", "1," * 200])
def test_bad_bbox_is_a_400_naming_the_parameter(text):
    with pytest.raises(HTTPError) as caught:
        parse_bbox(text)
    assert caught.value.status == 400 and caught.value.message.startswith("bbox")


def test_datetime_instants_intervals_and_open_ends():
    day = datetime(2020, 1, 1, tzinfo=UTC)
    assert parse_datetime("2020-01-01T00:00:00Z") == (day, day)
    assert parse_datetime("2020-01-01T02:00:00+02:00") == (day, day)
    start, end = parse_datetime("2020-01-01")
    assert start == day and end == datetime(2020, 1, 1, 23, 59, 59, 999999, tzinfo=UTC)
    assert parse_datetime("2020-01-01T00:00:00Z/..") == (day, None)
    assert parse_datetime("../2020-01-01T00:00:00Z") == (None, day)
    assert parse_datetime("/2020-01-01T00:00:00Z") == (None, day)


def test_datetime_at_the_ends_of_the_range_clamps_there():
    first, last = datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)
    assert parse_datetime("9999-12-31") == (datetime(9999, 12, 31, tzinfo=UTC), last)
    assert parse_datetime("../9999-12-31") == (None, last)
    assert parse_datetime("9999-12-31T23:59:59-01:00") == (last, last)
    assert parse_datetime("0001-01-01T00:00:00+01:00") == (first, first)
    assert parse_datetime("0001-01-01/0001-01-01T00:30:00+01:00") == (first, first)
    assert parse_datetime("0001-01-01T00:00:00Z/9999-12-31T23:59:59.999999Z") == (first, last)


@pytest.mark.parametrize("text", ["../..", "yesterday", "2021-01-01/2020-01-01", "2020-13-01"])
def test_bad_datetime_is_a_400_naming_the_parameter(text):
    with pytest.raises(HTTPError) as caught:
        parse_datetime(text)
    assert caught.value.status == 400 and caught.value.message.startswith("datetime")


def _dataset(iri: str, box: Box | None, period: Period | None) -> DatasetSummary:
    extent = Extent(bbox=box, period=period) if box or period else None
    return summary(f"urn:x:{iri}", iri, extent=extent)


@pytest.fixture
def cat(db_url):
    with catalogue.open(db_url) as found:
        write_datasets(found, [
            _dataset("europe", Box(-10, 35, 30, 70), Period("2020-01-01", "2020-12-31")),
            _dataset("pacific", Box(160, -20, -160, 20), Period("2019-06-01T00:00:00Z", "2019-06-30T18:00:00Z")),
            _dataset("global", Box(-180, -90, 180, 90), Period("1850-01-01", "2100-12-30", "360_day")),
            _dataset("nowhere", None, None),
        ])
        yield found


def _hits(cat: catalogue.Catalogue, **kw) -> list[str]:
    return sorted(h.iri.removeprefix("urn:x:") for h in cat.search(SearchQuery(limit=100, **kw)).hits)


def test_extents_read_back_from_the_graphs(cat):
    stored = {h.iri: h.summary().extent for h in cat.search(SearchQuery(limit=10)).hits}
    assert stored["urn:x:pacific"] == Extent(bbox=Box(160, -20, -160, 20),
                                             period=Period("2019-06-01T00:00:00Z", "2019-06-30T18:00:00Z"))
    assert stored["urn:x:global"].period.calendar == "360_day" and stored["urn:x:nowhere"] is None


def test_bbox_filter_intersects_across_the_antimeridian(cat):
    assert _hits(cat, bbox=Box(0, 40, 10, 50)) == ["europe", "global"]
    assert _hits(cat, bbox=Box(175, 0, 179, 5)) == ["global", "pacific"]
    assert _hits(cat, bbox=Box(-179, 0, -175, 5)) == ["global", "pacific"]
    assert _hits(cat, bbox=Box(170, -5, -170, 5)) == ["global", "pacific"]  # both cross
    # one box meeting both halves of a dataset's split box: the dataset is listed once
    assert _hits(cat, bbox=Box(-180, -10, 180, 10)) == ["global", "pacific"]
    assert _hits(cat, bbox=Box(-100, -80, -90, -70)) == ["global"]
    # touching edges intersect, exactly (the box index's float32 rounding never decides)
    assert _hits(cat, bbox=Box(30, 70, 31, 71)) == ["europe", "global"]
    assert _hits(cat, bbox=Box(30.000001, 70.000001, 31, 71)) == ["global"]
    assert _hits(cat, bbox=Box(-160, 20, -150, 30)) == ["global", "pacific"]
    assert _hits(cat, bbox=Box(-159.99999, 20.00001, -150, 30)) == ["global"]


def test_datetime_filter_overlaps_with_open_ends(cat):
    def at(y, m, d):
        return datetime(y, m, d, tzinfo=UTC)
    assert _hits(cat, datetime=(at(2020, 6, 1), at(2020, 6, 2))) == ["europe", "global"]
    assert _hits(cat, datetime=(None, at(1900, 1, 1))) == ["global"]
    assert _hits(cat, datetime=(at(2019, 6, 30), None)) == ["europe", "global", "pacific"]
    assert _hits(cat, datetime=(at(2019, 7, 1), at(2019, 12, 31))) == ["global"]
    # a date's whole day is covered: europe ends 2020-12-31, which includes its evening
    assert _hits(cat, datetime=(datetime(2020, 12, 31, 22, tzinfo=UTC), None)) == ["europe", "global"]
    # microseconds count: pacific ends 18:00:00.000000 exactly
    assert _hits(cat, datetime=(datetime(2019, 6, 30, 18, tzinfo=UTC), datetime(2019, 6, 30, 19, tzinfo=UTC))) == [
        "global", "pacific"]
    assert _hits(cat, datetime=(datetime(2019, 6, 30, 18, 0, 0, 1, tzinfo=UTC), at(2019, 7, 1))) == ["global"]
    assert _hits(cat, datetime=(None, None)) == ["europe", "global", "pacific"]


def test_sort_by_start_puts_undated_last(cat):
    order = [h.iri.removeprefix("urn:x:") for h in cat.search(SearchQuery(sort="start", limit=10)).hits]
    assert order == ["global", "pacific", "europe", "nowhere"]
    order = [h.iri.removeprefix("urn:x:") for h in cat.search(SearchQuery(sort="-start", limit=10)).hits]
    assert order == ["europe", "pacific", "global", "nowhere"]


def test_the_index_reads_root_extents_from_the_graph(tmp_path, db_url):
    """Extents in the graph (harvested, or written as the harvest writes them) reach the
    search index in the transaction that writes them, on both databases."""
    from rdflib import Graph, URIRef

    from catalogue.rdf.extents import extent_statements, extent_triples
    from tests.support.paths import EXAMPLES

    extent = Extent(bbox=Box(170, -10, -170, 10), period=Period("2001-01-01T00:00:00Z", "2001-12-31T00:00:00Z"))
    with catalogue.open(db_url) as cat:
        graphs = [cat.harvest(str(root)).graph for root in sorted(EXAMPLES.glob("*.zarr"))]
        root = URIRef(graphs[0])
        graph = Graph(store=cat.store, identifier=root)
        with cat.store.write_transaction():
            for triple in list(extent_statements(graph)):  # what the harvest found, replaced
                cat.store.remove(triple, graph)
            cat.store.addN((s, p, o, root) for s, p, o in extent_triples(root, extent))
        found = {h.iri: h.summary() for h in cat.search(SearchQuery(limit=10)).hits}

        def hits(**kw) -> list[str]:
            return sorted(h.iri for h in cat.search(SearchQuery(limit=100, **kw)).hits)

        assert found[graphs[0]].extent == extent
        assert found[graphs[1]].extent.period == Period("2022-01-01", "2022-03-01")  # as harvested
        assert found[graphs[2]].extent is None  # the ocean model says nothing of where or when
        assert hits(bbox=Box(-175, 0, -172, 1)) == sorted(graphs[:2])  # the sea surface grid is global
        assert hits(bbox=Box(0, 0, 1, 1)) == [graphs[1]]
        assert hits(datetime=(datetime(2002, 1, 1, tzinfo=UTC), datetime(2021, 1, 1, tzinfo=UTC))) == []


def test_alternatives_match_any_and_rank_by_the_best(db_url):
    """STAC free text: ``q=a,b`` keeps datasets matching every word of a or of b."""
    with catalogue.open(db_url) as cat:
        write_datasets(cat, [summary("u:a", "Earth observation mosaic"), summary("u:b", "Sea ice", keywords=["EO"]),
                             summary("u:c", "Ocean model"), summary("u:d", "Earth rotation")])

        def search(**kw):
            return cat.search(SearchQuery(limit=10, **kw))

        # a matches in its title (8+8), b in a keyword (4)
        assert [h.iri for h in search(any_of=["EO", "Earth observation"]).hits] == ["u:a", "u:b"]
        assert search(any_of=["earth"]).total == 2
        assert search(any_of=["earth", "ocean", "nothing"]).total == 3
        assert search(q="earth observation").total == 1  # /datasets: all words


@pytest.mark.parametrize("row_checks", [3000, 0], ids=["from the row", "by the index"])
def test_facet_values_of_any_text_filter_alike_from_the_row_or_the_index(db_url, row_checks, monkeypatch):
    """A few candidates (a box) check facet values and words from each row's own data
    (its JSON tags, its lexemes); many, through the facet and text indexes. Values with
    quotes, backslashes, a colon and non-ASCII letters must match the same either way."""
    import catalogue.discovery.conditions as conditions

    monkeypatch.setattr(conditions, "ROW_CHECKS", row_checks)
    odd = ['µmol "m"-2', "K\\s", "a:b, c", "é", 'x"3:K', 'K\\']
    with catalogue.open(db_url) as cat:
        write_datasets(cat, [
            summary(f"u:{n}", f"Ocean flux {n}", extent=Extent(bbox=Box(n, 0, n + 1, 1)),
                    variables=[variable(f"u:{n}/v", "v", units=u)])
            for n, u in enumerate(odd)])

        def hits(**kw) -> list[str]:
            return sorted(h.iri for h in cat.search(SearchQuery(limit=10, bbox=Box(-1, -1, 10, 2), **kw)).hits)

        for n, unit in enumerate(odd):
            assert hits(units=[unit]) == [f"u:{n}"], unit
            assert hits(q="flux", units=[unit]) == [f"u:{n}"], unit
        assert hits(units=['"m"-2', "K", "a", "m", "x"]) == []  # a part of a value is not the value
        assert hits(q="fluxes ocean", units=odd[:2]) == ["u:0", "u:1"]
        assert hits(q="oce") == [f"u:{n}" for n in range(len(odd))]
        assert hits(q="ocea flux") == []  # only the last word is a prefix
        facets = cat.search(SearchQuery(limit=0, bbox=Box(-1, -1, 10, 2), units=[odd[0]])).facets["units"]
        assert sorted(facets) == sorted((u, 1) for u in odd)
