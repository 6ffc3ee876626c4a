"""Where and when, computed at harvest: see docs/architecture.md and docs/extents.md."""
