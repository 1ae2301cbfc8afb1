"""Durable key/value notes for fiskai agents.

A leaf library: imports no fiskai package.
"""
