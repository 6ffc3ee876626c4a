"""Extent evidence from ACDD attributes (extents/acdd.py)."""

from __future__ import annotations

import pytest
import shapely

from catalogue.extents import acdd
from catalogue.harvest import load_hierarchy
from catalogue.model.extents import Period
from tests.support import convention_stores as cs


def by_detail(found, path):
    return {e.source.detail: e for e in found if e.path == path}


def test_root_box_folds_0_360_and_the_duration_gives_the_end_in_utc(tmp_path):
    found, findings = acdd.evidence(load_hierarchy(str(cs.build_acdd(tmp_path))))
    assert findings == []
    root = by_detail(found, "")
    box = root["geospatial_lat_min, geospatial_lat_max, geospatial_lon_min, geospatial_lon_max"].bbox
    # 100..260 east is 100 E across the antimeridian to 100 W
    assert box.as_list() == [100.0, -10.5, -100.0, 20.0] and box.crosses_antimeridian
    time = root["time_coverage_start, time_coverage_duration, time_coverage_resolution"]
    # 2020-01-01T00:00+02:00 is 2019-12-31T22:00Z; P1M later is 2020-01-31T22:00Z
    assert (time.period.start, time.period.end) == ("2019-12-31T22:00:00Z", "2020-01-31T22:00:00Z")
    assert time.temporal_resolution == "P1D" and time.source.kind == "acdd"


def test_an_arrays_own_attributes_min_above_max_crosses_the_antimeridian_and_dates_stay_dates(tmp_path):
    found, _ = acdd.evidence(load_hierarchy(str(cs.build_acdd(tmp_path))))
    sst = by_detail(found, "sst")
    box = sst["geospatial_lat_min, geospatial_lat_max, geospatial_lon_min, geospatial_lon_max"].bbox
    assert box.as_list() == [170.0, 0.0, -175.0, 10.0]
    period = sst["time_coverage_start, time_coverage_end"].period
    assert (period.start, period.end, period.dates_only) == ("2020-01-01", "2020-12-31", True)


def test_geospatial_bounds_default_crs_is_epsg_4326_latitude_first(tmp_path):
    # ACDD's own example: a polygon written latitude, longitude (Utah)
    wkt = "POLYGON ((40.26 -111.29, 41.26 -111.29, 41.26 -110.29, 40.26 -110.29, 40.26 -111.29))"
    found, findings = acdd.evidence(load_hierarchy(str(cs.build_acdd(tmp_path, attrs={"geospatial_bounds": wkt}))))
    assert findings == []
    e = by_detail(found, "")["geospatial_bounds"]
    assert e.bbox.as_list() == pytest.approx([-111.29, 40.26, -110.29, 41.26])
    assert shapely.from_wkt(e.geometry).equals(shapely.box(-111.29, 40.26, -110.29, 41.26))


def test_geospatial_bounds_crs_is_honoured(tmp_path):
    attrs = {"geospatial_bounds": "POLYGON ((500000 5000000, 510000 5000000, 510000 5010000, 500000 5010000, 500000 5000000))",
             "geospatial_bounds_crs": "EPSG:32633"}
    from pyproj import Transformer
    t = Transformer.from_crs("EPSG:32633", "OGC:CRS84", always_xy=True)
    lons, lats = t.transform([500000, 510000, 510000, 500000], [5000000, 5000000, 5010000, 5010000])
    found, _ = acdd.evidence(load_hierarchy(str(cs.build_acdd(tmp_path, attrs=attrs))))
    e = by_detail(found, "")["geospatial_bounds, geospatial_bounds_crs"]
    assert e.bbox.as_list() == pytest.approx([min(lons), min(lats), max(lons), max(lats)], abs=1e-9)


@pytest.mark.parametrize(("attrs", "pointer"), [
    ({"geospatial_lat_min": 85, "geospatial_lat_max": 95, "geospatial_lon_min": 0, "geospatial_lon_max": 1},
     "/attributes/geospatial_lat_min"),
    ({"geospatial_lat_min": "north", "geospatial_lat_max": 5, "geospatial_lon_min": 0, "geospatial_lon_max": 1},
     "/attributes/geospatial_lat_min"),
    ({"geospatial_lat_min": 1}, "/attributes/geospatial_lat_min"),
    ({"geospatial_bounds": "POLYGON ((0 0, 1"}, "/attributes/geospatial_bounds"),
    ({"geospatial_bounds": "POINT (1 2)", "geospatial_bounds_crs": "EPSG:999999"}, "/attributes/geospatial_bounds_crs"),
    ({"time_coverage_start": "yesterday", "time_coverage_end": "2020-01-01"}, "/attributes/time_coverage_start"),
    ({"time_coverage_start": "2020-01-01", "time_coverage_duration": "one month"}, "/attributes/time_coverage_duration"),
    ({"time_coverage_start": "2021-01-01", "time_coverage_end": "2020-01-01"}, "/attributes/time_coverage_end"),
    ({"time_coverage_resolution": 5}, "/attributes/time_coverage_resolution"),
])
def test_bad_values_are_findings_not_crashes(tmp_path, attrs, pointer):
    h = load_hierarchy(str(cs.build_acdd(tmp_path, attrs=attrs)))
    found, findings = acdd.evidence(h)
    assert [(f.path, f.pointer, f.rule) for f in findings] == [("", pointer, "extent.acdd.unparseable")]
    assert by_detail(found, "") == {}


def test_no_acdd_gives_no_evidence(tmp_path):
    assert acdd.evidence(load_hierarchy(str(cs.build_plain(tmp_path)))) == ([], [])


def test_a_date_beside_a_date_time_keeps_its_whole_day():
    """time_coverage_end as a date covers that day: the start's date-time is cut to its UTC
    date rather than the end to midnight (which would drop the last day)."""
    import datetime as dt

    from catalogue.extents.iso8601 import period

    start = dt.datetime(2020, 1, 1, 23, 0, tzinfo=dt.timezone(dt.timedelta(hours=-2)))
    assert period(start, dt.date(2020, 1, 5)) == Period("2020-01-02", "2020-01-05")
    assert period(dt.date(2020, 1, 1), dt.datetime(2020, 1, 5, 12, tzinfo=dt.UTC)) == Period("2020-01-01", "2020-01-05")
