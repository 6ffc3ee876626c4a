"""OME-Zarr (NGFF 0.4 on Zarr v2, 0.5 on v3), written by ome-zarr-py: pyramids with axes,
axis types and units, physical pixel sizes and channels in the graph, validation against
the bundled NGFF schemas (clean images clean; broken metadata one finding with its
pointer; an unbundled version one warning), the GeoZarr rules kept off OME's
``multiscales`` list, axis types and units as ``/datasets`` facets on both databases, and
the portal's pyramid section; a plate and a well from the NGFF spec's examples.
"""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from rdflib import RDF, Namespace, URIRef

import catalogue
from catalogue.discovery.query import SearchQuery

pytest.importorskip("ome_zarr")
zarr = pytest.importorskip("zarr")

ZARR = Namespace("https://w3id.org/zarr-catalogue/vocab#")
CHANNELS = [{"label": "DAPI", "color": "0000FF", "window": {"start": 0, "end": 1000, "min": 0, "max": 65535}},
            {"label": "GFP", "color": "00FF00", "window": {"start": 0, "end": 1000, "min": 0, "max": 65535}}]


def _image(path: pathlib.Path, version: str) -> pathlib.Path:
    from ome_zarr.format import FormatV04, FormatV05
    from ome_zarr.io import parse_url
    from ome_zarr.writer import write_image, write_labels

    fmt = FormatV04() if version == "0.4" else FormatV05()
    data = np.random.default_rng(0).integers(0, 1000, (2, 8, 64, 64), dtype="uint16")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.group(store=parse_url(str(path), mode="w", fmt=fmt).store,
                          zarr_format=2 if version == "0.4" else 3, overwrite=True)
        write_image(data, root, axes="czyx", fmt=fmt, scale_factors=[2, 4],
                    storage_options={"chunks": (1, 4, 32, 32)}, scale={"z": 0.5, "y": 0.2, "x": 0.2},
                    axes_units={"z": "micrometer", "y": "micrometer", "x": "micrometer"}, omero={"channels": CHANNELS})
        labels = np.zeros((8, 64, 64), dtype="uint8")
        labels[:, 10:20, 10:20] = 1
        write_labels(labels, root, name="cells", axes="zyx", fmt=fmt)
    return path


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> dict[str, pathlib.Path]:
    root = tmp_path_factory.mktemp("ome")
    return {v: _image(root / f"image{v}.ome.zarr", v) for v in ("0.4", "0.5")}


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_images_are_pyramids_with_axes_units_and_physical_sizes(images, version, tmp_path):
    cat = catalogue.open(str(tmp_path / "c.db"))
    try:
        report = cat.harvest(str(images[version]))
        assert report.ok
        problems = [f.one_line() for f in report.validation.findings if f.severity != "info"]
        assert problems == []
        url = images[version].as_uri()
        graph = cat.node_graph(url)
        head = graph.value(URIRef(url), ZARR.multiscales)
        assert (head, RDF.type, ZARR.Multiscales) in graph
        assert str(graph.value(head, ZARR.convention)) == "ome-zarr"
        assert str(graph.value(head, ZARR.conventionVersion)) == version
        assert json.loads(graph.value(head, ZARR.axes)) == ["c", "z", "y", "x"]
        assert json.loads(graph.value(head, ZARR.axisTypes)) == ["channel", "space", "space", "space"]
        assert json.loads(graph.value(head, ZARR.axisUnits)) == [None, "micrometer", "micrometer", "micrometer"]
        assert json.loads(graph.value(head, ZARR.channels)) == ["DAPI", "GFP"]
        levels = {int(graph.value(level, ZARR.levelIndex)): level for level in graph.objects(head, ZARR.level)}
        assert sorted(levels) == [0, 1, 2]
        for index, level in levels.items():
            assert graph.value(level, ZARR.levelNode) == URIRef(f"{url}/s{index}")
            factor = 2 ** index
            assert json.loads(graph.value(level, ZARR.cellSize)) == pytest.approx([1.0, 0.5, 0.2 * factor, 0.2 * factor])
            assert json.loads(graph.value(level, ZARR.scale)) == pytest.approx([1.0, 1.0, factor, factor])
        # the label image is a pyramid of its own, its levels linked below its group
        label = graph.value(URIRef(f"{url}/labels/cells"), ZARR.multiscales)
        linked = {graph.value(level, ZARR.levelNode) for level in graph.objects(label, ZARR.level)}
        assert len(linked) >= 2 and linked == {URIRef(f"{url}/labels/cells/s{i}") for i in range(len(linked))}
        # the image links to its label image, which links back to the image it segments
        ome = graph.value(URIRef(url), ZARR.ome)
        assert (ome, RDF.type, ZARR.OmeImage) in graph
        links = [(str(graph.value(i, ZARR.labelPath)), graph.value(i, ZARR.labelNode))
                 for i in graph.objects(ome, ZARR.labelImage)]
        assert links == [("labels/cells", URIRef(f"{url}/labels/cells"))]
        label_ome = graph.value(URIRef(f"{url}/labels/cells"), ZARR.ome)
        assert (label_ome, RDF.type, ZARR.LabelImage) in graph
        assert graph.value(label_ome, ZARR.sourceImage) == URIRef(url)
        # the catalogue's model reads it back
        pyramid = cat.multiscales(url)
        assert pyramid is not None and pyramid.axis_units[1] == "micrometer" and pyramid.channels == ("DAPI", "GFP")
    finally:
        cat.close()


