"""The fiskai knowledge index: Markdown in, cited search hits out.

A leaf library: imports no fiskai package.
"""
