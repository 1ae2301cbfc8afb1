"""Record <-> JSON line. The bytes are identical for every backend.

Encoding appends a `crc32` envelope field computed over the text before it, so a reader can tell a flipped
bit from an honest record. A line whose `crc32` does not match is damage even if it claims a newer version
(one flipped bit turns `"version":5` into `"version":7`), so a later schema must keep `crc32` meaning the
same, or name a different field, for its records to be reported as newer rather than damaged. Decoding is strict (unknown keys, wrong types and a second payload are errors)
because every schema version only adds optional fields or record kinds: a record that does not fit this
version's shape and is not from a newer version is damage, not a future feature.
"""

from __future__ import annotations

import json
import zlib
from typing import Any, Final, cast

import orjson

from ._fastdecode import fast_record
from .errors import JournalCorruptError, JournalVersionError
from .fingerprint import Fingerprint
from .records import (
    LEGACY_VERSION,
    PROTOCOL_PREFIX,
    SCHEMA_VERSION,
    TERMINAL_REASONS,
    AssistantRecord,
    JsonObject,
    MetaRecord,
    Payload,
    Record,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
)

__all__ = ["decode_lines", "decode_record", "encode_record"]

_CRC_OPEN: Final = b',"crc32":"'
_HEX_DIGITS: Final = b"0123456789abcdef"
_CRC_TAIL: Final = len(_CRC_OPEN) + 8 + 2  # ,"crc32":"  8 hex digits  "}
_ENVELOPE_KEYS: Final = frozenset({"seq", "protocol", "version", "time", "crc32"})
# One encoder for every record: json.dumps with options builds a new encoder per call.
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), check_circular=False, allow_nan=False)
_FINGERPRINT_STR: Final = ("provider", "model", "system_hash", "tools_hash", "thinking_mode", "reasoning_effort")
_FINGERPRINT_INT: Final = ("max_tokens", "max_iterations")


def encode_record(record: Record) -> bytes:
    """The record as one JSON line (no trailing newline), checksum included."""
    kind = record.kind
    body: dict[str, Any] = {"seq": record.seq, "protocol": PROTOCOL_PREFIX + kind, "version": record.version}
    if record.time:
        body["time"] = record.time
    body[kind] = _payload_json(record.payload)
    text = _ENCODER.encode(body).encode()
    head = text[:-1]
    return b'%s%s%08x"}' % (head, _CRC_OPEN, zlib.crc32(head))


def _payload_json(payload: Payload) -> dict[str, Any]:
    match payload:
        case MetaRecord():
            return _meta_json(payload)
        case AssistantRecord():
            out: dict[str, Any] = {"iteration": payload.iteration, "message": payload.message}
            if payload.stop_reason:
                out["stop_reason"] = payload.stop_reason
            out["in_tokens"] = payload.in_tokens
            out["out_tokens"] = payload.out_tokens
            if payload.cache_read_tokens:
                out["cache_read_tokens"] = payload.cache_read_tokens
            if payload.cache_create_tokens:
                out["cache_create_tokens"] = payload.cache_create_tokens
            return out
        case UserRecord():
            if payload.hooks:
                return {"message": payload.message, "hooks": list(payload.hooks)}
            return {"message": payload.message}
        case ToolIntentRecord():
            return _intent_json(payload)
        case ToolResultRecord():
            out = {"tool_use_id": payload.tool_use_id, "result": payload.result}
            if payload.remote:
                out["remote"] = True
            if payload.gate is not None:
                out["gate"] = payload.gate
            return out
        case TerminalRecord():
            out = {"reason": payload.reason}
            if payload.message:
                out["message"] = payload.message
            return out


def _meta_json(payload: MetaRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "version": payload.version,
        "run_id": payload.run_id,
        "created": payload.created,
        "fingerprint": _fingerprint_json(payload.fingerprint),
        "prompt": payload.prompt,
    }
    # Optional fields are written only when set, so an older reader's strict decoder sees older records.
    for name in ("interactive", "previous", "agent", "caller"):
        value = getattr(payload, name)
        if value:
            out[name] = value
    if payload.hooks:
        out["hooks"] = list(payload.hooks)
    return out


