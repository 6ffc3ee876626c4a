"""The SQL of a triple pattern: bound terms found by content hash inside the statement.

Bound terms of a pattern are found inside the statement that matches it, through their
content hash (``terms.hash``) and a comparison of their content, so a read never needs
a separate id lookup and never relies on ids cached across statements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, Final

from rdflib.term import Node
from sqlalchemy import (
    BigInteger,
    Integer,
    ScalarSelect,
    Select,
    SmallInteger,
    Text,
    bindparam,
    func,
    select,
)

from .schema import quads, terms

__all__ = ["SPO", "TERM_WIDTH", "bound_conditions", "match_statement", "row_decoder", "term_id_of"]

SPO: Final = ("s", "p", "o")
#: Term columns of one decoded position: kind, value, datatype id, lang.
TERM_WIDTH: Final = 4


@lru_cache(maxsize=8)
def term_id_of(name: str) -> ScalarSelect[Any]:
    """Scalar subquery for the id of the term bound at pattern position ``name``.

    The term is found by its hash (unique index) and its content is compared too, so
    a term that merely collides with a stored one matches nothing, as it should: it
    is not stored.  Parameters come from :meth:`SQLStore._bind_term <catalogue.graph.store.SQLStore._bind_term>`.  Language tags
    compare case-insensitively, like the hash (tags are ASCII, so SQL ``lower`` is
    exact).
    """
    return (
        select(terms.c.id)
        .where(
            terms.c.hash == bindparam(f"{name}_hash", type_=BigInteger),
            terms.c.kind == bindparam(f"{name}_kind", type_=SmallInteger),
            terms.c.value == bindparam(f"{name}_value", type_=Text),
            terms.c.datatype.is_not_distinct_from(bindparam(f"{name}_dt", type_=Integer)),
            func.lower(terms.c.lang).is_not_distinct_from(bindparam(f"{name}_lang", type_=Text)),
        )
        .scalar_subquery()
    )


def bound_conditions(names: Iterable[str]) -> list[Any]:
    return [quads.c[name] == term_id_of(name) for name in names]


@lru_cache(maxsize=64)
def match_statement(bound: tuple[bool, bool, bool], union_mode: bool) -> Select:
    """SELECT for one pattern shape.

    Bound positions are compared with the id of the bound term, found in a subquery
    (the caller already has the term and need not decode it).  Unbound positions are
    joined to ``terms`` so rows decode without further queries.  In union mode the
    rows are ordered by a permutation of ``s, p, o`` that matches the index the
    pattern uses, so rows of the same triple arrive together and can be merged into
    one triple with its list of graphs without a sort or a DISTINCT.
    """
    cols: list[Any] = [quads.c.s, quads.c.p, quads.c.o]
    if union_mode:
        cols.append(quads.c.g)
    from_clause: Any = quads
    for is_bound, name in zip(bound, SPO, strict=True):
        if is_bound:
            continue
        alias = terms.alias(f"t{name}")
        from_clause = from_clause.join(alias, alias.c.id == quads.c[name])
        cols.extend([alias.c.kind, alias.c.value, alias.c.datatype, alias.c.lang])
    stmt = select(*cols).select_from(from_clause)
    stmt = stmt.where(
        *bound_conditions(name for is_bound, name in zip(bound, SPO, strict=True) if is_bound)
    )
    if not union_mode:
        return stmt.where(*bound_conditions(["g"]))
    if all(bound):
        return stmt
    s_bound, p_bound, _ = bound
    if s_bound:
        order = ("s", "p", "o")  # ix_quads_spog
    elif p_bound:
        order = ("p", "o", "s")  # ix_quads_posg
    elif bound[2]:
        order = ("o", "s", "p")  # ix_quads_ospg
    else:
        order = ("s", "p", "o")
    return stmt.order_by(*(quads.c[name] for name in order))


def row_decoder(
    pattern: tuple[Node | None, Node | None, Node | None],
    offset: int,
    decode_term: Callable[[int, str, int | None, str | None], Node],
) -> Callable[[Any], tuple[Node, Node, Node]]:
    """Function turning a row of :func:`match_statement` (its term columns from
    ``offset`` on) into a triple, reusing bound pattern terms."""
    slots: list[tuple[Node | None, int]] = []
    col = offset
    for node in pattern:
        if node is None:
            slots.append((None, col))
            col += TERM_WIDTH
        else:
            slots.append((node, -1))
    (s_node, s_col), (p_node, p_col), (o_node, o_col) = slots

    def decode_row(row: Any) -> tuple[Node, Node, Node]:
        return (
            s_node if s_node is not None else decode_term(*row[s_col : s_col + TERM_WIDTH]),
            p_node if p_node is not None else decode_term(*row[p_col : p_col + TERM_WIDTH]),
            o_node if o_node is not None else decode_term(*row[o_col : o_col + TERM_WIDTH]),
        )

    return decode_row
