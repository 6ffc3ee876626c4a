"""``catalogue zom``: the ZEP 6 Zarr Object Model of a hierarchy."""

from __future__ import annotations

import json
import pathlib

from click.testing import CliRunner

from catalogue.cli import main
from catalogue.harvest import load_hierarchy
from catalogue.model.zom import hierarchy_zom
from tests.support.jsonvalues import assert_json_equal
from tests.support.paths import SEED_EXAMPLES
from tests.support.seeds import json_blocks, seed_text


def zom_cli(path: pathlib.Path) -> dict:
    result = CliRunner().invoke(main, ["zom", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_zep6_examples_are_reproduced_exactly():
    """The seed's own ZOM examples, read back from the stores written from them."""
    blocks = [b for b in json_blocks(seed_text("zep0006-zarr-object-model.txt")) if "members" in b and "zarr_format" in b]
    v3_example, v2_example = blocks[0], blocks[1]
    assert_json_equal(zom_cli(SEED_EXAMPLES / "zep6-v3"), v3_example)
    assert_json_equal(zom_cli(SEED_EXAMPLES / "zep6-v2"), v2_example)


def test_zom_of_nested_hierarchy(good_stores):
    zom = zom_cli(good_stores["zarr_v3_consolidated_nested"])
    assert set(zom) >= {"zarr_format", "node_type", "attributes", "members"}
    assert "consolidated_metadata" not in zom
    c = zom["members"]["a"]["members"]["b"]["members"]["c"]
    assert c["node_type"] == "array" and "attributes" in c and "members" not in c


def test_v2_zom_has_attributes_on_every_node(good_stores):
    zom = zom_cli(good_stores["zarr_v2_plain"])
    for member in zom["members"].values():
        assert "attributes" in member and member["zarr_format"] == 2


def test_lone_array_zom_is_the_array(good_stores):
    zom = zom_cli(good_stores["zarr_v3_lone_array"])
    assert zom["node_type"] == "array" and "members" not in zom


def test_members_key_in_group_metadata_is_renamed(tmp_path):
    store = tmp_path / "g.zarr"
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "members": 1, "_members": 2}))
    zom = hierarchy_zom(load_hierarchy(str(store)))
    assert zom["_members"] == 1 and zom["__members"] == 2 and zom["members"] == {}


def test_zom_reports_bad_nodes_and_exits_1(tmp_path, good_stores):
    import shutil

    store = pathlib.Path(shutil.copytree(good_stores["zarr_v2_plain"], tmp_path / "x.zarr"))
    (store / "counts" / ".zarray").write_text("{")
    result = CliRunner().invoke(main, ["zom", str(store)])
    assert result.exit_code == 1 and "counts/.zarray: invalid JSON" in result.stderr
    assert "counts" not in json.loads(result.stdout)["members"]
