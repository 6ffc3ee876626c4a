"""What ``--explain`` shows of a query: each statement that ran, or each node rdflib evaluated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ExplainEntry"]


@dataclass(frozen=True)
class ExplainEntry:
    """One statement that ran (``sql`` set) or one node rdflib evaluated (``note``)."""

    sql: str | None
    params: dict[str, Any]
    note: str | None = None
    #: A line printed above the statement (what a spatial lookup found).
    comment: str | None = None

    def render(self) -> str:
        if self.sql is None:
            return f"-- evaluated by rdflib: {self.note}"
        params = "".join(f"\n--   :{k} = {v!r}" for k, v in self.params.items())
        head = f"-- {self.comment}\n" if self.comment else ""
        return head + self.sql + ";" + (f"\n-- parameters:{params}" if params else "")
