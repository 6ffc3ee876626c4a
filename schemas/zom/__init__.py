"""The ZEP 6 Zarr Object Model JSON schemas: verbatim (*.upstream.json) and corrected.

A package only so that ``importlib.resources`` finds it in every install mode.
"""
