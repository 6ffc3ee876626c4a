"""Where a finding points: from (node, document part, JSON path) to file and pointer.

Rules say *where* in a node's metadata a problem is as a list of tokens in
one of two parts: ``META`` (zarr.json, .zarray or .zgroup) or ``ATTRS`` (the
user attributes: zarr.json's ``attributes`` or .zattrs). The checker turns
that into the file URL and RFC 6901 pointer users open in an editor, also
for documents inside consolidated metadata and for dependent arrays, whose
keys live partly in their declaration and partly in the primary array.
"""

from __future__ import annotations

from typing import Any

from catalogue.errors import join_pointer
from catalogue.model.nodes import Hierarchy, Node
from catalogue.validate.findings import MAX_PER_RULE, Finding
from catalogue.validate.rules import RULES

META = "meta"
ATTRS = "attrs"


class NodeChecker:
    """Collects the findings of one node."""

    def __init__(self, h: Hierarchy, node: Node) -> None:
        self.h = h
        self.node = node
        self.findings: list[Finding] = []
        self._per_rule: dict[str, int] = {}
        self.primary = h.nodes.get(node.primary) if node.primary is not None else None

    # ----------------------------------------------------------- reporting
    def add(self, rule: str, part: str, tokens: tuple[Any, ...] | list[Any], message: str) -> None:
        if rule not in RULES:  # pragma: no cover - a typo in a rule; the tests list every id
            raise KeyError(rule)
        n = self._per_rule.get(rule, 0) + 1
        self._per_rule[rule] = n
        if n > MAX_PER_RULE:
            return
        file, pointer = self.locate(part, tuple(tokens))
        if n == MAX_PER_RULE:
            message += f" (further {rule} findings of this node are not listed)"
        key = "attributes" if part == ATTRS else str(tokens[0]) if tokens else ""
        self.findings.append(Finding(self.node.path, file, pointer, rule, message, key))

    def add_file(self, rule: str, url: str, message: str) -> None:
        """A finding about a whole file of the node other than its documents (no pointer)."""
        if rule not in RULES:  # pragma: no cover - a typo in a rule
            raise KeyError(rule)
        self.findings.append(Finding(self.node.path, url, "", rule, message))

    def locate(self, part: str, tokens: tuple[Any, ...]) -> tuple[str, str]:
        node = self.node
        if self.primary is not None:
            return self._locate_dependent(part, tokens)
        loc = node.attributes_location if part == ATTRS else node.location
        return loc.url, join_pointer(loc.pointer, *tokens)

    def _locate_dependent(self, part: str, tokens: tuple[Any, ...]) -> tuple[str, str]:
        """A dependent array's key is in its declaration if declared there, else in the primary."""
        node, primary = self.node, self.primary
        assert primary is not None
        declared = node.declared_keys
        decl = node.location  # the declaration: {name: partial} entry
        if part == ATTRS:
            if "attributes" in declared:
                if node.zarr_format == 3:
                    return decl.url, join_pointer(decl.pointer, "attributes", *tokens)
                loc = node.attributes_location
                return loc.url, join_pointer(loc.pointer, *tokens)
            loc = primary.attributes_location
            return loc.url, join_pointer(loc.pointer, *tokens)
        if tokens and tokens[0] in declared:
            return decl.url, join_pointer(decl.pointer, *tokens)
        if not tokens:
            return decl.url, decl.pointer
        loc = primary.location
        return loc.url, join_pointer(loc.pointer, *tokens)

    def declaration_pointer(self) -> tuple[str, str]:
        return self.node.location.url, self.node.location.pointer
