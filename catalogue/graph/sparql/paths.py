"""Property paths as SQL: sequences and inverses rewritten into plain triple patterns,
alternatives, negated property sets and closures (``*``, ``+``, ``?``) as derived
tables, closures as recursive CTEs seeded from whichever end the query constrains.

Inside ``GRAPH ?g`` a path is evaluated in each named graph: every derived table also
carries the graph (column ``g``), each step continues in the graph of the step before,
and a zero-length path pairs a node with itself in every graph (in every named graph for
a constant end, as SPARQL's evaluation per graph gives).  Closures there are not seeded
from the patterns around them, only from a constant end.

Part of the compiler (:mod:`.compiler`), which it reaches only through
:class:`PatternHost`: the few compiler services a path needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

from rdflib.namespace import RDF
from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, Path, SequencePath
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import BNode, Node, URIRef, Variable

from .sql import Block, Dialect, GraphScope, Names, Unsupported

if TYPE_CHECKING:
    from .cardinality import Cardinality

__all__ = ["PathCompiler", "PatternHost"]


class PatternHost(Protocol):
    """What path compilation needs of the compiler it is part of."""

    names: Names
    dialect: Dialect
    bindings: Mapping[Variable, Node]
    cardinality: Cardinality | None

    def term_id(self, term: Node) -> int | None: ...

    def id_sql(self, term: Node) -> str: ...

    def bind(self, b: Block, col: str, term: Any) -> None: ...

    def bind_graph(self, b: Block, col: str, scope: GraphScope, bound: bool = False) -> bool: ...

    def pattern(self, part: Any, scope: GraphScope) -> Block: ...

    def shared(self, prefix: str, sql: str) -> str: ...


class PathCompiler:
    """Compiles the property paths of one statement (created by its compiler)."""

    def __init__(self, compiler: PatternHost) -> None:
        self.c = compiler
        #: The shared sets of :meth:`seeds`, by variable, component and graph scope.
        self._seeds: dict[tuple[Any, ...], str] = {}
        #: :meth:`seeded_from`'s answers, by closure and the plain patterns around it.
        self._seeded: dict[tuple[Any, ...], str | None] = {}

    def expand(self, s: Any, p: Any, o: Any) -> list[tuple[Any, Any, Any]]:
        """Rewrite sequence and inverse paths into plain triple patterns joined through
        fresh blank-node variables (the SPARQL 1.1 translation), leaving only
        alternatives, negated sets and closures as path patterns."""
        if isinstance(p, InvPath):
            return self.expand(o, p.arg, s)
        if isinstance(p, SequencePath):
            out: list[tuple[Any, Any, Any]] = []
            args = list(p.args)
            current = s
            for i, step in enumerate(args):
                nxt = o if i == len(args) - 1 else BNode(self.c.names.alias("_pp"))
                out += self.expand(current, step, nxt)
                current = nxt
            return out
        return [(s, p, o)]

    def pattern(
        self,
        b: Block,
        s: Any,
        path: Path,
        o: Any,
        scope: GraphScope,
        simple: list[tuple[Any, Any, Any]],
    ) -> None:
        """The path pattern ``s path o`` as an item of ``b``."""
        start, end = self.end(s), self.end(o)
        seeded = self.seeded_from(s, path, o, simple) if scope.mode != "var" else None
        numbered = seeded is None and scope.mode == "union" and isinstance(path, AlternativePath)
        if seeded == "s":
            s_seeds = self.seeds(s, simple, scope)
            sql = self._closure_sql(path.path, path.mod, scope, s_seeds)
            if end is not None:
                sql = f"SELECT s, o FROM (\n{sql}\n) AS ce_ WHERE o = {end}"
        elif seeded == "o":
            inner = self._closure_sql(InvPath(path.path), path.mod, scope, self.seeds(o, simple, scope))
            sql = f"SELECT o AS s, s AS o FROM (\n{inner}\n) AS ci_"
        elif numbered:
            sql = self._numbered_arms(path, scope, start, end)
        else:
            sql = self._path_sql(path, scope, start, end)
        alias = self.c.names.alias("pp")
        b.add_item(f"(\n{sql}\n) AS {alias}")
        for col, term in ((f"{alias}.s", s), (f"{alias}.o", o)):
            self.c.bind(b, col, term)
        if numbered:
            self.c.bind(b, f"{alias}.k", BNode(self.c.names.alias("_arm")))
        if scope.mode == "var":
            self.c.bind_graph(b, f"{alias}.g", scope)

    def _numbered_arms(self, path: AlternativePath, scope: GraphScope, start: int | None, end: int | None) -> str:
        """An alternative over the union of graphs, each row numbered (column ``k``, bound to
        a hidden variable of the block): one solution per arm that matches (SPARQL's
        translation of ``a|b`` is a union) and per intermediate node of a sequence arm.
        Each arm's rows are already free of copies from several graphs, so the block's
        DISTINCT over the union of graphs then merges only the copies of its other
        patterns (``?a (^:p|:q) :s`` over ``:s :p :s . :s :q :s`` is two solutions; found
        by tests/graph/sparql/fuzz.py, seed 300)."""
        n = len(path.args)
        return "\nUNION ALL\n".join(
            f"SELECT s, o, ROW_NUMBER() OVER () * {n} + {i} AS k FROM (\n{self._path_sql(arm, scope, start, end)}"
            f"\n) AS {self.c.names.alias('al')}"
            for i, arm in enumerate(path.args))

    def seeded_from(self, s: Any, path: Any, o: Any, simple: list[tuple[Any, Any, Any]]) -> str | None:
        """Which end (``"s"``, ``"o"``) a closure from a variable start is seeded from:
        the values the plain patterns around that end give it (so that
        ``?a :p/rdf:rest*/rdf:first ?x`` follows only the lists of matching ?a), the more
        constrained end when both have some (e.g. from the arrays with a given standard
        name up to their datasets, not down from every dataset); None when neither."""
        if not isinstance(path, MulPath) or self.end(s) is not None:
            return None
        # Asked twice of a closure (by SQLite's hinge, then where it is written): decided
        # once, the estimates and the patterns around each end read once.
        key = (s, path, o, tuple(simple))
        if key not in self._seeded:
            end = self.end(o)
            found = None
            if self.component(s, simple) and (end is not None or self._cheaper_end(s, path, o, simple) == "s"):
                found = "s"
            elif end is None and self.component(o, simple):
                found = "o"
            self._seeded[key] = found
        return self._seeded[key]

    def lazy(
        self, complex_: list[tuple[Any, Any, Any]], simple: list[tuple[Any, Any, Any]], scope: GraphScope
    ) -> tuple[tuple[Any, Any, Any], list[tuple[Any, Any, Any]]] | None:
        """For a pattern of which one solution is enough (an ASK's): its only closure,
        ``?s p* ?o`` or ``?s p+ ?o`` along one IRI (or its inverse), when plain patterns
        bind ``?s``, more tightly than those hanging off ``?o`` (returned with it), which
        touch nothing else and name only stored terms.
        :meth:`exists_sql` then walks it from each ``?s`` in turn, in a correlated
        ``EXISTS`` the database leaves at the first node that satisfies them: the
        closure of every matching ``?s`` was computed whole before (benchmark query 14,
        ``?dims rdf:rest*/rdf:first "time"`` under the arrays of a standard name)."""
        if len(complex_) != 1 or scope.mode == "var":
            return None
        t = s, path, o = complex_[0]
        if not (isinstance(path, MulPath) and path.mod in ("*", "+") and _one_step(path.path)):
            return None
        if s == o or self.end(s) is not None or self.end(o) is not None:
            return None
        before, hanging = self.component(s, simple), self.component(o, simple)
        if not before or set(before) & set(hanging):
            return None
        # Only from the more constrained end: walked from each of many subjects, a long
        # closure that they share (a chain of 2,000 nodes under one class) is walked again
        # and again, 4 s instead of 0.3 s on SQLite and 67 s instead of 0.7 s on PostgreSQL.
        if self._cheaper_end(s, path, o, simple, lazy=True) != "s":
            return None
        # A hanging constant the database does not hold matches nothing: the plain plan
        # finds that at once, the walk only after every subject's closure.
        for triple in hanging:
            for term in triple:
                if isinstance(term, Variable) and term in self.c.bindings:
                    term = self.c.bindings[term]
                if not isinstance(term, Variable | BNode) and self.c.term_id(term) is None:
                    return None
        return t, hanging

    def exists_sql(self, t: tuple[Any, Any, Any], hanging: list[tuple[Any, Any, Any]], start: str,
                   scope: GraphScope) -> str:
        """``EXISTS`` of :meth:`lazy`'s closure from the node ``start`` (SQL) and of the
        patterns hanging off its end. On SQLite the recursive step and the hanging
        patterns probe by one-value ranges: with equalities it built a Bloom filter of a
        whole predicate at each call."""
        _s, path, o = t
        step, a, b = path.path, "s", "o"
        if isinstance(step, InvPath):
            step, a, b = step.arg, "o", "s"
        pg = self.c.dialect.is_pg

        def eq(col: str, value: str) -> str:
            return f"{col} = {value}" if pg else f"{col} BETWEEN {value} AND {value}"

        cte, st = self.c.names.alias("lz"), self.c.names.alias("st")
        pid = self.c.id_sql(step)
        g = f" AND {st}.g = {scope.gid}" if scope.mode == "const" else ""
        if path.mod == "*":
            first = f"SELECT {start} AS n"
        else:
            first = f"SELECT {st}.{b} AS n FROM quads {st} WHERE {st}.{a} = {start} AND {st}.p = {pid}{g}"
        rec = (f"SELECT {st}.{b} FROM {cte} JOIN quads {st} ON {eq(f'{st}.{a}', f'{cte}.n')} "
               f"AND {eq(f'{st}.p', pid)}{g}")
        items, conds = [cte], []
        seen: dict[Any, str] = {o: f"{cte}.n"}
        for triple in hanging:
            q = self.c.names.alias("q")
            items.append(f"quads {q}")
            for col, term in zip(("s", "p", "o"), triple, strict=True):
                ref = f"{q}.{col}"
                if isinstance(term, Variable | BNode) and term not in self.c.bindings:
                    if term in seen:
                        conds.append(eq(ref, seen[term]))
                    else:
                        seen[term] = ref
                else:
                    value = self.c.bindings[term] if isinstance(term, Variable) else term
                    conds.append(eq(ref, self.c.id_sql(value)))
            if scope.mode == "const":
                conds.append(f"{q}.g = {scope.gid}")
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return (f"EXISTS (WITH RECURSIVE {cte}(n) AS (\n{first}\nUNION\n{rec}\n)\n"
                f"SELECT 1 FROM {' CROSS JOIN '.join(items)}{where})")

    def _cheaper_end(self, s: Any, path: MulPath, o: Any, simple: list[tuple[Any, Any, Any]], *,
                     lazy: bool = False) -> str | None:
        """The end (``"s"``, ``"o"``) from which the closure ``s path o`` is cheaper to walk:
        by the rows of each end's most selective pattern times the step's typical fan-out
        that way (:mod:`.cardinality`), where the database gives them and they differ;
        else by the constants around each end (:meth:`_selectivity`), ``s`` where they
        tie.

        ``lazy``: for :meth:`lazy`'s walk from one subject at a time, which stops at the
        first node that answers, so that a subject costs less than its whole fan-out: by
        rows alone, and None where the ends tie."""
        costs = self._walk_costs(s, path, o, simple, fanout=not lazy)
        if costs is not None and costs[0] != costs[1]:
            return "s" if costs[0] < costs[1] else "o"
        from_s, from_o = self._selectivity(s, simple), self._selectivity(o, simple)
        if from_s == from_o:
            return None if lazy else "s"
        return "s" if from_s > from_o else "o"

    def _walk_costs(self, s: Any, path: MulPath, o: Any, simple: list[tuple[Any, Any, Any]], *,
                    fanout: bool) -> tuple[float, float] | None:
        """What a walk of ``s path o`` costs from ``s`` and from ``o``: the rows it starts
        with, and with ``fanout`` the nodes it reaches in :data:`WALK_DEPTH` steps of the
        step's typical fan-out that way, each level multiplying (a walk down a tree
        reaches everything below; one up it climbs a parent a step). None: no
        estimates, or a step of more than one IRI. The subject's end is counted only as
        far as it could still be the cheaper."""
        estimates = self.c.cardinality
        step = path.path
        if estimates is None or not _one_step(step) or not self.component(s, simple):
            return None
        forward = isinstance(step, URIRef)
        pid = self.c.term_id(step if forward else step.arg)
        if pid is None:
            return None
        reach_s = reach_o = 1.0
        if fanout:
            fan = estimates.fanout(pid)
            out_s, out_o = (fan.forward, fan.backward) if forward else (fan.backward, fan.forward)
            reach_s, reach_o = _reach(out_s), _reach(out_o)
        rows_o = self._rows(o, simple)
        if rows_o is None:
            return None
        rows_s = self._rows(s, simple, below=rows_o * reach_o / reach_s + 1)
        assert rows_s is not None
        return rows_s * reach_s, rows_o * reach_o

    def _rows(self, var: Any, simple: list[tuple[Any, Any, Any]], below: float = float("inf")) -> float | None:
        """The estimated rows of the most selective plain pattern connected to ``var``,
        counted only up to ``below`` (None when no pattern is connected)."""
        estimates = self.c.cardinality
        component = self.component(var, simple)
        if estimates is None or not component:
            return None
        patterns: list[list[int | None]] = []
        for triple in component:
            ids: list[int | None] = []
            for term in triple:
                if isinstance(term, Variable) and term in self.c.bindings:
                    term = self.c.bindings[term]
                if isinstance(term, Variable | BNode):
                    ids.append(None)
                    continue
                tid = self.c.term_id(term)
                if tid is None:  # a constant not stored: the pattern matches nothing
                    return 0.0
                ids.append(tid)
            patterns.append(ids)
        # The most constrained first, so that the others are counted only as far as the
        # smallest yet (a predicate alone may have millions of quads).
        patterns.sort(key=lambda ids: sum(i is None for i in ids))
        best = below
        for s, p, o in patterns:
            best = min(best, estimates.rows(s, p, o, below=best))
        return best

    def _selectivity(self, var: Any, simple: list[tuple[Any, Any, Any]]) -> int:
        """A rough score of how constrained ``var`` is by the patterns around it:
        constants other than classes count double, class memberships once; a variable
        bound from outside (``initBindings``, rdflib evaluating a join row by row) is a
        constant."""
        score = 0
        for t in self.component(var, simple):
            for pos, term in enumerate(t):
                if pos == 1 or isinstance(term, BNode) or (isinstance(term, Variable) and term not in self.c.bindings):
                    continue
                score += 1 if t[1] == RDF.type and pos == 2 else 2
        return score

    def component(
        self, var: Any, simple: list[tuple[Any, Any, Any]]
    ) -> list[tuple[Any, Any, Any]]:
        """The plain triple patterns connected to ``var`` through shared variables."""
        if not isinstance(var, Variable | BNode) or var in self.c.bindings:
            return []
        component: list[tuple[Any, Any, Any]] = []
        reached = {var}
        remaining = list(simple)
        changed = True
        while changed:
            changed = False
            for t in list(remaining):
                names = {x for x in t if isinstance(x, Variable | BNode)}
                if names & reached:
                    component.append(t)
                    reached |= names
                    remaining.remove(t)
                    changed = True
        return component

    def seeds(self, var: Any, simple: list[tuple[Any, Any, Any]], scope: GraphScope) -> str | None:
        """SQL for the values ``var`` takes in the triple patterns connected to it, or
        None when no plain pattern binds it.

        The SQL is a reference to a set the statement shares (:meth:`.Compiler.shared`):
        a closure ``*`` reads its seeds twice (its first step and its zero-length
        pairs) and a hinged BGP (:meth:`.Compiler._hinge`) a third time to keep the
        closure rows whose subject they give. Written out at each place, the seeds'
        join ran three times (benchmark query 1 at a million triples: 100 ms each on
        PostgreSQL, of 380)."""
        if not isinstance(var, Variable | BNode) or var in self.c.bindings:
            return None
        component = self.component(var, simple)
        if not component:
            return None
        key = (var, tuple(component), scope.mode, scope.gid)
        found = self._seeds.get(key)
        if found is None:
            sub = self.c.pattern(CompValue("BGP", triples=component), scope)
            ref = sub.vars[var]
            found = self._seeds[key] = self.c.shared(
                "seeds", f"SELECT DISTINCT {ref.id} AS n\nFROM {sub.from_sql()}{sub.where_sql()}")
        return found

    def end(self, term: Any) -> int | None:
        """The term id of a constant path end (None for a variable end; a variable bound
        from outside is its value, a blank node too)."""
        if isinstance(term, Variable) and term in self.c.bindings:
            term = self.c.bindings[term]
        elif isinstance(term, Variable | BNode):
            return None
        tid = self.c.term_id(term)
        if tid is None:
            raise Unsupported("property path from a term that is not stored")
        return tid

    def _graph_cond(self, q: str, scope: GraphScope) -> str:
        return f" AND {q}.g = {scope.gid}" if scope.mode == "const" else ""

    @staticmethod
    def _g(x: str, scope: GraphScope) -> str:
        """Inside ``GRAPH ?g``: the graph column of ``x``, carried along (else nothing)."""
        return f", {x}.g AS g" if scope.mode == "var" else ""

    @staticmethod
    def _same_g(x: str, y: str, scope: GraphScope) -> str:
        """Inside ``GRAPH ?g``: the condition that ``x`` and ``y`` are in one graph."""
        return f" AND {y}.g = {x}.g" if scope.mode == "var" else ""

    def _node_seeds(self, node: int, scope: GraphScope) -> str:
        """Seeds (column ``n``, and ``g`` inside ``GRAPH ?g``) of a closure from a constant."""
        if scope.mode != "var":
            return f"SELECT {node} AS n"
        gr = self.c.names.alias("gr")
        return f"SELECT {node} AS n, {gr}.id AS g FROM graphs {gr}"

    def _path_sql(self, path: Any, scope: GraphScope, start: int | None, end: int | None) -> str:
        """SQL with columns ``s, o`` for the pairs a path connects; ``start``/``end``
        restrict the pairs (used to seed recursive closures from a constant)."""
        d = "DISTINCT " if scope.mode == "union" else ""
        if isinstance(path, URIRef):
            q = self.c.names.alias("q")
            conds = [f"{q}.p = {self.c.id_sql(path)}"]
            if start is not None:
                conds.append(f"{q}.s = {start}")
            if end is not None:
                conds.append(f"{q}.o = {end}")
            where = " AND ".join(conds) + self._graph_cond(q, scope)
            return f"SELECT {d}{q}.s AS s, {q}.o AS o{self._g(q, scope)} FROM quads {q} WHERE {where}"
        if isinstance(path, InvPath):
            inner = self._path_sql(path.arg, scope, end, start)
            x = self.c.names.alias("iv")
            return f"SELECT {x}.o AS s, {x}.s AS o{self._g(x, scope)} FROM (\n{inner}\n) AS {x}"
        if isinstance(path, SequencePath):
            args = list(path.args)
            sql = self._path_sql(args[0], scope, start, None if len(args) > 1 else end)
            for i, step in enumerate(args[1:], start=1):
                last = i == len(args) - 1
                x, y = self.c.names.alias("sa"), self.c.names.alias("sb")
                if isinstance(step, MulPath):
                    seeds = f"SELECT DISTINCT {x}.o AS n{self._g(x, scope)} FROM (\n{sql}\n) AS {x}"
                    right = self._closure_sql(step.path, step.mod, scope, seeds)
                    if last and end is not None:
                        right = f"SELECT s, o FROM (\n{right}\n) AS ce_ WHERE o = {end}"
                else:
                    right = self._path_sql(step, scope, None, end if last else None)
                sql = (
                    f"SELECT {x}.s AS s, {y}.o AS o{self._g(x, scope)} FROM (\n{sql}\n) AS {x} "
                    f"JOIN (\n{right}\n) AS {y} ON {y}.s = {x}.o{self._same_g(x, y, scope)}"
                )
            return sql
        g = ", g" if scope.mode == "var" else ""
        if isinstance(path, AlternativePath):
            parts = [self._path_sql(a, scope, start, end) for a in path.args]
            return "\nUNION ALL\n".join(
                f"SELECT s, o{g} FROM (\n{p}\n) AS {self.c.names.alias('al')}" for p in parts
            )
        if isinstance(path, MulPath):
            if start is not None:
                sql = self._closure_sql(path.path, path.mod, scope, self._node_seeds(start, scope))
                return (
                    sql if end is None else f"SELECT s, o{g} FROM (\n{sql}\n) AS ce_ WHERE o = {end}"
                )
            if end is not None:
                inner = self._closure_sql(InvPath(path.path), path.mod, scope, self._node_seeds(end, scope))
                return f"SELECT o AS s, s AS o{g} FROM (\n{inner}\n) AS ci_"
            return self._closure_sql(path.path, path.mod, scope, None)
        if isinstance(path, NegatedPath):
            return self._negated_sql(path, scope, start, end)
        raise Unsupported(f"path {path!r}")

    def _negated_sql(
        self, path: NegatedPath, scope: GraphScope, start: int | None, end: int | None
    ) -> str:
        if not all(isinstance(a, URIRef | InvPath) for a in path.args):
            # rdflib's parser hands ``!^p`` over as an unfinished ``InversePath`` part
            # (its own evaluator refuses it): no guessing here either.
            raise Unsupported("negated property set with an inverse member")
        forward = [a for a in path.args if isinstance(a, URIRef)]
        inverse = [a.arg for a in path.args if isinstance(a, InvPath)]
        d = "DISTINCT " if scope.mode == "union" else ""
        parts = []
        for preds, s_col, o_col, s_val, o_val in (
            (forward, "s", "o", start, end),
            (inverse, "o", "s", start, end),
        ):
            if preds is inverse and not inverse:
                continue
            if preds is forward and not forward and inverse:
                continue
            q = self.c.names.alias("q")
            conds = []
            if preds:
                ids = ", ".join(self.c.id_sql(p) for p in preds)
                conds.append(f"{q}.p NOT IN ({ids})")
            if s_val is not None:
                conds.append(f"{q}.{s_col} = {s_val}")
            if o_val is not None:
                conds.append(f"{q}.{o_col} = {o_val}")
            where = (" AND ".join(conds) or "TRUE") + self._graph_cond(q, scope)
            if d:
                # One row per matching triple (two predicates between the same nodes are two
                # solutions): the union of graphs' DISTINCT keeps the predicate, then drops it.
                parts.append(f"SELECT s, o FROM (\nSELECT {d}{q}.{s_col} AS s, {q}.p AS p, {q}.{o_col} AS o "
                             f"FROM quads {q} WHERE {where}\n) AS {self.c.names.alias('np')}")
            else:
                parts.append(f"SELECT {q}.{s_col} AS s, {q}.{o_col} AS o{self._g(q, scope)} FROM quads {q} WHERE {where}")
        return "\nUNION ALL\n".join(parts)

    def _closure_sql(self, step: Any, mod: str, scope: GraphScope, seeds: str | None) -> str:
        """``step+``, ``step*`` or ``step?`` as distinct ``(s, o)`` pairs (SPARQL 1.1
        gives arbitrary-length paths set semantics), starting from the nodes ``seeds``
        selects (column ``n``), or from everywhere for ``+`` without seeds.  A
        recursive CTE walks the steps; ``UNION`` (not ``UNION ALL``) stops it on cycles.
        An inverse's inverse is its step: walked backwards (seeded from its object's end,
        or from a constant object), ``(^p)+`` is ``p+``, which reads ``quads`` directly;
        as ``^^p`` it was a derived table of every ``p`` quad, joined again in each round
        (104 s against 0.5 s at a million triples).
        """
        while isinstance(step, InvPath) and isinstance(step.arg, InvPath):
            step = step.arg.arg
        var = scope.mode == "var"
        g = ", g" if var else ""
        if seeds is None and mod != "+":
            # Both ends unbound: the zero-length part pairs every node of the active
            # graph (its subjects and objects) with itself; the rest is the unseeded path.
            qs, qo = self.c.names.alias("q"), self.c.names.alias("q")
            nodes = (
                f"SELECT {qs}.s AS s, {qs}.s AS o{self._g(qs, scope)} FROM quads {qs} "
                f"WHERE TRUE{self._graph_cond(qs, scope)}\n"
                f"UNION\nSELECT {qo}.o, {qo}.o{self._g(qo, scope)} FROM quads {qo} "
                f"WHERE TRUE{self._graph_cond(qo, scope)}"
            )
            rest = self._path_sql(step, scope, None, None) if mod == "?" else self._closure_sql(step, "+", scope, None)
            return f"SELECT s, o{g} FROM (\n{rest}\n) AS {self.c.names.alias('nz')}\nUNION\n{nodes}"
        cte, st = self.c.names.alias("cl"), self.c.names.alias("st")
        # One step along an IRI (or its inverse) reads quads directly, so each
        # recursive round is an index seek rather than a derived table.
        a, b = "s", "o"
        if isinstance(step, InvPath) and isinstance(step.arg, URIRef):
            step, a, b = step.arg, "o", "s"
        if isinstance(step, URIRef):
            pid = self.c.id_sql(step)
            step_from = f"quads {st}"
            step_on = f"{st}.p = {pid}{self._graph_cond(st, scope)}"
        else:
            step_from = f"(\n{self._path_sql(step, scope, None, None)}\n) AS {st}"
            step_on = "TRUE"
        zero = "" if seeds is None else f"SELECT n AS s, n AS o{g} FROM (\n{seeds}\n) AS sz_"
        if seeds is not None and self.c.dialect.is_pg and isinstance(step, URIRef) and not var:
            # The first step probes the index once per seed (an array of them): planned
            # as a join, PostgreSQL merged the seeds with every quad of the predicate
            # (benchmark query 13 at a million triples: 23,534 member quads read for
            # 436 seeds, 4.4 of the closure's 7.5 ms).  A LATERAL probe per seed did the
            # same, but its estimate (seeds times quads per object) grew the recursive
            # CTE's tenfold guess past a million rows, and beside costs that large the
            # planner's 1% fuzz let a scan of every term pass for an index lookup.
            first = (
                f"SELECT {st}.{a} AS s, {st}.{b} AS o FROM quads {st} WHERE {step_on} AND {st}.{a} = ANY(ARRAY("
                f"SELECT n FROM (\n{seeds}\n) AS sn_))"
            )
        elif seeds is not None:
            # Inside GRAPH ?g the seeds carry their graph, and the first step stays in it.
            seeded = f"({st}.{a}, {st}.g) IN (SELECT n, g" if var else f"{st}.{a} IN (SELECT n"
            first = (
                f"SELECT {st}.{a} AS s, {st}.{b} AS o{self._g(st, scope)} FROM {step_from} "
                f"WHERE {step_on} AND {seeded} FROM (\n{seeds}\n) AS sn_)"
            )
        else:
            first = f"SELECT {st}.{a} AS s, {st}.{b} AS o{self._g(st, scope)} FROM {step_from} WHERE {step_on}"
        if mod == "?":
            return f"{first}\nUNION\n{zero}"
        # SQLite plans the recursive step's equality join with a Bloom filter that it
        # rebuilds (scanning every quad of the predicate) for each queued row; the
        # equivalent one-value range keeps it to an index seek per row.
        link = (
            f"{st}.{a} = {cte}.o" if self.c.dialect.is_pg else f"{st}.{a} BETWEEN {cte}.o AND {cte}.o"
        )
        rec_on = step_on
        if not self.c.dialect.is_pg and isinstance(step, URIRef):
            # ... and an equality on the constant predicate would get one too.
            pid = self.c.id_sql(step)
            rec_on = step_on.replace(f"{st}.p = {pid}", f"{st}.p BETWEEN {pid} AND {pid}")
        carried = f", {cte}.g" if var else ""
        if self.c.dialect.is_pg and seeds is not None and isinstance(step, URIRef):
            # PostgreSQL guesses a recursive CTE's working table large (tens of
            # thousands of rows where a seeded closure has a few thousand) and merges it
            # with every quad of the predicate in each round; a LATERAL probe, fenced by
            # OFFSET 0 so that it stays one, seeks the index per row. Measured at ten
            # million triples: benchmark query 13 (datasets above arrays of a standard
            # name), 133 -> 58 ms of execution.
            rec = (f"SELECT {cte}.s, {st}.{b}{carried} FROM {cte} CROSS JOIN LATERAL (SELECT {st}.{b}"
                   f"{self._g(st, scope)} FROM quads {st} WHERE {link} AND {rec_on}"
                   f"{self._same_g(cte, st, scope)} OFFSET 0) AS {st}")
        else:
            rec = (f"SELECT {cte}.s, {st}.{b}{carried} FROM {cte} JOIN {step_from} ON {link} AND {rec_on}"
                   f"{self._same_g(cte, st, scope)}")
        sql = f"WITH RECURSIVE {cte}(s, o{g}) AS (\n{first}\nUNION\n{rec}\n)\nSELECT s, o{g} FROM {cte}"
        if mod == "*":
            sql += f"\nUNION\n{zero}"
        return sql


#: Levels of a closure a walk is costed over (:meth:`PathCompiler._walk_costs`): Zarr
#: hierarchies and the lists of their dimensions are a few levels deep.
WALK_DEPTH: Final = 3


def _reach(fanout: float) -> float:
    """Nodes a walk reaches from one, in :data:`WALK_DEPTH` steps of ``fanout`` each."""
    f = max(fanout, 1.0)
    return sum(f**k for k in range(1, WALK_DEPTH + 1))


def _one_step(step: Any) -> bool:
    """An IRI or the inverse of one: a closure step that reads ``quads`` directly."""
    return isinstance(step, URIRef) or (isinstance(step, InvPath) and isinstance(step.arg, URIRef))
