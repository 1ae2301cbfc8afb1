"""Context packs (private; `Store.context` is the way in).

`_build` takes search's hits and its own candidates, `_rank` scores them, `_select` picks what fits,
`_render` delivers the exact bytes, `_receipt` and `_receipts_store` record what was chosen, and
`_temporal` reads the date window.
"""
