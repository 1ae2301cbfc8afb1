"""Fakes for the seams fiskai_core defines, shipped as product code so every tier tests the same way."""

from ._tools import FakeTool, Rule

__all__ = ["FakeTool", "Rule"]
