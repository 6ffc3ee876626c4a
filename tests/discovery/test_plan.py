"""SQLite's search plan: which condition lists its datasets, which are checked row by
row, and the vocabulary counts that steer it (:mod:`catalogue.discovery.conditions`).

The plan may only change how fast a search is, never what it answers: the answers are
compared with the plan forced each way, and with absurd estimates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import text

import catalogue
import catalogue.discovery.conditions as conditions
import catalogue.discovery.query as query_module
from bench.search_scale import write_extents_catalogue
from catalogue.discovery.conditions import Condition, plan
from catalogue.discovery.query import SearchQuery
from catalogue.model.extents import Box

SEARCHES = [
    SearchQuery(q="temperature", bbox=Box(-60, -40, 20, 30),
                datetime=(datetime(1990, 1, 1, tzinfo=UTC), datetime(2005, 12, 31, tzinfo=UTC))),
    SearchQuery(q="sea", bbox=Box(150, -30, -150, 30), dtype=["float32"], units=["K"]),
    SearchQuery(q="ocean s", datetime=(datetime(1970, 1, 1, tzinfo=UTC), None), dimension=["time"]),
    SearchQuery(q="wind", sort="title", bbox=Box(-180, -90, 180, 90)),
    SearchQuery(q="glacier", dtype=["float64", "int16"]),
]


@pytest.fixture(scope="module")
def extents_db(module_db_url, tmp_path_factory) -> str:
    """400 datasets with boxes (some huge, some across the antimeridian) and periods."""
    source = tmp_path_factory.mktemp("plan") / "extents.nq"
    write_extents_catalogue(source, 400)
    with catalogue.open(module_db_url) as cat:
        cat.load(str(source))
    return module_db_url


def _answers(db: str) -> list[tuple]:
    with catalogue.open(db) as cat:
        return [(r.total, [h.json for h in r.hits], r.facets) for r in map(cat.search, SEARCHES)]


def _condition(name: str, rows: int, *, row_check: bool = True) -> Condition:
    return Condition(f"{name}_check", driver=f"SELECT {name}", estimate=lambda: rows,
                     row_check=f"{name}_row" if row_check else None)


def test_the_least_condition_drives_and_a_much_larger_one_is_checked_from_the_row():
    box, word = _condition("box", 5_000, row_check=False), _condition("word", 80_000)
    found = plan([word, box])
    assert found.source.startswith("(SELECT box)")
    # 5,000 driver rows are more than ROW_CHECKS, but the word's set is 16 times larger:
    # listing it would cost more than reading each driver row's words
    assert "word_row" in found.where and "word_check" not in found.where
    close = _condition("word", 12_000)
    found = plan([close, _condition("box", 5_000, row_check=False)])
    assert "word_check" in found.where and "word_row" not in found.where
    small = plan([_condition("word", 12_000), _condition("box", 2_000, row_check=False)])
    assert small.small and "word_row" in small.where


def test_answers_do_not_depend_on_the_plan(extents_db, monkeypatch):
    expected = _answers(extents_db)
    assert any(total for total, _hits, _facets in expected)
    for limits in ({"ROW_CHECKS": 0, "ROW_CHECK_RATIO": 10**9}, {"ROW_CHECKS": 0, "ROW_CHECK_RATIO": 1},
                   {"ROW_CHECKS": 10**9}, {"PYTHON_FACETS": 0, "PYTHON_RANKING": 0},
                   {"PYTHON_FACETS": 10**9, "PYTHON_RANKING": 10**9}):
        with monkeypatch.context() as patch:
            for name, value in limits.items():
                patch.setattr(conditions if hasattr(conditions, name) else query_module, name, value)
            assert _answers(extents_db) == expected, limits
    for absurd in (0, 10**9):  # estimates steer the plan only
        with monkeypatch.context() as patch:
            patch.setattr(conditions, "vocabulary_count", lambda *_a, _n=absurd, **_k: _n)
            patch.setattr(conditions, "text_share", lambda *_a, _n=absurd, **_k: _n)  # PostgreSQL's
            assert _answers(extents_db) == expected, absurd


def test_postgresql_reads_huge_boxes_apart_and_common_words_from_the_row(extents_db):
    if not extents_db.startswith("postgresql"):
        pytest.skip("PostgreSQL's plan")
    query = SEARCHES[0]
    with catalogue.open(extents_db) as cat:
        conn = cat.store.connection
        conn.execute(text("ANALYZE search_datasets"))
        conditions._lexemes.clear()  # statistics read before the ANALYZE are kept a while
        sql = conditions.Sql(conn)
        base = query_module._base(sql, query, query.alternatives())
        chosen = plan(base)
        where = chosen.where
        # both box indexes' arms leave the huge boxes out, with the partial index's predicate
        assert where.count("area(d.env) < 16200") == 2 and "d.env && box(" in where
        assert "strpos(d.words" in where  # "temperature" is in most datasets' text
        huge = conditions.huge_arm(chosen, base)
        assert huge is not None and huge.startswith("search_huge d WHERE") and "d.span &&" in huge
        assert "strpos(d.words" in huge and "d.doc" not in huge
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        shown = "\n".join(r[0] for r in conn.execute(text(f"EXPLAIN SELECT d.gid FROM {chosen.source} "
                                                           f"WHERE {where}"), sql.params))
        assert "ix_search_datasets_near" in shown and "ix_search_datasets_far" in shown, shown
        assert "ix_search_datasets_doc" not in shown and "ix_search_datasets_start" not in shown, shown
        shown = "\n".join(r[0] for r in conn.execute(text(f"EXPLAIN SELECT d.gid FROM {huge}"), sql.params))
        assert "ix_search_huge_span" in shown, shown
        cat.store.rollback()


def test_sqlite_asks_search_huge_only_when_the_box_index_drives(extents_db, monkeypatch):
    if not extents_db.startswith("sqlite"):
        pytest.skip("SQLite's plan")
    with catalogue.open(extents_db) as cat:
        conn = cat.store.connection
        for rare, driven in ((10**9, True), (0, False)):  # the text listing more, or fewer, than the box
            monkeypatch.setattr(conditions, "vocabulary_count", lambda *_a, _n=rare, **_k: _n)
            sql = conditions.Sql(conn)
            base = query_module._base(sql, SEARCHES[0], SEARCHES[0].alternatives())
            chosen = plan(base)
            assert ("search_boxes" in chosen.source) is driven
            huge = conditions.huge_arm(chosen, base)
            assert (huge is not None) is driven
            if huge is not None:
                assert "d.since <= " in huge and "instr(d.words" in huge
                shown = " ".join(str(r[-1]) for r in conn.execute(
                    text(f"EXPLAIN QUERY PLAN SELECT d.gid FROM {huge}"), sql.params))
                assert "SEARCH d USING PRIMARY KEY (since<?)" in shown, shown
        cat.store.rollback()


def test_vocabulary_counts_are_remembered_for_a_while(extents_db, monkeypatch):
    if not extents_db.startswith("sqlite"):
        pytest.skip("FTS5's vocabulary")
    with catalogue.open(extents_db) as cat:
        conn = cat.store.connection
        exact = int(conn.execute(text("SELECT doc FROM search_text_vocab WHERE term = 'ocean'")).scalar())
        prefixed = int(conn.execute(text("SELECT sum(doc) FROM search_text_vocab WHERE term > 'oc' "
                                         "AND term < 'oc\U0010ffff'")).scalar())
        assert exact > 0 and prefixed >= exact
        assert conditions.vocabulary_count(conn, "ocean", prefix=False) == exact
        assert conditions.vocabulary_count(conn, "oc", prefix=True) == prefixed
        asked: list[str] = []
        real_execute = type(conn).execute

        def counting(self, statement, *args, **kwargs):
            asked.append(str(statement))
            return real_execute(self, statement, *args, **kwargs)

        monkeypatch.setattr(type(conn), "execute", counting)
        assert conditions.vocabulary_count(conn, "ocean", prefix=False) == exact
        assert not any("search_text_vocab" in s for s in asked)  # remembered
        monkeypatch.setattr(conditions, "VOCABULARY_SECONDS", 0.0)
        assert conditions.vocabulary_count(conn, "ocean", prefix=False) == exact
        assert any("search_text_vocab" in s for s in asked)  # asked again once stale
        cat.store.rollback()


_BOXES = [Box(-10, -10, 10, 10), Box(170, -20, -170, 20), Box(-180, -90, 180, 90), Box(0, 0, 180, 90),
          Box(100, -80, 120, -60)]
_PERIODS = [None, (datetime(1990, 1, 1, tzinfo=UTC), None), (None, datetime(1980, 12, 31, tzinfo=UTC)),
            (None, None), (datetime(1995, 1, 1, tzinfo=UTC), datetime(1996, 12, 31, tzinfo=UTC))]
_SINCE = [None, datetime(2026, 6, 1, tzinfo=UTC)]


def test_box_searches_equal_a_brute_force_filter(extents_db):
    """Every box (across the antimeridian, global, tiny) with every kind of period and a
    harvest time, against the stored boxes, periods and harvest times filtered in Python:
    huge boxes found once, whichever condition drives the search."""
    from catalogue.discovery.indexer import micros

    with catalogue.open(extents_db) as cat:
        stored = cat.store.connection.exec_driver_sql(
            "SELECT iri, west, south, east, north, start_time, end_time, harvested FROM search_datasets").all()
        cat.store.rollback()
        assert any(w is not None and Box(w, s, e, n).parts()[0][2] - Box(w, s, e, n).parts()[0][0] >= 180
                   for _i, w, s, e, n, *_rest in stored)  # huge boxes are there
        for box in _BOXES:
            for period in _PERIODS:
                for since in _SINCE:
                    def admits(row, box=box, period=period, since=since) -> bool:
                        _iri, w, s, e, n, t0, t1, harvested = row
                        if w is None or not Box(w, s, e, n).intersects(box):
                            return False
                        if period is not None:
                            start, end = period
                            if t0 is None or (end is not None and t0 > micros(end)) or (
                                    start is not None and t1 < micros(start)):
                                return False
                        return since is None or (harvested is not None and harvested >= micros(since))
                    expected = {row[0] for row in stored if admits(row)}
                    found = cat.search(SearchQuery(bbox=box, datetime=period, harvested_since=since, limit=200))
                    assert found.total == len(expected), (box, period, since)
                    assert {h.iri for h in found.hits} <= expected
                    if len(expected) <= 200:
                        assert {h.iri for h in found.hits} == expected
