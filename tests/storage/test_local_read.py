"""Documents of local folders, read with the system's calls: the answers fsspec gave."""

from __future__ import annotations

import pathlib

import pytest

from catalogue.errors import DocumentError
from catalogue.storage.opening import open_store


@pytest.fixture
def folder(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group"}')
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "zarr.json").write_bytes(b"{" + b" " * 5000 + b"}")
    (tmp_path / "folder" / "zarr.json").mkdir(parents=True)
    (tmp_path / "file").write_text("not a folder")
    return tmp_path


def test_a_document_is_read_whole(folder: pathlib.Path) -> None:
    store = open_store(str(folder))
    assert store.read("zarr.json") == b'{"zarr_format": 3, "node_type": "group"}'
    assert store.read_many(["zarr.json", "missing/zarr.json"]) == [store.read("zarr.json"), None]


def test_a_missing_document_is_none(folder: pathlib.Path) -> None:
    store = open_store(str(folder))
    assert store.read("missing/zarr.json") is None
    assert store.read(".zattrs") is None


def test_a_folder_where_a_document_belongs_is_named(folder: pathlib.Path) -> None:
    store = open_store(str(folder))
    with pytest.raises(DocumentError) as info:
        store.read("folder/zarr.json")
    assert str(info.value) == f"{folder}/folder/zarr.json: is a folder, expected a JSON document"
    assert info.value.rule == "document.unreadable"


def test_a_path_through_a_file_cannot_be_read(folder: pathlib.Path) -> None:
    store = open_store(str(folder))
    with pytest.raises(DocumentError, match=r"file/zarr\.json: cannot read: Not a directory"):
        store.read("file/zarr.json")


def test_the_size_limit_is_checked_before_reading(folder: pathlib.Path) -> None:
    store = open_store(str(folder), max_document_bytes=1000)
    with pytest.raises(DocumentError) as info:
        store.read("big/zarr.json")
    assert info.value.rule == "json.too-large"
    assert "document is 5,002 bytes, larger than the limit of 1,000 bytes" in str(info.value)
    # Consolidated metadata is allowed more (CONSOLIDATED_FACTOR times the limit).
    assert store.read("big/zarr.json", consolidated=True) is not None


def test_errors_come_back_in_place_when_asked(folder: pathlib.Path) -> None:
    store = open_store(str(folder), max_document_bytes=1000)
    got = store.read_many(["zarr.json", "big/zarr.json", "folder/zarr.json"], return_errors=True)
    assert isinstance(got[0], bytes)
    assert isinstance(got[1], DocumentError) and got[1].rule == "json.too-large"
    assert isinstance(got[2], DocumentError) and got[2].rule == "document.unreadable"


def test_links_are_followed_as_before(folder: pathlib.Path) -> None:
    (folder / "gone").mkdir()
    (folder / "gone" / "zarr.json").symlink_to(folder / "nowhere.json")
    (folder / "linked").mkdir()
    (folder / "linked" / "zarr.json").symlink_to(folder / "zarr.json")
    (folder / "to-folder").mkdir()
    (folder / "to-folder" / "zarr.json").symlink_to(folder / "big")
    store = open_store(str(folder))
    assert store.read("gone/zarr.json") is None
    assert store.read("linked/zarr.json") == store.read("zarr.json")
    with pytest.raises(DocumentError, match="is a folder, expected a JSON document"):
        store.read("to-folder/zarr.json")


def test_a_file_without_a_size_is_read_only_to_the_limit(folder: pathlib.Path) -> None:
    """A device says it holds nothing and never ends: read up to one byte past the limit."""
    (folder / "endless").mkdir()
    (folder / "endless" / "zarr.json").symlink_to("/dev/zero")
    store = open_store(str(folder), max_document_bytes=1000)
    with pytest.raises(DocumentError) as info:
        store.read("endless/zarr.json")
    assert info.value.rule == "json.too-large"
