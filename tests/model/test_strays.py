"""Which file names are editors' copies of metadata documents (catalogue.model.strays)."""

from __future__ import annotations

import pytest

from catalogue.model.strays import backup_of, probed_names


@pytest.mark.parametrize(("name", "document"), [
    (".zattrs~", ".zattrs"), (".zarray.bak", ".zarray"), ("zarr.json.orig", "zarr.json"),
    (".zgroup.old", ".zgroup"), (".zmetadata.save", ".zmetadata"), ("zarr.json.backup", "zarr.json"),
    ("zarr.json.tmp", "zarr.json"), (".zattrs.1", ".zattrs"), (".zattrs.~12~", ".zattrs"),
    ("#.zattrs#", ".zattrs"), (".#zarr.json", "zarr.json"), ("..zattrs.swp", ".zattrs"), (".zarr.json.swo", "zarr.json"),
])
def test_copies_name_their_document(name, document):
    assert backup_of(name) == document


@pytest.mark.parametrize("name", [
    ".zattrs", "zarr.json", ".zarray.json", "zarr.json.notes", "zarr.jsonx", "my.zattrs~", "0.0", "c", ".zattrs~~",
    "zarr.json.bak.gz", ".zattrs.swp", "#.zattrs", "ZARR.JSON~",
])
def test_other_files_are_not_copies(name):
    assert backup_of(name) is None


def test_the_probed_names_are_copies_of_the_documents_asked_about():
    names = probed_names([".zarray", ".zattrs"])
    assert len(names) == 4 and {backup_of(n) for n in names} == {".zarray", ".zattrs"}