def _intent_json(payload: ToolIntentRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "tool_use_id": payload.tool_use_id,
        "tool_name": payload.tool_name,
        "args_digest": payload.args_digest,
        "effect_id": payload.effect_id,
    }
    if payload.argv is not None:
        out["argv"] = list(payload.argv)
    if payload.remote_target is not None:
        out["remote_target"] = payload.remote_target
    if payload.gate is not None:
        out["gate"] = payload.gate
    return out


def _fingerprint_json(fingerprint: Fingerprint) -> dict[str, Any]:
    # Empty and zero fields are omitted, as the original's `omitempty` does, so hashes of equal
    # fingerprints agree across implementations.
    out: dict[str, Any] = {}
    for name in (*_FINGERPRINT_STR, *_FINGERPRINT_INT):
        value = getattr(fingerprint, name)
        if value:
            out[name] = value
    return out


class _Bad(Exception):
    """A decoding failure, turned into a JournalCorruptError with the caller's location."""


def decode_record(line: bytes, *, run_id: str, line_no: int | None = None, where: str = "") -> Record:
    """Parse and check one JSON line.

    Args:
        line: The encoded record, without its newline.
        run_id: The run, for error messages.
        line_no: The 1-based line number in a file journal, for error messages.
        where: Another location description (a JetStream subject) when there is no line number.

    Returns:
        The record.

    Raises:
        JournalVersionError: The record was written by a newer schema version.
        JournalCorruptError: Anything else wrong with it; nothing is repaired.
    """
    try:
        obj = _parse(line)
        version = obj.get("version", LEGACY_VERSION)
        if type(version) is int and version > SCHEMA_VERSION:
            raise JournalVersionError(run_id, found=version, supported=SCHEMA_VERSION, line=line_no, where=where)
        return _record(obj)
    except _NewerMeta as err:
        raise JournalVersionError(
            run_id, found=err.version, supported=SCHEMA_VERSION, line=line_no, where=where
        ) from None
    except _Bad as err:
        raise JournalCorruptError(run_id, str(err), line=line_no, where=where) from None


def decode_lines(lines: list[bytes], *, run_id: str) -> list[Record]:
    """Decode the lines of a file journal (line n is `lines[n - 1]`) as `decode_record` would, but faster.

    The lines are parsed as one JSON array (one parser call instead of one per line), then each line's
    checksum is verified. When every checksum holds, each line is exactly a record this library wrote, so
    array element n is line n. If the parse fails, the counts differ or any checksum does not hold, every
    line goes through `decode_record` instead, so the first bad line is the one an error names.
    """
    if not lines:
        return []
    parts = list(lines)
    parts[0] = b"[" + parts[0]
    parts[-1] = parts[-1] + b"]"
    try:
        # orjson: the whole-journal parse is most of a load, and it runs 2-3x faster than json here.
        objs: Any = orjson.loads(b",".join(parts))
    except orjson.JSONDecodeError:
        objs = None
    if type(objs) is list and len(cast("list[Any]", objs)) == len(lines):
        records = _decode_verified(lines, cast("list[Any]", objs), run_id)
        if records is not None:
            return records
    return [decode_record(line, run_id=run_id, line_no=number) for number, line in enumerate(lines, start=1)]


def _decode_verified(lines: list[bytes], objs: list[Any], run_id: str) -> list[Record] | None:
    crc32 = zlib.crc32
    records: list[Record] = []
    append = records.append
    # `_verify` inlined: this loop runs once per record on every load.
    for number, (line, obj) in enumerate(zip(lines, objs, strict=True), start=1):
        digits = line[-10:-2]
        if (
            line[-_CRC_TAIL:-10] != _CRC_OPEN
            or line[-2:] != b'"}'
            or digits.translate(None, _HEX_DIGITS)
            or crc32(memoryview(line)[:-_CRC_TAIL]) != int(digits, 16)
        ):
            return None
        record = None
        if type(obj) is dict:
            body = cast("dict[str, Any]", obj)
            if body.pop("crc32", None) is not None:
                record = fast_record(body)
        append(record if record is not None else decode_record(line, run_id=run_id, line_no=number))
    return records


