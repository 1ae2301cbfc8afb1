"""The fast path of record decoding: the three kinds that make up almost every journal.

Loading 10,000 records has a 100 ms budget, and after JSON parsing the cost is object construction: a
frozen dataclass's `__init__` routes every field through `object.__setattr__`, about three times the cost
of a plain assignment. The builders here fill the same slots through their descriptors, which yields
the identical frozen object at plain-object speed. Anything unusual returns None and goes through the
strict decoder in `_codec`, which owns every error message.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Final, cast

from .records import (
    PROTOCOL_PREFIX,
    SCHEMA_VERSION,
    AssistantRecord,
    JsonObject,
    Record,
    ToolIntentRecord,
    ToolResultRecord,
)

__all__ = ["fast_record"]

_ASSISTANT: Final = PROTOCOL_PREFIX + "assistant"
_INTENT: Final = PROTOCOL_PREFIX + "tool_intent"
_RESULT: Final = PROTOCOL_PREFIX + "tool_result"
_ASSISTANT_KEYS: Final = frozenset(
    {"iteration", "message", "stop_reason", "in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens"}
)
_INTENT_KEYS: Final = frozenset(
    {"tool_use_id", "tool_name", "args_digest", "effect_id", "argv", "remote_target", "gate"}
)
_RESULT_KEYS: Final = frozenset({"tool_use_id", "result", "remote", "gate"})

_new = object.__new__


def _setters(cls: type, names: tuple[str, ...]) -> tuple[Any, ...]:
    # A field added to a record class without a builder update would leave a slot unset: fail at import.
    declared = tuple(f.name for f in fields(cls))
    if declared != names:
        raise RuntimeError(f"fast builder of {cls.__name__} is out of date: {declared} != {names}")
    return tuple(getattr(cls, name).__set__ for name in names)


_R_SEQ, _R_PAYLOAD, _R_VERSION, _R_TIME = _setters(Record, ("seq", "payload", "version", "time"))
_A_IT, _A_MSG, _A_STOP, _A_IN, _A_OUT, _A_CR, _A_CC = _setters(
    AssistantRecord,
    ("iteration", "message", "stop_reason", "in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens"),
)
_I_ID, _I_NAME, _I_DIGEST, _I_EFFECT, _I_ARGV, _I_TARGET, _I_GATE = _setters(
    ToolIntentRecord, ("tool_use_id", "tool_name", "args_digest", "effect_id", "argv", "remote_target", "gate")
)
_T_ID, _T_RESULT, _T_REMOTE, _T_GATE = _setters(ToolResultRecord, ("tool_use_id", "result", "remote", "gate"))


def _record(seq: int, payload: Any, version: int, time: str) -> Record:
    record = _new(Record)
    _R_SEQ(record, seq)
    _R_PAYLOAD(record, payload)
    _R_VERSION(record, version)
    _R_TIME(record, time)
    return record


def fast_record(obj: dict[str, Any]) -> Record | None:
    """Decode an assistant, tool_intent or tool_result record, or return None to take the strict path.

    Args:
        obj: The parsed record with its `crc32` field already removed.

    Returns:
        The record when every check passes; None for any other kind or anything unexpected.
    """
    seq = obj.get("seq")
    version = obj.get("version")
    if type(seq) is not int or seq < 2 or type(version) is not int or not 1 <= version <= SCHEMA_VERSION:
        return None
    time = obj.get("time", "")
    if len(obj) != (5 if "time" in obj else 4) or type(time) is not str:
        return None
    protocol = obj.get("protocol")
    if protocol == _ASSISTANT:
        return _assistant(seq, version, obj.get("assistant"), time)
    if protocol == _RESULT:
        return _result(seq, version, obj.get("tool_result"), time)
    if protocol == _INTENT:
        return _intent(seq, version, obj.get("tool_intent"), time)
    return None


def _assistant(seq: int, version: int, raw: object, time: str) -> Record | None:
    if type(raw) is not dict:
        return None
    b = cast("dict[str, Any]", raw)
    if not _ASSISTANT_KEYS.issuperset(b):
        return None
    it, msg, stop = b.get("iteration"), b.get("message"), b.get("stop_reason", "")
    tin, tout = b.get("in_tokens"), b.get("out_tokens")
    cr, cc = b.get("cache_read_tokens", 0), b.get("cache_create_tokens", 0)
    if not (
        type(it) is int
        and type(msg) is dict
        and type(stop) is str
        and type(tin) is int
        and type(tout) is int
        and type(cr) is int
        and type(cc) is int
    ):
        return None
    payload = _new(AssistantRecord)
    _A_IT(payload, it)
    _A_MSG(payload, cast("JsonObject", msg))
    _A_STOP(payload, stop)
    _A_IN(payload, tin)
    _A_OUT(payload, tout)
    _A_CR(payload, cr)
    _A_CC(payload, cc)
    return _record(seq, payload, version, time)


def _result(seq: int, version: int, raw: object, time: str) -> Record | None:
    if type(raw) is not dict:
        return None
    b = cast("dict[str, Any]", raw)
    if not _RESULT_KEYS.issuperset(b):
        return None
    use_id, result, remote, gate = b.get("tool_use_id"), b.get("result"), b.get("remote", False), b.get("gate")
    if not (
        type(use_id) is str and type(result) is dict and type(remote) is bool and (gate is None or type(gate) is dict)
    ):
        return None
    payload = _new(ToolResultRecord)
    _T_ID(payload, use_id)
    _T_RESULT(payload, cast("JsonObject", result))
    _T_REMOTE(payload, remote)
    _T_GATE(payload, gate)
    return _record(seq, payload, version, time)


def _intent(seq: int, version: int, raw: object, time: str) -> Record | None:
    if type(raw) is not dict:
        return None
    b = cast("dict[str, Any]", raw)
    if not _INTENT_KEYS.issuperset(b):
        return None
    use_id, name, digest, effect = b.get("tool_use_id"), b.get("tool_name"), b.get("args_digest"), b.get("effect_id")
    argv, target, gate = b.get("argv"), b.get("remote_target"), b.get("gate")
    if not (
        type(use_id) is str
        and type(name) is str
        and type(digest) is str
        and type(effect) is str
        and (target is None or type(target) is str)
        and (gate is None or type(gate) is dict)
        and (argv is None or (type(argv) is list and all(type(a) is str for a in cast("list[Any]", argv))))
    ):
        return None
    payload = _new(ToolIntentRecord)
    _I_ID(payload, use_id)
    _I_NAME(payload, name)
    _I_DIGEST(payload, digest)
    _I_EFFECT(payload, effect)
    _I_ARGV(payload, None if argv is None else tuple(cast("list[str]", argv)))
    _I_TARGET(payload, target)
    _I_GATE(payload, gate)
    return _record(seq, payload, version, time)
