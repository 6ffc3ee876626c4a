"""The strict comparer itself must catch what ``==`` misses."""

import pytest

from tests.support.jsonvalues import first_difference


@pytest.mark.parametrize(
    ("a", "b"),
    [(1, 1.0), (True, 1), (0.0, -0.0), ({"a": 1}, {"a": 1, "b": None}), ([1, [2]], [1, [2.0]]), (None, "null")],
)
def test_differences_are_found(a, b):
    assert first_difference(a, b) is not None


def test_nan_equals_nan_and_nested_equal():
    assert first_difference({"x": [float("nan"), {"y": "ü"}]}, {"x": [float("nan"), {"y": "ü"}]}) is None
