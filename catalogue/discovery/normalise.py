"""Normal forms the index searches by: folded text, stems, times, JSON values.

Data type and codec names are normalised by the model
(:func:`catalogue.model.datatypes.v3_vocabulary_name`,
:func:`catalogue.model.codecs.normalise_codec_name`).

See :mod:`catalogue.discovery.query` for what each means to a search.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

_WORD = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=50_000)
def fold(text: str) -> str:
    """Case- and accent-insensitive form: NFKD, combining marks dropped, case folded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def tokenize(text: str | None) -> list[str]:
    """The search tokens of ``text``: runs of letters and digits of its folded form."""
    return _WORD.findall(fold(text)) if text else []


def json_value(text: str | None) -> Any:
    """``text`` parsed as JSON (None when absent or malformed)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def parse_time(text: str) -> datetime | None:
    """An xsd:dateTime lexical form as an aware UTC datetime (naive ones are taken as UTC)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


# ------------------------------------------------------------------ stems and index terms
@functools.cache
def _english() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65_536)
def stem(token: str) -> str:
    """The English Snowball stem of a folded token (``temperatures`` → ``temperatur``):
    the algorithm of PostgreSQL's ``english`` configuration, applied in Python so that
    both databases index and search the same lexemes."""
    return _english().stemWord(token)


def prose_terms(text: str | None) -> list[str]:
    """Index terms of prose (titles, summaries, keywords, long names): every token and,
    where it differs, its stem, so that ``glaciers`` finds ``glacier`` while a prefix
    typed so far still finds the words it begins."""
    out: list[str] = []
    for token in tokenize(text):
        out.append(token)
        root = stem(token)
        if root != token:
            out.append(root)
    return out


def identifier_terms(text: str | None) -> list[str]:
    """Index terms of identifiers (variable names, CF standard names): the tokens only
    (``sea_surface_temperature`` → ``sea``, ``surface``, ``temperature``), unstemmed."""
    return tokenize(text)
