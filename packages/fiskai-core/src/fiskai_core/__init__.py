"""fiskai core: the fisk tool model, its trust boundary, safe execution, selection and configuration.

A leaf library: imports no fiskai package and no heavy SDK. Public names live in its subpackages
(`fiskai_core.fisk`, `fiskai_core.tools`, `fiskai_core.config`).
"""
