"""Files that look like copies of a metadata document: editor backups beside the documents.

Whoever edits ``.zattrs`` or ``zarr.json`` by hand often leaves a copy beside it:
``.zattrs~`` (Emacs, nano, gedit), ``.zarray.bak``, ``zarr.json.orig`` (patch), ``#.zattrs#``
(Emacs auto-save), ``..zattrs.swp`` (Vim). No Zarr reader reads them and neither does the
catalogue; each is named in a finding (``document.backup``), because a stale copy that a
sync tool carries along, or that a person opens by mistake, says something the store does
not.

Where they are found: a walk lists every group's folder anyway, so copies beside group
documents cost nothing on any listable store. Beside arrays, on local folders only: a v3
array keeping its chunks below ``c/`` has a folder of a few entries, listed; the folders of
other arrays hold their chunks (a million files, say), so the two usual names beside each
document (:data:`PROBED_SUFFIXES`) are asked for, a stat each. Remote arrays and
hierarchies read from consolidated metadata are not searched: a request per array is no
price for a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from catalogue.model.nodes import V2_ARRAY, V2_ATTRS, V2_CONSOLIDATED, V2_GROUP, V3_DOCUMENT

__all__ = ["PROBED_SUFFIXES", "backup_of", "probed_names"]

_DOCUMENTS = "|".join(re.escape(name) for name in (V3_DOCUMENT, V2_ARRAY, V2_GROUP, V2_ATTRS, V2_CONSOLIDATED))

#: ``name~``, ``name.~1~`` (numbered backups), ``name.bak``/``.orig``/``.old``/``.save``/
#: ``.backup``/``.tmp``/``.1``; ``#name#`` (auto-save), ``.#name`` (Emacs's lock), ``.name.swp``
#: and ``.swo`` (Vim's swap files).
_BACKUP = re.compile(
    rf"(?P<a>{_DOCUMENTS})(?:~|\.~\d+~|\.(?:bak|orig|old|save|backup|tmp|\d+))"
    rf"|#(?P<b>{_DOCUMENTS})#|\.#(?P<c>{_DOCUMENTS})|\.(?P<d>{_DOCUMENTS})\.sw[op]"
)

#: What is asked for beside an array's documents where its folder is not listed: the
#: backups Emacs, nano, gedit and Vim (``backup``) leave, and the common ``.bak``.
PROBED_SUFFIXES = ("~", ".bak")


def backup_of(name: str) -> str | None:
    """The metadata document a file named ``name`` is a copy of, or None."""
    match = _BACKUP.fullmatch(name)
    if match is None:
        return None
    return next(group for group in match.groups() if group is not None)


def probed_names(documents: Iterable[str]) -> list[str]:
    """The copies of ``documents`` asked for beside an array (see :data:`PROBED_SUFFIXES`)."""
    return [name + suffix for name in documents for suffix in PROBED_SUFFIXES]
