"""The loaded subset of deferred tools: found through find_tools, kept for the run, rebuilt on resume."""

from __future__ import annotations

from fiskai_core.builtins import DeferredTools, FindToolsAnswer, FindToolsTool
from fiskai_core.calls import Refusal, prepare_call
from fiskai_core.testing import FakeTool
from fiskai_core.tools import ToolFinder

_TOOLS = [
    FakeTool(name="stream_rm", description="Removes a stream"),
    FakeTool(name="stream_ls", description="List all known streams"),
    FakeTool(name="kv_del", description="Deletes a key or the entire bucket"),
    FakeTool(name="kv_get", description="Gets a value for a key"),
]


def _answer(finder: FindToolsTool, arguments: str) -> FindToolsAnswer:
    """What the loop does with a find_tools call: the call path first, then the finder's answer."""
    call = prepare_call(finder, arguments)
    if isinstance(call, Refusal):
        return FindToolsAnswer(call.result, ())
    return finder.find(call.plan.arguments)


def test_nothing_is_loaded_until_found_and_unfound_calls_are_refused() -> None:
    deferred = DeferredTools(tool.name for tool in _TOOLS)
    assert deferred.loaded == ()
    refusal = deferred.refusal("stream_rm")
    assert refusal is not None
    assert refusal.is_error
    assert "find_tools" in refusal.text
    assert deferred.refusal("memory_read") is None  # not deferred: someone else's decision


def test_found_tools_load_once_in_first_found_order_and_stay() -> None:
    finder = FindToolsTool(ToolFinder(_TOOLS))
    deferred = DeferredTools(tool.name for tool in _TOOLS)
    first = _answer(finder, '{"query": "delete a stream", "limit": 1}')
    assert deferred.load(first.found) == ("stream_rm",)
    second = _answer(finder, '{"query": "delete a key or a stream", "limit": 2}')
    assert set(second.found) == {"stream_rm", "kv_del"}
    assert deferred.load(second.found) == ("kv_del",)
    assert deferred.loaded == ("stream_rm", "kv_del")
    assert deferred.refusal("stream_rm") is None
    assert deferred.refusal("kv_get") is not None


def test_names_that_are_not_deferred_are_not_loaded() -> None:
    deferred = DeferredTools(["stream_rm"])
    assert deferred.load(["memory_read", "gone_tool", "stream_rm"]) == ("stream_rm",)
    assert deferred.loaded == ("stream_rm",)
    assert "gone_tool" not in deferred
    assert "stream_rm" in deferred


def test_restore_from_journaled_answers_gives_the_same_loaded_set() -> None:
    finder = FindToolsTool(ToolFinder(_TOOLS))
    live = DeferredTools(tool.name for tool in _TOOLS)
    journal: list[str] = []
    for arguments in ('{"query": "get a value"}', "not json", '{"query": "list streams", "limit": 1}'):
        answer = _answer(finder, arguments)
        live.load(answer.found)
        journal.append(answer.result.text)
    resumed = DeferredTools(tool.name for tool in _TOOLS)
    assert resumed.restore(journal) == live.loaded
    assert resumed.loaded == live.loaded
    assert resumed.loaded[0] == "kv_get"
