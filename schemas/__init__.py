"""JSON and YAML schemas, shipped inside the wheel as ``catalogue.schemas``.

A package only so that ``importlib.resources`` finds it in every install mode.
"""
