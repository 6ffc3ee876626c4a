"""rdflib's own store tests, run against the ``catalogue`` store plugin, SQLite and PostgreSQL.

Three modules of rdflib's test suite exercise every registered store plugin (or, for
the namespace bindings, every store they list): ``test/test_dataset/test_dataset.py``,
``test/test_graph/test_graph.py`` and ``test/test_store/test_namespace_binding.py``.
They are taken from the sdist of the rdflib version installed here (downloaded from
the package index once into ``build/rdflib-sdist/``) and run in a pytest process of
their own with ``tests/graph/rdflib_suite/catalogue_stores.py`` loaded, which registers a
PostgreSQL variant of the store when ``CATALOGUE_TEST_POSTGRES_URL`` is set.

The one adaptation: ``test_namespace_binding.py`` lists its stores by hand rather than
asking the registry, so the catalogue's stores are added to that list (a line inserted
after BerkeleyDB's, the other disk-backed store).  Nothing else of rdflib's is changed.
Tests marked ``webtest`` (rdflib's marker for tests that fetch from the internet) are
deselected: this machine has no internet, and none of them is about stores.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from collections import Counter
from importlib.metadata import version

import pytest

from tests.support.paths import REPO

pytestmark = [pytest.mark.slow]

CACHE = REPO / "build" / "rdflib-sdist"
MODULES = [
    "test/test_dataset/test_dataset.py",
    "test/test_graph/test_graph.py",
    "test/test_store/test_namespace_binding.py",
]
#: A store's name among the parameters of a test id (``test_x[True-catalogue-file0]``).
_STORE_IN_ID = re.compile(r"[\[-](catalogue-postgresql|catalogue)(?=[\]-])(?!-postgresql)")
_BINDING_ANCHOR = '    *((StoreInfo("BerkeleyDB", {StoreTrait.DISK_BACKED}),) if has_bsddb else ()),\n'


def _sdist() -> pathlib.Path:
    """The sdist of the installed rdflib, downloaded once (skip, or fail in CI, without it)."""
    release = version("rdflib")
    CACHE.mkdir(parents=True, exist_ok=True)
    found = sorted(CACHE.glob(f"rdflib-{release}.tar.gz"))
    if found:
        return found[0]
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q",
         "-d", str(CACHE), f"rdflib=={release}"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    found = sorted(CACHE.glob(f"rdflib-{release}.tar.gz"))
    if proc.returncode or not found:
        reason = f"the sdist of rdflib {release} could not be downloaded: {proc.stderr.strip()[-300:]}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found[0]


def _test_tree(sdist: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    """rdflib's ``test`` package alone (not its source: the installed rdflib is tested)."""
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        members = [m for m in tar.getmembers() if m.name.startswith(f"{top}/test/")]
        tar.extractall(into, members=members, filter="data")
    root = into / top
    binding = root / "test/test_store/test_namespace_binding.py"
    text = binding.read_text(encoding="utf-8")
    assert _BINDING_ANCHOR in text, "rdflib's namespace binding tests no longer list stores as expected"
    stores = '    StoreInfo("catalogue", {StoreTrait.DISK_BACKED}),\n'
    if os.environ.get("CATALOGUE_TEST_POSTGRES_URL"):
        stores += '    StoreInfo("catalogue-postgresql", {StoreTrait.DISK_BACKED}),\n'
    binding.write_text(text.replace(_BINDING_ANCHOR, _BINDING_ANCHOR + stores), encoding="utf-8")
    return root


def test_rdflib_store_tests_pass_on_the_catalogue_store(tmp_path: pathlib.Path) -> None:
    root = _test_tree(_sdist(), tmp_path)
    report = tmp_path / "junit.xml"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    # The repository last, for tests.support (the scratch databases' template).
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests" / "graph" / "rdflib_suite"), str(root), str(REPO)])
    proc = subprocess.run(
        # No hypothesis plugin: its terminal summary imports a module after rdflib's
        # deep-recursion tests, and CPython 3.11 then fails to compile it ("AST constructor
        # recursion depth mismatch"), so the run exited 1 with every test passed.
        [sys.executable, "-m", "pytest", "-p", "catalogue_stores", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
         "-q", "-m", "not webtest", "-W", "ignore", f"--junitxml={report}",
         "--rootdir", str(root), *MODULES],
        cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    outcomes: Counter[str] = Counter()
    per_store: Counter[str] = Counter()
    problems: list[str] = []
    for case in ET.parse(report).iter("testcase"):
        name = case.get("name", "")
        result = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        outcomes[result] += 1
        found = _STORE_IN_ID.search(name)
        store = found.group(1) if found else None
        if store and result == "passed":
            per_store[store] += 1
        if result in ("failure", "error"):
            problems.append(f"{case.get('classname')}::{name}")
    tail = (proc.stdout[-3000:] + proc.stderr[-2000:])
    assert not problems, f"rdflib's tests failed on the catalogue store: {problems}\n{tail}"
    assert proc.returncode == 0, tail
    assert per_store["catalogue"] >= 30, (per_store, tail)
    if os.environ.get("CATALOGUE_TEST_POSTGRES_URL"):
        assert per_store["catalogue-postgresql"] == per_store["catalogue"], (per_store, tail)
    print(f"rdflib {version('rdflib')} store tests: {dict(outcomes)}; passed per store: {dict(per_store)}")

