"""Chunks: from a catalogued array (its metadata rebuilt from the graph) to its data.

``model.chunk_keys`` (chunk key encodings) → ``selection`` (NumPy basic indexing) →
``layout`` (what the metadata says about chunks) → ``resolve`` (which chunks,
where, which byte ranges of which shards) → ``codecs`` (sharding included)/``read``
(fetch, decode, assemble) and ``tensorstore`` (a spec that opens the same array).
"""
