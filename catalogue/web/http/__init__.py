"""HTTP plumbing shared by every route package: errors, negotiation, parameters, limits, the pool."""
