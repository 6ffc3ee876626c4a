"""Query-string and IRI parameters, read strictly: one parser for every route.

Starlette decodes parameters with replacement characters, which would
silently search for (or look up) U+FFFD; a client sending broken bytes should
hear so. :func:`parse_query_string` checks the raw query string
(:func:`check_query_string`: length, UTF-8 once percent-decoded, no control
characters) and decodes it into lists of values; the portal, ``/datasets`` and
``/node`` read their parameters through it, so they accept and refuse the same
query strings. The SPARQL protocol, whose queries are long texts with line breaks,
reads its query string and form bodies with :func:`form_pairs` alone (strict UTF-8,
order kept); its own limits are in :mod:`catalogue.web.sparql.protocol`.
:func:`checked_iri` is the one rule for IRIs in parameters and paths.
"""

from __future__ import annotations

import re
import urllib.parse
from urllib.parse import unquote_to_bytes

from .errors import HTTPError

#: Bytes of the raw query string.
MAX_QUERY_STRING = 16_384
#: Parameters one query string may have.
MAX_PARAMS = 200
#: The longest IRI accepted in a parameter or a path (UTF-8 bytes).
MAX_IRI_BYTES = 4096
#: C0 controls and DEL: no search text or filter value has them.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_NOT_IN_IRIS = frozenset(' <>"{}|\\^`\ufffd')


def check_query_string(raw: bytes) -> None:
    """Refuse a query string that is too long, not UTF-8 once percent-decoded, or has control characters."""
    if len(raw) > MAX_QUERY_STRING:
        raise HTTPError(400, f"query string longer than {MAX_QUERY_STRING:,} bytes")
    try:
        text = unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPError(400, "query string is not valid UTF-8 after percent-decoding") from None
    if _CONTROL.search(text):
        raise HTTPError(400, "query parameters must not contain control characters")


def form_pairs(raw: bytes, where: str) -> list[tuple[str, str]]:
    """``application/x-www-form-urlencoded`` pairs in order, strictly UTF-8 after
    percent-decoding (HTTP 400 naming ``where``, the query string or the request body)."""
    pairs: list[tuple[str, str]] = []
    for part in raw.split(b"&"):
        if not part:
            continue
        name, _, value = part.partition(b"=")
        try:
            pairs.append((_form_decode(name), _form_decode(value)))
        except UnicodeDecodeError:
            raise HTTPError(400, f"the {where} is not valid UTF-8 once percent-decoded") from None
    return pairs


def _form_decode(raw: bytes) -> str:
    return unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")


def parse_query_string(raw: bytes, *, max_params: int = MAX_PARAMS) -> dict[str, list[str]]:
    """The query string's parameters (name -> values in order), decoded strictly.

    Checked by :func:`check_query_string` first; more than ``max_params``
    parameters is a 400 too.
    """
    check_query_string(raw)
    try:
        pairs = urllib.parse.parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False,
                                       encoding="utf-8", errors="strict", max_num_fields=max_params)
    except UnicodeDecodeError:  # pragma: no cover - check_query_string refused it already
        raise HTTPError(400, "the query string is not valid UTF-8 (after percent-decoding)") from None
    except ValueError:
        raise HTTPError(400, f"too many query parameters (at most {max_params})") from None
    out: dict[str, list[str]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out


def iri_problem(value: str, what: str = "iri") -> str | None:
    """Why ``value`` is not a plausible absolute IRI (one line naming ``what``), or None if it is.

    Refused: over :data:`MAX_IRI_BYTES`, no scheme, spaces, control characters,
    the characters RFC 3987 excludes (``<>"{}|\\^```), lone surrogates, and
    U+FFFD (what an invalid UTF-8 percent-encoding decodes to). A valid IRI
    can then be written between ``<…>`` in SPARQL or N-Triples safely.
    """
    if len(value.encode("utf-8", "surrogatepass")) > MAX_IRI_BYTES:
        return f"{what} is longer than {MAX_IRI_BYTES} bytes"
    if "\ufffd" in value:
        return f"{what} is not valid UTF-8 (bad percent-encoding?)"
    for ch in value:
        code = ord(ch)
        if code < 0x21 or code == 0x7F or 0x80 <= code < 0xA0 or 0xD800 <= code < 0xE000 or ch in _NOT_IN_IRIS:
            return f"{what} contains {ch!r}, which an IRI cannot contain"
    if not _SCHEME.match(value):
        return f"{what} must be an absolute IRI (scheme:…), got {value[:80]!r}"
    return None


def checked_iri(value: str, what: str = "iri") -> str:
    """``value`` if it is a plausible absolute IRI (see :func:`iri_problem`), else HTTP 400
    with one line saying why."""
    problem = iri_problem(value, what)
    if problem is not None:
        raise HTTPError(400, problem)
    return value
