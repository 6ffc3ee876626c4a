"""Where and when, computed at harvest (see docs/architecture.md).

The entry point is :func:`catalogue.extents.extract.extract_extents`::

    extract_extents(hierarchy: Hierarchy, store: StoreAccess | None, *,
                    value_bytes: int = DEFAULT_VALUE_BYTES) -> HierarchyExtents

``store`` reads coordinate values through ``chunks/`` (``None``: attributes only);
``value_bytes`` caps the coordinate bytes read per hierarchy.
"""
