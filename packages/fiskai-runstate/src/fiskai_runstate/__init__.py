"""The fiskai run journal: append-only records folded into a resumable run state.

A leaf library: imports no fiskai package.
"""
