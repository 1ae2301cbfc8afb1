"""Fakes for the seams fiskai_core defines, shipped as product code so every tier tests the same way."""

from ._calls import call_tool
from ._decodes import DecodeCounter
from ._fake_app import write_fake_app
from ._knowledge import FakePack, FakeSearcher
from ._prompter import ScriptedPrompter
from ._remote import FakeRemoteInvoker
from ._tools import FakeTool, Rule

__all__ = [
    "DecodeCounter",
    "FakePack",
    "FakeRemoteInvoker",
    "FakeSearcher",
    "FakeTool",
    "Rule",
    "ScriptedPrompter",
    "call_tool",
    "write_fake_app",
]
