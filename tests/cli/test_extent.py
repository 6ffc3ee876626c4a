"""catalogue extent, --coordinate-bytes and the sources file's coordinate_bytes, on real stores."""

from __future__ import annotations

import json

import pytest
import xarray as xr
from click.testing import CliRunner

from catalogue.cli import main
from tests.support import cf_stores, convention_stores


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("geo")
    return {"grid": cf_stores.build_regional_bounds(root), "pyramid": convention_stores.build_pyramid(root),
            "plain": convention_stores.build_plain(root)}


def test_extent_prints_the_harvested_figures_and_their_sources(stores, db_url):
    assert run("harvest", str(stores["grid"]), "--db", db_url)[0] == 0
    iri = stores["grid"].resolve().as_uri()
    code, out, _ = run("extent", iri, "--db", db_url, "--json")
    assert code == 0
    found = json.loads(out)["extent"]
    with xr.open_zarr(stores["grid"]) as ds:  # independent: the bounds variables' extremes
        lat_bounds = ds[ds["lat"].attrs["bounds"]].values
        lon_bounds = ds[ds["lon"].attrs["bounds"]].values
    assert found["bbox"] == pytest.approx([lon_bounds.min(), lat_bounds.min(), lon_bounds.max(), lat_bounds.max()])
    assert {s["kind"] for s in found["sources"] if s["figure"] == "bbox"} == {"cf:bounds"}
    code, text, _ = run("extent", iri, "--db", db_url)
    assert code == 0 and "bbox (CRS84)" in text and "source of bbox" in text


def test_extent_of_a_store_without_geography_says_so(stores, db_url):
    assert run("harvest", str(stores["plain"]), "--db", db_url)[0] == 0
    code, out, _ = run("extent", stores["plain"].resolve().as_uri(), "--db", db_url)
    assert code == 0 and "no extent" in out


def test_extent_lists_multiscale_levels(stores, db_url):
    assert run("harvest", str(stores["pyramid"]), "--db", db_url)[0] == 0
    code, out, _ = run("extent", stores["pyramid"].resolve().as_uri(), "--db", db_url, "--json")
    levels = json.loads(out)["multiscales"]["levels"]
    assert code == 0 and [level["index"] for level in levels] == [0, 1, 2]


def test_unknown_node_is_a_usage_error(db_url):
    code, _, err = run("extent", "file:///nowhere.zarr", "--db", db_url)
    assert code == 2 and "no node" in err


def test_coordinate_bytes_bounds_what_is_read(stores, tmp_path):
    db = f"sqlite:///{tmp_path / 'c.db'}"
    iri = stores["grid"].resolve().as_uri()
    assert run("harvest", str(stores["grid"]), "--db", db, "--coordinate-bytes", "0")[0] == 0
    assert json.loads(run("extent", iri, "--db", db, "--json")[1])["extent"] is None  # CF needs the values
    config = tmp_path / "sources.toml"
    config.write_text(f'[[source]]\nurl = "{stores["grid"]}"\ncoordinate_bytes = 1000000\n')
    assert run("harvest", "--config", str(config), "--db", db, "--full")[0] == 0
    assert json.loads(run("extent", iri, "--db", db, "--json")[1])["extent"]["bbox"] is not None
    config.write_text(f'[[source]]\nurl = "{stores["grid"]}"\ncoordinate_bytes = -1\n')
    code, _, err = run("harvest", "--config", str(config), "--db", db)
    assert code == 2 and "coordinate_bytes" in err


def test_an_extent_the_byte_budget_stopped_is_not_read_not_undeclared(tmp_path):
    """Review item 7: the graph's extent.values-budget finding turns "no extent" into "not read"."""
    store = cf_stores.build_curvilinear(tmp_path)
    db = f"sqlite:///{tmp_path / 'c.db'}"
    assert run("harvest", str(store), "--db", db, "--coordinate-bytes", "100")[0] == 0
    iri = store.resolve().as_uri()
    for node in (iri, f"{iri}/ts", f"{iri}/lat"):
        code, out, _ = run("extent", node, "--db", db)
        assert code == 0 and "not read: the coordinate byte budget was spent; harvest with --coordinate-bytes N" in out
        assert "says nothing" not in out and "/lat (4,800 bytes) were not read" in out
        found = json.loads(run("extent", node, "--db", db, "--json")[1])
        assert found["extent"] is None and len(found["not_read"]) == 1
    assert run("harvest", str(store), "--db", db, "--full")[0] == 0  # the default budget reads them
    found = json.loads(run("extent", iri, "--db", db, "--json")[1])
    assert found["extent"]["bbox"] is not None and found["not_read"] == []
