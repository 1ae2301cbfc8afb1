"""fiskai core: the tool model, its trust boundary, safe execution, the fisk tool source, and configuration.

A leaf library: imports no fiskai package and no heavy SDK. Public names live in its subpackages:
`fiskai_core.tools` (what drivers see), `fiskai_core.exec` (what a tool source provides and how a command runs),
`fiskai_core.fisk` (the fisk tool source), `fiskai_core.config` (agent.yaml), `fiskai_core.confirm`
and `fiskai_core.prompter` (the confirmation gate).
"""
