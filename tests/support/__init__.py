"""Helpers shared by the test suite: store builders, servers, comparers, paths.

Imported as ``from tests.support import stores`` (the repository root is on
``sys.path`` once, through pyproject's ``pythonpath``); nothing here is a test.
"""
