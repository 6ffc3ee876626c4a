"""Structural schemas used at harvest (a package only so importlib.resources finds them)."""
