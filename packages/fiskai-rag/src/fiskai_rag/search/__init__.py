"""Search: the ranking as an ordered list of named stages (private; the public names are in `fiskai_rag`).

`_stages` lists the stages in the order they run and runs them; each stage's method is in its own
module (`_topk` and `_postings` for the BM25 candidates, `_burstiness`, `_proximity`, `_version`,
`_section`, `_fusion` and `_knn` for the vectors, `_distinct`), over what they read (`_query`,
`_word_parts`, `_fts_records`, `_path_boost`); `_hit` is what a search returns.
"""
