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
