"""The GeoZarr conventions' JSON Schemas (proj, spatial, multiscales): verbatim (*.upstream.json) and corrected.

A package only so that ``importlib.resources`` finds it in every install mode.
"""
