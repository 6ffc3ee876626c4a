"""Validating a whole hierarchy: each node by the rules of its version, its attributes' conventions
and the ZOM schema, then the dependent-array rules across nodes (see :mod:`catalogue.validate`)."""

from __future__ import annotations

from urllib.parse import unquote

from catalogue.model.nodes import Hierarchy, Node
from catalogue.model.strays import backup_of
from catalogue.model.zom import node_zom
from catalogue.validate import attributes, geozarr, ome, zarr_v2, zarr_v3
from catalogue.validate.context import ATTRS, META, NodeChecker
from catalogue.validate.dependent import check_collisions
from catalogue.validate.findings import Finding, Report
from catalogue.validate.profiles import DEFAULT_PROFILE, PROFILES
from catalogue.validate.schemas import schema_errors, zom_validator


def validate_hierarchy(h: Hierarchy, *, profile: str = DEFAULT_PROFILE, source: str | None = None) -> Report:
    """Validate every node of ``h`` (and report its unreadable ones)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r} (choose from {', '.join(PROFILES)})")
    report = Report(source=source or h.url, profile=profile, nodes=len(h.nodes) + len(h.failed))
    checkers: dict[str, NodeChecker] = {}
    for path, node in h.nodes.items():
        c = checkers[path] = NodeChecker(h, node)
        check_node(c, profile)
    check_collisions(h, checkers)
    seen: set[tuple[str, str, str]] = set()
    findings: list[Finding] = []
    for c in checkers.values():
        findings += _settle(c, seen)
    for path, error in h.failed.items():
        findings.append(Finding.from_error(path, error))
    report.findings = sorted(findings, key=Finding.sort_key)
    return report


def check_node(c: NodeChecker, profile: str) -> None:
    node = c.node
    meta = node.metadata
    if node.implicit:
        c.add("hierarchy.implicit-root", META, (), "no metadata document at the root; its children were catalogued "
              "as members of an implicit group")
    for url in node.strays:
        name = unquote(url.rsplit("/", 1)[-1])
        c.add_file("document.backup", url, f"{name} looks like an editor's copy of {backup_of(name)}; "
                   "it is not read (delete it, or move it out of the store)")
    if type(meta.get("zarr_format")) is str:
        c.add("format.string", META, ("zarr_format",),
              f"{meta['zarr_format']!r} is a string; write the number {node.zarr_format}")
    if node.zarr_format == 3:
        (zarr_v3.check_array if node.kind == "array" else zarr_v3.check_group)(c, meta)
    elif node.kind == "array":
        zarr_v2.check_array(c, meta, profile)
    else:
        zarr_v2.check_group(c, meta)
    attrs = node.attributes
    if attrs is not None:
        shape = meta.get("shape")
        rank = len(shape) if isinstance(shape, list) else None
        attributes.check_attributes(c, attrs, rank)
        geozarr.check_geozarr(c)
        ome.check_ome(c)
    _zom(c, node)


def _zom(c: NodeChecker, node: Node) -> None:
    """The node's ZOM against the corrected ZEP 6 schema, where nothing more specific points."""
    zom = node_zom(c.h, Node(node.path, node.kind, node.zarr_format, node.documents, node.locations))
    rule_id = f"zom.v{node.zarr_format}"
    taken = [(f.file, f.pointer) for f in c.findings]
    for tokens, _keyword, message in schema_errors(zom_validator(node.zarr_format, node.kind), zom):
        if node.zarr_format == 2 and tokens and tokens[0] == "attributes":
            part, tokens = ATTRS, tokens[1:]
        else:
            part = META
        file, pointer = c.locate(part, tokens)
        if any(file == f and _related(pointer, p) for f, p in taken):
            continue
        c.add(rule_id, part, tokens, message)
        taken.append((file, pointer))


def _related(a: str, b: str) -> bool:
    """One pointer is the other or lies inside it."""
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _settle(c: NodeChecker, seen: set[tuple[str, str, str]]) -> list[Finding]:
    """Drop repeats: a dependent array inherits its primary's problems, reported once there."""
    out = []
    for f in c.findings:
        key = (f.rule, f.file, f.pointer)
        if key in seen:
            continue
        if c.primary is not None and f.file == c.primary.location.url and not _in_declaration(c, f):
            # A problem found in a key the dependent inherits that the primary does not have:
            # the declaration is what makes it wrong.
            decl_file, decl_pointer = c.declaration_pointer()
            f = f.moved(decl_file, decl_pointer)
            key = (f.rule, f.file, f.pointer)
            if key in seen:
                continue
        seen.add(key)
        out.append(f)
    return out


def _in_declaration(c: NodeChecker, f: Finding) -> bool:
    decl = c.node.location.pointer
    return f.pointer == decl or f.pointer.startswith(decl + "/")


__all__ = ["check_node", "validate_hierarchy"]
