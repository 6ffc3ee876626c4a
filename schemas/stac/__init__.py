"""The STAC extension JSON Schemas the catalogue's collections declare (datacube, projection, zarr), verbatim.

A package only so that ``importlib.resources`` finds it in every install mode.
"""