def _verify(line: bytes) -> bool:
    """Check the line's checksum; False when it has none (a record written by the original)."""
    if len(line) >= _CRC_TAIL and line[-_CRC_TAIL : -_CRC_TAIL + len(_CRC_OPEN)] == _CRC_OPEN and line[-2:] == b'"}':
        digits = line[-10:-2]
        # int() alone would accept " 0abcdef" for "00abcdef" (a one-bit flip), so check the digits first.
        if digits.translate(None, _HEX_DIGITS):
            raise _Bad("checksum field is not 8 lowercase hex digits")
        if zlib.crc32(memoryview(line)[:-_CRC_TAIL]) != int(digits, 16):
            raise _Bad("checksum mismatch: the record changed after it was written (a flipped bit or an edit)")
        return True
    return False


def _parse(line: bytes) -> dict[str, Any]:
    checked = _verify(line)
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as err:
        raise _Bad(f"not valid JSON: {err}") from None
    if not isinstance(obj, dict):
        raise _Bad("a record must be a JSON object")
    if "crc32" in obj and not checked:
        raise _Bad("checksum field is malformed or not last")
    checked_obj: dict[str, Any] = obj  # pyright: ignore[reportUnknownVariableType]
    checked_obj.pop("crc32", None)
    return checked_obj


def _record(obj: dict[str, Any]) -> Record:
    fast = fast_record(obj)
    return fast if fast is not None else _checked_record(obj)


def _checked_record(obj: dict[str, Any]) -> Record:
    seq = obj.get("seq")
    if type(seq) is not int or seq < 1:
        raise _Bad(f"seq must be an integer >= 1, got {seq!r}")
    version = obj.get("version", LEGACY_VERSION)
    if type(version) is not int or version < 1:
        raise _Bad(f"version must be a positive integer, got {version!r}")
    protocol = obj.get("protocol")
    if not isinstance(protocol, str) or not protocol.startswith(PROTOCOL_PREFIX):
        raise _Bad(f"unknown protocol {protocol!r}")
    kind = protocol[len(PROTOCOL_PREFIX) :]
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise _Bad(f"unknown protocol {protocol!r}")
    extra = set(obj) - _ENVELOPE_KEYS - {kind}
    if extra:
        raise _Bad(f"unexpected keys {sorted(extra)} beside the {kind!r} payload")
    body = obj.get(kind)
    if not isinstance(body, dict):
        raise _Bad(f"missing {kind!r} payload object")
    time = obj.get("time", "")
    if not isinstance(time, str):
        raise _Bad(f"time must be a string, got {time!r}")
    fields = _Fields(kind, body)  # pyright: ignore[reportUnknownArgumentType]
    payload = decoder(fields)
    fields.done()
    if kind == "meta" and seq != 1:
        raise _Bad(f"meta record at seq {seq}; it must be seq 1")
    return Record(seq=seq, payload=payload, version=version, time=time)


class _Fields:
    """Typed, strict access to one payload object; `done()` rejects keys nobody asked for."""

    def __init__(self, kind: str, body: dict[str, Any]) -> None:
        self._kind = kind
        self._body = body
        self._seen: set[str] = set()

    def raw(self, key: str, required: bool = False) -> Any:
        self._seen.add(key)
        if key not in self._body:
            if required:
                raise _Bad(f"{self._kind}.{key} is missing")
            return None
        return self._body[key]

    def str_(self, key: str, *, required: bool = True, default: str = "") -> str:
        value = self.raw(key, required)
        if value is None and not required:
            return default
        if not isinstance(value, str):
            raise _Bad(f"{self._kind}.{key} must be a string")
        return value

    def int_(self, key: str, *, required: bool = True) -> int:
        value = self.raw(key, required)
        if value is None and not required:
            return 0
        if type(value) is not int:
            raise _Bad(f"{self._kind}.{key} must be an integer")
        return value

    def bool_(self, key: str) -> bool:
        value = self.raw(key, False)
        if value is None:
            return False
        if type(value) is not bool:
            raise _Bad(f"{self._kind}.{key} must be a boolean")
        return value

    def obj(self, key: str) -> JsonObject:
        value = self.raw(key, True)
        if not isinstance(value, dict):
            raise _Bad(f"{self._kind}.{key} must be an object")
        return value  # pyright: ignore[reportUnknownVariableType]

    def done(self) -> None:
        extra = set(self._body) - self._seen
        if extra:
            raise _Bad(f"{self._kind} has unexpected fields {sorted(extra)}")


