"""Folders the tests read from or write to, named once (test modules live at different depths)."""

from __future__ import annotations

import os
import pathlib

#: The checkout (or clone) the tests run from.
REPO = pathlib.Path(__file__).resolve().parents[2]
#: The demo stores of ``make demo`` (examples/*.zarr).
EXAMPLES = REPO / "examples"
#: The committed seed examples (the issue's own examples, verbatim and fixed).
SEED_EXAMPLES = pathlib.Path(__file__).resolve().parent / "data" / "seed_examples"
#: The shared seed documents (spec texts, ZEPs), beside the checkout rather than vendored.
SEEDS = REPO.parent / "shared" / "seeds"
#: Where tests keep artefacts (screenshots, measurements); git-ignored.
ARTIFACTS = pathlib.Path(os.environ.get("CATALOGUE_TEST_ARTIFACTS", REPO / "build" / "test-artifacts"))
