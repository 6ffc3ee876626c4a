"""Dataset discovery: the search index behind ``/datasets``, the portal and STAC, in the database.

What the index holds of a dataset (:mod:`.summary`), read from its graph in SQL
(:mod:`.read`); the rows kept by every write's own transaction (:mod:`.indexer`, the
store's index hook); searches (:mod:`.query`); counts and sizes (:mod:`.stats`); text
normal forms (:mod:`.normalise`).
"""
