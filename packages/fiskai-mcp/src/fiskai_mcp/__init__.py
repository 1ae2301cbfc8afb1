"""Serve fiskai tools over the Model Context Protocol.

Owns the MCP server face of the tool set: registration, calls, and confirmation by elicitation.
Not built yet: the MCP issue fills this package.
"""
