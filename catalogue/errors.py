"""Exceptions the catalogue raises, each able to print itself as one line.

Operators read these in cron mail, so every error names the file (as a URL or
a local path) and, where it applies, the JSON pointer inside that file, in the
RFC 6901 fragment form ``file#/pointer``.
"""

from __future__ import annotations


class CatalogueError(Exception):
    """Base class: anything the CLI reports as ``error: ...`` with exit code 1.

    Each class carries its classification, so that the CLI, the web and a Python user
    tell errors apart the same way (:func:`catalogue.api.classify_error` adds the
    database's lock errors): ``exit_code`` is what the CLI exits with, ``category``
    names the kind (``error`` about the data, ``usage``, ``busy``: try again later,
    ``unavailable``: a store could not be reached).
    """

    exit_code: int = 1
    category: str = "error"

    def __reduce__(self) -> tuple:
        """Pickled with its attributes, whatever its ``__init__`` takes: errors cross from the
        worker processes of ``catalogue harvest --jobs`` to the one that reports them."""
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class UsageError(CatalogueError):
    """The request itself is wrong (unknown source, bad option): exit code 2."""

    exit_code = 2
    category = "usage"


class Busy(CatalogueError):
    """Someone else is doing it right now (another harvest of the source, another
    writer holding the database past the lock timeout): nothing was changed, and trying
    again later is the remedy. Exit code 3, which cron wrappers can tell from data (1)
    and usage (2) errors."""

    exit_code = 3
    category = "busy"


class SourceNotFound(UsageError):
    """The harvest source does not exist or cannot be opened."""


def escape_pointer_token(token: str) -> str:
    """Escape one reference token for a JSON pointer (RFC 6901 section 4)."""
    return token.replace("~", "~0").replace("/", "~1")


def join_pointer(pointer: str, *tokens: str | int) -> str:
    """Append reference tokens to a JSON pointer."""
    return pointer + "".join("/" + escape_pointer_token(str(t)) for t in tokens)


def display_location(location: str) -> str:
    """Show ``file://`` URLs as local paths, which is what operators type."""
    if location.startswith("file://"):
        from urllib.parse import unquote

        return unquote(location[len("file://") :])
    return location


class SourceUnavailable(CatalogueError):
    """A remote store cannot be reached, refuses access, or kept failing after retries.

    Raised instead of a library traceback so that a harvest from cron says in
    one line which URL failed and why. ``whole_source`` is False only for
    failures that concern one document (a time-out or server error on one
    key after retries): the harvester then reports that node as failed and
    carries on, whereas an unreachable host, a missing bucket or refused
    credentials stop the harvest. ``denied`` marks 401/403-style refusals.
    """

    category = "unavailable"

    def __init__(self, location: str, reason: str, *, whole_source: bool = True, denied: bool = False) -> None:
        self.location = location
        self.reason = reason
        self.whole_source = whole_source
        self.denied = denied
        super().__init__(f"{display_location(location)}: {reason}")


class DocumentError(CatalogueError):
    """A metadata document that cannot be read, parsed or understood.

    ``location`` is the URL of the file; ``pointer`` the JSON pointer of the
    offending value inside it (``None`` when the file could not be parsed at
    all, e.g. invalid JSON, where ``reason`` carries line and column instead).
    ``rule`` is the validation rule id the problem is reported under (see
    ``catalogue.validate.rules``), so ``catalogue validate`` lists unreadable
    documents next to invalid ones.
    """

    def __init__(self, location: str, reason: str, pointer: str | None = None, *, rule: str = "document.unreadable") -> None:
        self.location = location
        self.reason = reason
        self.pointer = pointer
        self.rule = rule
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = display_location(self.location)
        if self.pointer is not None:
            where = f"{where}#{self.pointer}"
        return f"{where}: {self.reason}"


class HierarchyError(CatalogueError):
    """The hierarchy as a whole cannot be harvested (no metadata, a symlink loop)."""


class QueryTimeout(CatalogueError):
    """A query ran past its time limit and its work was stopped.

    Raised by :func:`catalogue.graph.deadline.query_deadline`. The store's
    transaction has been rolled back by then (a cancelled PostgreSQL statement
    aborts it), so the store is ready for the next query.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"the query ran longer than its time limit of {seconds:g} s and was stopped")


class NotFound(UsageError):
    """What was asked for is not there (a page past the last one): exit code 2, HTTP 404."""


class QueryError(UsageError):
    """A SPARQL query or update that does not parse, cannot be evaluated, or asks for
    something the catalogue refuses (``SERVICE``, ``LOAD``).

    The query's fault as far as its author can act on it: exit code 2 on the command
    line, HTTP 400 on the web. ``str()`` is one line (a parse error keeps its position).
    """


class TooLarge(CatalogueError):
    """A query asks for more than a configured limit allows (a result past
    ``max_results``, an explicit RDF dataset past the triples copied for it).

    Nothing was returned: the remedy is a more selective query (``LIMIT``,
    ``GRAPH``), not a retry. HTTP 413 on the web.
    """


def _rebuild(cls: type[CatalogueError], args: tuple, state: dict) -> CatalogueError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error
