"""Indexing: the writer's side (private; `Store.index` is the way in).

Walk the roots (`_walk`), read, hash and chunk what changed (`_prepare`, `_chunk` over `_blocks`' line
scanner, `_page_name`, `_fingerprint`), write it in batches (`_write`); `_index.run_index` runs it all
and keeps the vector tier's manifest.
"""
