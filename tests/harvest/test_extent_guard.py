"""One source's extents cannot take down a harvest of many (review 16, item 1).

Two sources in one ``catalogue harvest`` call: the first holds a value that used to
crash the extraction (or, through a patched source, a crash nobody foresaw); the second
is fine. Both are catalogued, the finding is printed, and the exit code is that of a
harvest with warnings (0).
"""

from __future__ import annotations

import logging
import pathlib
import warnings

import numpy as np
import xarray as xr
from click.testing import CliRunner

from catalogue import api
from catalogue.cli import main
from catalogue.extents import cf
from tests.support import cf_stores


def _store(root: pathlib.Path, name: str, lon_attrs: dict) -> pathlib.Path:
    ds = xr.Dataset({"v": (("lat", "lon"), np.zeros((2, 2), dtype="float32"))},
                    coords={"lat": ("lat", np.array([0.0, 1.0]), cf_stores.LAT),
                            "lon": ("lon", np.array([0.0, 1.0]), lon_attrs)})
    path = root / f"{name}.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, zarr_format=3, consolidated=True)
    return path


def _harvest(db_url: str, *sources: pathlib.Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["harvest", *map(str, sources), "--db", db_url], catch_exceptions=False)
    return result.exit_code, result.stderr


def test_a_value_that_crashed_extraction_is_a_printed_finding_and_the_next_source_is_harvested(tmp_path, db_url):
    bad = _store(tmp_path, "bad", {"standard_name": ["longitude"], "units": "degrees_east"})
    good = _store(tmp_path, "good", cf_stores.LON)
    code, err = _harvest(db_url, bad, good)
    assert code == 0, err
    assert "must be a string" in err and "[extent.coordinate-values]" in err
    with api.open(db_url) as cat:
        for store in (bad, good):
            extent = cat.extent(store.resolve().as_uri())
            assert extent is not None and extent.bbox is not None  # the bad one's longitude is known by its units


def test_an_unexpected_exception_in_extraction_costs_only_that_hierarchys_extents(tmp_path, db_url, monkeypatch,
                                                                                  caplog):
    bad = _store(tmp_path, "bad", cf_stores.LON)
    good = _store(tmp_path, "good", cf_stores.LON)
    original = cf.evidence

    def broken(hierarchy, values):
        if "bad.zarr" in hierarchy.url:
            raise TypeError("unhashable type: 'list'")
        return original(hierarchy, values)

    monkeypatch.setattr(cf, "evidence", broken)
    with caplog.at_level(logging.WARNING, logger="catalogue.extents.extract"):
        code, err = _harvest(db_url, bad, good)
    assert code == 0, err
    assert "[extent.failed]" in err and "TypeError: unhashable type" in err
    assert any(r.exc_info for r in caplog.records if r.name == "catalogue.extents.extract")
    with api.open(db_url) as cat:
        assert cat.extent(bad.resolve().as_uri()) is None  # catalogued, without extents
        assert cat.node_graph(bad.resolve().as_uri() + "/v") is not None
        assert cat.extent(good.resolve().as_uri()).bbox is not None
