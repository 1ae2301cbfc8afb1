"""The store: one index directory as a process holds it (private; the public names are in `fiskai_rag`).

`_store.Store` is the face every caller uses; it takes the store's lock and hands each call on: the
directory's lifecycle and the single-writer lock (`_files`, `_lock`), the SQLite file and its schema
(`_db`), the joins every reader shares (`_sql`), citations (`_citation`), sources and stats
(`_catalog`), sqlite-vec (`_vec`) and the helper thread searches and index runs hand work to (`_worker`).
"""