def _meta(f: _Fields) -> MetaRecord:
    version = f.int_("version")
    if version > SCHEMA_VERSION:
        # The payload version is checked here as well as on the envelope: the original writes it only here.
        raise _NewerMeta(version)
    fp = _Fields("meta.fingerprint", f.obj("fingerprint"))
    fingerprint = Fingerprint(
        provider=fp.str_("provider", required=False),
        model=fp.str_("model", required=False),
        system_hash=fp.str_("system_hash", required=False),
        tools_hash=fp.str_("tools_hash", required=False),
        thinking_mode=fp.str_("thinking_mode", required=False),
        reasoning_effort=fp.str_("reasoning_effort", required=False),
        max_tokens=fp.int_("max_tokens", required=False),
        max_iterations=fp.int_("max_iterations", required=False),
    )
    fp.done()
    return MetaRecord(
        version=version,
        run_id=f.str_("run_id"),
        created=f.str_("created"),
        fingerprint=fingerprint,
        prompt=f.str_("prompt", required=False),
        interactive=f.bool_("interactive"),
        previous=f.str_("previous", required=False),
        agent=f.str_("agent", required=False),
        caller=f.str_("caller", required=False),
        hooks=_hooks(f),
    )


def _hooks(f: _Fields) -> tuple[JsonObject, ...]:
    listed: object = f.raw("hooks")
    if listed is None:
        return ()
    if not isinstance(listed, list) or not all(isinstance(item, dict) for item in listed):  # pyright: ignore[reportUnknownVariableType]
        raise _Bad("hooks must be a list of objects")
    return tuple(cast("list[JsonObject]", listed))


class _NewerMeta(Exception):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def _assistant(f: _Fields) -> AssistantRecord:
    return AssistantRecord(
        iteration=f.int_("iteration"),
        message=f.obj("message"),
        stop_reason=f.str_("stop_reason", required=False),
        in_tokens=f.int_("in_tokens"),
        out_tokens=f.int_("out_tokens"),
        cache_read_tokens=f.int_("cache_read_tokens", required=False),
        cache_create_tokens=f.int_("cache_create_tokens", required=False),
    )


def _user(f: _Fields) -> UserRecord:
    return UserRecord(message=f.obj("message"), hooks=_hooks(f))


def _tool_intent(f: _Fields) -> ToolIntentRecord:
    argv_raw: object = f.raw("argv")
    argv: tuple[str, ...] | None = None
    if argv_raw is not None:
        items: list[object] = argv_raw if isinstance(argv_raw, list) else [None]  # pyright: ignore[reportUnknownVariableType]
        argv = tuple(a for a in items if isinstance(a, str))
        if len(argv) != len(items):
            raise _Bad("tool_intent.argv must be a list of strings")
    remote = f.raw("remote_target")
    if remote is not None and not isinstance(remote, str):
        raise _Bad("tool_intent.remote_target must be a string")
    return ToolIntentRecord(
        tool_use_id=f.str_("tool_use_id"),
        tool_name=f.str_("tool_name"),
        args_digest=f.str_("args_digest"),
        effect_id=f.str_("effect_id"),
        argv=argv,
        remote_target=remote,
        gate=_gate(f),
    )


def _tool_result(f: _Fields) -> ToolResultRecord:
    return ToolResultRecord(
        tool_use_id=f.str_("tool_use_id"), result=f.obj("result"), remote=f.bool_("remote"), gate=_gate(f)
    )


def _gate(f: _Fields) -> JsonObject | None:
    gate = f.raw("gate")
    if gate is None:
        return None
    if not isinstance(gate, dict):
        raise _Bad("gate must be an object")
    return gate  # pyright: ignore[reportUnknownVariableType]


def _terminal(f: _Fields) -> TerminalRecord:
    reason = f.str_("reason")
    for known in TERMINAL_REASONS:
        if reason == known:
            return TerminalRecord(reason=known, message=f.str_("message", required=False))
    raise _Bad(f"terminal.reason {reason!r} is not one of {list(TERMINAL_REASONS)}")


_DECODERS: Final = {
    "meta": _meta,
    "assistant": _assistant,
    "user": _user,
    "tool_intent": _tool_intent,
    "tool_result": _tool_result,
    "terminal": _terminal,
}
