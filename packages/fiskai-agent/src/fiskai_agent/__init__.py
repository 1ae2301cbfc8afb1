"""The fiskai agent loop.

Owns the iteration loop that calls the model, runs the tools it asks for behind the confirm gate,
journals each step and reports through the Events seam; and the Anthropic adapter, the only module
allowed to import `anthropic`. Not built yet: the agent loop issue fills this package.
"""
