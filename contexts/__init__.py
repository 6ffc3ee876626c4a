"""JSON-LD contexts and the ontology, shipped inside the wheel as ``catalogue.contexts``.

This folder is a package only so that ``importlib.resources`` finds it in both
editable and regular installs (pyproject maps it to ``catalogue.contexts``).
"""
