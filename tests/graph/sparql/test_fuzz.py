"""A short campaign of the query fuzzer (:mod:`tests.graph.sparql.fuzz`) on both databases:
random graphs and random queries, the compiler's answers checked against rdflib's Memory
store and Oxigraph. A longer one: ``python -m tests.graph.sparql.fuzz --seeds 20``."""

from __future__ import annotations

import pytest

from tests.graph.sparql.fuzz import campaign, case


@pytest.mark.parametrize("seed", [1, 2])
def test_random_queries_agree_with_a_reference(db_url: str, seed: int) -> None:
    ran, problems = campaign(seed, 150, db_url)
    assert ran == 180  # and 30 closure ASKs
    assert not problems, "\n".join(problems)


def test_cases_are_reproducible() -> None:
    assert case(3, 17) == case(3, 17)
    assert case(3, 17).query != case(3, 18).query
