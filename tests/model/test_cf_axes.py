"""CF's axis identification, once (review item 8): the rule both extents/ and rdf/datacube use."""

from __future__ import annotations

import pytest

from catalogue.model.cf_axes import axis_kind, nearest_coordinate


@pytest.mark.parametrize(("attributes", "kind"), [
    ({"standard_name": "latitude"}, "lat"),
    ({"standard_name": " longitude "}, "lon"),
    ({"standard_name": "projection_x_coordinate", "units": "m"}, "x"),
    ({"standard_name": "projection_y_coordinate"}, "y"),
    ({"standard_name": "time"}, "time"),
    ({"standard_name": "depth"}, "vertical"),
    ({"units": "degrees_north"}, "lat"),
    ({"units": "Degree_E"}, "lon"),
    ({"units": "days since 2000-01-01"}, "time"),
    ({"units": "HOURS SINCE 1970-01-01 00:00"}, "time"),
    ({"axis": "x"}, "x"),
    ({"axis": "Y"}, "y"),
    ({"axis": "T"}, "time"),
    ({"axis": "Z"}, "vertical"),
    ({"positive": "down", "units": "m"}, "vertical"),
    # the order: standard_name, then units, then axis
    ({"standard_name": "latitude", "axis": "X"}, "lat"),
    ({"units": "degrees_east", "axis": "Y"}, "lon"),
    # rotated-pole names are not geographic: axis says x/y in the grid mapping's CRS
    ({"standard_name": "grid_longitude", "units": "degrees", "axis": "X"}, "x"),
    ({"standard_name": "grid_latitude", "units": "degrees"}, None),
    ({}, None),
    ({"units": "m"}, None),
])
def test_axis_kind(attributes, kind):
    assert axis_kind(attributes) == kind


@pytest.mark.parametrize("attributes", [
    {"standard_name": ["longitude"]}, {"units": 5}, {"axis": ["X"]}, {"positive": None}, {"standard_name": {"a": 1}},
])
def test_values_of_the_wrong_type_identify_nothing(attributes):
    assert axis_kind(attributes) is None


def test_nearest_coordinate_searches_upwards_from_the_arrays_group():
    arrays = {"lat": "root lat", "g/lat": "g's lat", "g/h/t": "deep t"}
    assert nearest_coordinate("g/h/v", "lat", arrays.get) == "g's lat"
    assert nearest_coordinate("v", "lat", arrays.get) == "root lat"
    assert nearest_coordinate("g/v", "t", arrays.get) is None      # never downwards
    assert nearest_coordinate("g/h/v", "t", arrays.get) == "deep t"
    assert nearest_coordinate("g/v", "a/b", arrays.get) is None    # a name, not a path
