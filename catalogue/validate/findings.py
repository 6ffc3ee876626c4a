"""Findings: what validation says about one place in one document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from catalogue.errors import DocumentError, display_location
from catalogue.validate.rules import RULES, Severity

#: Findings kept per rule and node; hostile documents (a million wrong list
#: items) must not turn into a million findings.
MAX_PER_RULE = 20

_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True)
class Finding:
    """One problem: which node, which file, where in it, which rule, what is wrong."""

    path: str
    file: str
    pointer: str
    rule: str
    message: str
    #: The top-level metadata key the finding is about ("attributes" for any
    #: attribute, "" for the whole document): the SHACL result path.
    key: str = ""

    @property
    def severity(self) -> Severity:
        return RULES[self.rule].severity

    def one_line(self) -> str:
        where = f"{display_location(self.file)}#{self.pointer}"
        return f"{where}: {self.severity}: {self.message} [{self.rule}]"

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path, "file": self.file, "pointer": self.pointer, "rule": self.rule,
            "severity": str(self.severity), "message": self.message,
        }

    def sort_key(self) -> tuple:
        return (_ORDER[self.severity], self.path, self.file, self.pointer, self.rule)

    @classmethod
    def from_error(cls, path: str, error: DocumentError) -> Finding:
        """A document the harvester could not use, as a finding."""
        rule = error.rule if error.rule in RULES else "document.unreadable"
        return cls(path, error.location, error.pointer or "", rule, error.reason)

    def moved(self, file: str, pointer: str) -> Finding:
        return Finding(self.path, file, pointer, self.rule, self.message, self.key)


@dataclass
class Report:
    """The findings of one validation run, and what was validated."""

    source: str
    profile: str
    nodes: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    def invalid_paths(self) -> set[str]:
        return {f.path for f in self.errors}

    def counts(self) -> dict[str, int]:
        out = {str(s): 0 for s in Severity}
        for f in self.findings:
            out[str(f.severity)] += 1
        return out

    def summary(self) -> str:
        c = self.counts()
        return (
            f"validated {self.source} ({self.profile} profile): {self.nodes} nodes, "
            f"{len(self.invalid_paths())} invalid; {c['error']} errors, {c['warning']} warnings, {c['info']} infos"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source, "profile": self.profile, "nodes": self.nodes,
            "invalid_nodes": sorted(self.invalid_paths()), "counts": self.counts(),
            "findings": [f.as_json() for f in self.findings],
        }
