"""The fiskai agent-to-agent protocol over NATS.

Owns the wire messages, the server engine and the remote-tool invoker. Not built yet: the A2A
issue fills this package.
"""
