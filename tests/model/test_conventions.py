"""Convention declarations (catalogue/model/conventions.py): parsed once, problems named."""

from __future__ import annotations

import pytest

from catalogue.harvest import load_hierarchy
from catalogue.model.conventions import (
    MULTISCALES,
    SPATIAL,
    Convention,
    ConventionError,
    convention_problems,
    declared_conventions,
    declares,
    parse_convention,
    uses,
)
from catalogue.model.conventions import PROJ as PROJ_CONVENTION
from catalogue.model.geozarr import (
    GeoZarrError,
    Proj,
    effective_geo,
    parse_multiscales,
    parse_proj,
    parse_spatial,
)
from tests.support import convention_stores as cs

PROJ = {"uuid": "f17cb550-5864-4468-aeb7-f3180cfb622f", "name": "proj:",
        "schema_url": "https://raw.githubusercontent.com/zarr-conventions/geo-proj/main/schema.json"}


def test_a_declaration_round_trips():
    convention = parse_convention(PROJ)
    assert convention == Convention(uuid=PROJ["uuid"], schema_url=PROJ["schema_url"], name="proj:")
    assert convention.to_dict() == PROJ


@pytest.mark.parametrize(("entry", "problems"), [
    ("proj:", [((), "expected a convention object, got \"proj:\"")]),
    ({"name": "proj:"}, [((), "a convention needs at least one of uuid, schema_url, spec_url")]),
    ({"uuid": "not-a-uuid", "colour": 1}, [(("colour",), "unexpected key 'colour' in a convention object"),
                                           (("uuid",), 'not a UUID: "not-a-uuid"')]),
    ({"spec_url": "ftp://example.org/spec", "name": 3}, [(("spec_url",), 'not an http(s) URL: "ftp://example.org/spec"'),
                                                         (("name",), "expected a string, got 3")]),
])
def test_every_problem_is_named_with_its_place(entry, problems):
    assert convention_problems(entry) == problems


def test_parse_raises_with_the_first_problem():
    with pytest.raises(ConventionError, match='at uuid: not a UUID: "x"'):
        parse_convention({"uuid": "x"})


def test_declared_conventions_skip_malformed_entries():
    attrs = {"zarr_conventions": [PROJ, {"name": "no identity"}, 42]}
    assert declared_conventions(attrs) == (parse_convention(PROJ),)
    assert declared_conventions({"zarr_conventions": "proj:"}) == ()
    assert declared_conventions(None) == ()


# ------------------------------------------------------------- the GeoZarr conventions


def test_declarations_are_recognised_by_uuid_or_by_draft_and_release_names():
    assert declares({"zarr_conventions": [PROJ]}, PROJ_CONVENTION)
    assert declares({"zarr_conventions": [{"name": "spatial:", "spec_url": "https://example.org/s"}]}, SPATIAL)
    assert declares({"zarr_conventions": [{"name": "spatial", "spec_url": "https://example.org/s"}]}, SPATIAL)
    # a UUID decides over a name
    assert not declares({"zarr_conventions": [{"name": "multiscales", "uuid": PROJ["uuid"]}]}, MULTISCALES)
    assert not declares({"proj:code": "EPSG:4326"}, PROJ_CONVENTION)
    assert uses({"proj:code": 1, "spatial:bbox": 2, "multiscales": {}, "multiscales_x": 3}, MULTISCALES) == ["multiscales"]


def test_proj_null_means_no_crs_and_bad_types_name_the_value():
    assert parse_proj({"proj:code": None}) is None
    assert parse_proj({"proj:code": "EPSG:32633", "proj:wkt2": "GEOGCRS[...]"}).representations()[0][0] == "proj:wkt2"
    with pytest.raises(GeoZarrError, match="proj:code must be an authority:code string, got 4326"):
        parse_proj({"proj:code": 4326})


@pytest.mark.parametrize(("attributes", "message"), [
    ({"spatial:transform": [1, 0, 0, 0, -1]}, r"spatial:transform must be 6 finite numbers, got \[1, 0, 0, 0, -1\]"),
    ({"spatial:shape": [0, 3]}, r"spatial:shape must be two positive integers"),
    ({"spatial:registration": "corner"}, r'spatial:registration must be "pixel" or "node", got "corner"'),
    ({"spatial:dimensions": ["y"]}, r"spatial:dimensions must be two dimension names"),
])
def test_spatial_values_are_checked_at_the_boundary(attributes, message):
    with pytest.raises(GeoZarrError, match=message):
        parse_spatial(attributes)


def test_spatial_corners_follow_the_registration():
    pixel = parse_spatial({"spatial:transform": [10, 0, 100, 0, -10, 200], "spatial:shape": [2, 3]})
    assert pixel.transform_bounds() == (100, 180, 130, 200)
    node = parse_spatial({"spatial:transform": [10, 0, 100, 0, -10, 200], "spatial:shape": [2, 3],
                          "spatial:registration": "node"})
    assert node.transform_bounds() == (100, 190, 120, 200)
    rotated = parse_spatial({"spatial:transform": [0, 10, 100, 10, 0, 200], "spatial:shape": [2, 3]})
    assert rotated.transform_bounds() == (100, 200, 120, 230) and not rotated.degenerate


def test_multiscales_layout_is_parsed_and_checked():
    layout = parse_multiscales({"layout": [{"asset": "0"}, {"asset": "1", "derived_from": "0",
                                                            "transform": {"scale": [2, 2]}}]})
    assert layout.level("1").scale == (2.0, 2.0) and layout.level("1").derived_from == "0"
    with pytest.raises(GeoZarrError, match="has derived_from '0' but no transform"):
        parse_multiscales({"layout": [{"asset": "1", "derived_from": "0"}]})
    with pytest.raises(GeoZarrError, match=r"asset must be a relative path without '\.\.', got \"\.\./x\""):
        parse_multiscales({"layout": [{"asset": "../x"}]})


def test_inheritance_proj_whole_spatial_key_by_key_direct_children_only(tmp_path):
    h = load_hierarchy(str(cs.build_utm(tmp_path, array_attrs={"spatial:shape": [1200, 1000]})))
    b02 = effective_geo(h, "b02")
    assert b02.proj == Proj(code="EPSG:32633") and b02.proj_path == ""
    assert b02.spatial.transform == tuple(cs.UTM_TRANSFORM) and b02.spatial.shape == (1200, 1000)
    assert b02.spatial_paths["spatial:transform"] == "" and b02.spatial_paths["spatial:shape"] == "b02"
    assert effective_geo(h, "b03").proj == Proj(code="EPSG:32632")
    assert effective_geo(h, "time/b04") == effective_geo(h, "time") == type(b02)()


def test_multiscale_levels_inherit_from_the_pyramid_group_and_their_layout_entry(tmp_path):
    h = load_hierarchy(str(cs.build_pyramid(tmp_path)))
    level = effective_geo(h, "r20m/b02")
    assert level.proj.code == "EPSG:32633"
    assert level.spatial.transform[0] == 20.0 and level.spatial.shape == (200, 200)
