"""A finding about one attribute of one node, from the extent sources.

The extent sources (conventions, ACDD, STAC items) never raise on a value they cannot
read: they say so as a validation finding pointing at the attribute, located the way
validation locates its own (consolidated metadata, v2 ``.zattrs``, dependent arrays).
"""

from __future__ import annotations

from typing import Any

from catalogue.model.nodes import Hierarchy
from catalogue.validate.context import ATTRS, NodeChecker
from catalogue.validate.findings import Finding

__all__ = ["attribute_finding"]


def attribute_finding(h: Hierarchy, path: str, rule: str, tokens: tuple[Any, ...], message: str) -> Finding:
    """The finding ``rule`` (a rule id of ``validate/rules.py``) at ``tokens`` inside the
    attributes of the node at ``path``."""
    checker = NodeChecker(h, h.nodes[path])
    checker.add(rule, ATTRS, tokens, message)
    return checker.findings[0]