def test_axis_types_and_units_are_facets(images, db_url, tmp_path):
    cat = catalogue.open(db_url)
    try:
        for path in images.values():
            cat.harvest(str(path))
        zarr.open_group(str(tmp_path / "plain.zarr"), mode="w", zarr_format=3).attrs["title"] = "no pyramid"
        cat.harvest(str(tmp_path / "plain.zarr"))
        result = cat.search(SearchQuery(axis_unit=["micrometer"]))
        assert {h.iri for h in result.hits} == {p.as_uri() for p in images.values()}
        assert dict(result.facets["axis_type"]) == {"channel": 2, "space": 2}
        assert cat.search(SearchQuery(axis_type=["time"])).total == 0
        assert cat.search(SearchQuery()).total == 3
        hit = next(h for h in result.hits).summary()
        assert hit.axis_units == ["micrometer"]
    finally:
        cat.close()


def test_the_portal_shows_levels_axes_and_channels(images, tmp_path):
    from starlette.testclient import TestClient

    from catalogue.web.app import create_app
    from catalogue.web.settings import Settings

    db = str(tmp_path / "c.db")
    with catalogue.open(db) as cat:
        cat.harvest(str(images["0.5"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = TestClient(create_app(Settings(db=db)))
    with client:
        page = client.get("/browse", params={"iri": images["0.5"].as_uri()}).text
        assert "Multiscale levels" in page and "ome-zarr 0.5" in page
        assert "z (space, micrometer)" in page and "c (channel)" in page and "DAPI, GFP" in page
        facets = client.get("/datasets", params={"axis_unit": "micrometer"}).json()
        assert facets["total"] == 1 and facets["hits"][0]["axis_units"] == ["micrometer"]
        # the image's page links to its label image, whose page links back to the image
        assert 'id="ome"' in page and ">labels/cells</a>" in page
        label = client.get("/browse", params={"iri": f"{images['0.5'].as_uri()}/labels/cells"}).text
        assert "Label image" in label and "Segments" in label


def _rules(report) -> set[tuple[str, str, str]]:
    return {(f.rule, f.path, f.pointer) for f in report.findings}


def test_broken_metadata_is_one_finding_with_its_pointer(images, tmp_path):
    from catalogue.api import validate_store

    broken = tmp_path / "broken.ome.zarr"
    _image(broken, "0.4")
    attrs = json.loads((broken / ".zattrs").read_text())
    del attrs["multiscales"][0]["axes"][1]["type"]  # still valid: type is optional
    attrs["multiscales"][0]["datasets"][1]["coordinateTransformations"] = []  # at least one scale is required
    (broken / ".zattrs").write_text(json.dumps(attrs))
    report = validate_store(str(broken))
    found = [f for f in report.findings if f.rule.startswith(("ome.", "extent.ome", "geozarr."))]
    assert [f.rule for f in found] == ["ome.schema"], [f.one_line() for f in found]
    assert found[0].pointer.startswith("/multiscales/0/datasets/1/coordinateTransformations"), found[0].one_line()

    old = tmp_path / "old.ome.zarr"
    _image(old, "0.4")
    attrs = json.loads((old / ".zattrs").read_text())
    attrs["multiscales"][0]["version"] = "0.3"
    attrs["multiscales"][0]["datasets"][0]["coordinateTransformations"][0]["scale"] = [1.0]  # 1 value, 4 axes
    (old / ".zattrs").write_text(json.dumps(attrs))
    rules = {f.rule for f in validate_store(str(old)).findings}
    assert {"ome.version", "extent.ome.unusable"} <= rules
    assert not {r for r in rules if r.startswith("geozarr.")}


def test_plate_and_well_from_the_spec_examples(tmp_path):
    from catalogue.api import validate_store

    plate = {"plate": {"version": "0.4", "name": "test", "acquisitions": [{"id": 1}],
                       "columns": [{"name": "1"}, {"name": "2"}], "rows": [{"name": "A"}],
                       "wells": [{"path": "A/1", "rowIndex": 0, "columnIndex": 0},
                                 {"path": "A/2", "rowIndex": 0, "columnIndex": 1}], "field_count": 1}}
    root = zarr.open_group(str(tmp_path / "plate.ome.zarr"), mode="w", zarr_format=2)
    root.attrs.update(plate)
    for well in ("A/1", "A/2"):
        group = root.require_group(well)
        group.attrs["well"] = {"version": "0.4", "images": [{"path": "0", "acquisition": 1}]}
    report = validate_store(str(tmp_path / "plate.ome.zarr"))
    assert [f.one_line() for f in report.findings if f.severity != "info"] == []
    field = zarr.open_group(str(tmp_path / "plate.ome.zarr" / "A" / "1" / "0"), mode="w", zarr_format=2)
    field.attrs["multiscales"] = [{"version": "0.4", "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
                                   "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]}]}]
    field.create_array("0", shape=(4, 4), dtype="uint8")
    # In the graph: plate -> wells (row, column) -> fields of view -> images, walked by SPARQL
    url = (tmp_path / "plate.ome.zarr").as_uri()
    with catalogue.open(str(tmp_path / "plate.db")) as cat:
        for _ in range(2):  # a re-harvest replaces the structure, not adds to it
            cat.harvest(str(tmp_path / "plate.ome.zarr"), full=True)
        rows = cat.query(f"""
            PREFIX zarr: <https://w3id.org/zarr-catalogue/vocab#>
            SELECT ?name ?row ?column ?well ?image WHERE {{
              <{url}> zarr:ome ?plate . ?plate a zarr:Plate ; zarr:plateName ?name ; zarr:well ?w .
              ?w zarr:rowName ?row ; zarr:columnName ?column ; zarr:wellNode ?well .
              OPTIONAL {{ ?well zarr:ome ?o . ?o a zarr:Well ; zarr:fieldOfView ?f . ?f zarr:fieldNode ?image }}
            }} ORDER BY ?column""")
        assert [tuple(str(v) if v is not None else None for v in r) for r in rows] == [
            ("test", "A", "1", f"{url}/A/1", f"{url}/A/1/0"), ("test", "A", "2", f"{url}/A/2", None)]
        counts = cat.query(f"""PREFIX zarr: <https://w3id.org/zarr-catalogue/vocab#>
            SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{url}> {{ ?g zarr:ome ?o }} }}""")
        assert int(next(iter(counts))[0]) == 4  # the plate, two wells, one image
        from starlette.testclient import TestClient

        from catalogue.web.app import create_app
        from catalogue.web.settings import Settings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client = TestClient(create_app(Settings(db=str(tmp_path / "plate.db"))))
        with client:  # the plate's page: its rows, columns and wells, each linked
            page = client.get("/browse", params={"iri": url}).text
            assert "Plate" in page and "1 row (A) by 2 columns (1, 2), 2 wells" in page
            assert ">A/1</a></span> <span class=\"muted\">row A, column 1</span>" in page
            well = client.get("/browse", params={"iri": f"{url}/A/1"}).text
            assert "1 field of view" in well and "acquisition 1" in well
        (names,) = next(iter(cat.query(f"""PREFIX zarr: <https://w3id.org/zarr-catalogue/vocab#>
            SELECT ?rows WHERE {{ <{url}> zarr:ome/zarr:columnNames ?rows }}""")))
        assert json.loads(str(names)) == ["1", "2"]
    root.attrs["plate"] = {**plate["plate"], "wells": [{"path": "A/1"}]}  # rowIndex and columnIndex are required
    rules = _rules(validate_store(str(tmp_path / "plate.ome.zarr")))
    assert {r[0] for r in rules} >= {"ome.schema"}


def test_structure_paths_stay_inside_the_hierarchy():
    """OME paths are relative to the group declaring them: an absolute one, or one above
    the hierarchy's root, links to no node (its text is kept)."""
    from catalogue.model.nodes import Hierarchy, Location, Node
    from catalogue.model.ome import parse_ome
    from catalogue.rdf.ome import ome_triples

    def group(path: str, attributes: dict) -> Node:
        return Node(path=path, kind="group", zarr_format=2, documents={".zgroup": {"zarr_format": 2}, ".zattrs": attributes},
                    locations={".zgroup": Location("x")})

    plate = {"plate": {"version": "0.4", "rows": [{"name": "A"}], "columns": [{"name": "1"}],
                       "wells": [{"path": "/A/1", "rowIndex": 0, "columnIndex": 0},
                                 {"path": "../A/1", "rowIndex": 0, "columnIndex": 0},
                                 {"path": "A/1", "rowIndex": 0, "columnIndex": 0}]}}
    h = Hierarchy(url="file:///s.zarr", zarr_format=2, nodes={
        "": group("", {}), "p": group("p", plate), "A": group("A", {}), "A/1": group("A/1", {}),
        "p/A": group("p/A", {}), "p/A/1": group("p/A/1", {})})
    triples = ome_triples(h, "p", parse_ome(h.nodes["p"].attributes), {})
    linked = {str(o) for _s, p, o in triples if p == ZARR.wellNode}
    assert linked == {"file:///s.zarr/p/A/1", "file:///s.zarr/A/1"}  # "../A/1" is inside; "/A/1" is not followed
    paths = sorted(str(o) for _s, p, o in triples if p == ZARR.wellPath)
    assert paths == ["../A/1", "/A/1", "A/1"]
