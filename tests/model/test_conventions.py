"""Convention declarations (catalogue/model/conventions.py): parsed once, problems named."""

from __future__ import annotations

import pytest

from catalogue.model.conventions import (
    Convention,
    ConventionError,
    convention_problems,
    declared_conventions,
    parse_convention,
)

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
