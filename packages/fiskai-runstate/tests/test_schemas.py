"""Every record the library writes validates against the JSON Schema it ships."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource

from fiskai_runstate import FileJournalStore, Record, encode_record
from fiskai_runstate.json_schemas import SCHEMA_BASE, schema_documents
from fiskai_runstate.records import (
    JsonObject,
    MetaRecord,
    TerminalRecord,
    ToolIntentRecord,
    ToolResultRecord,
    UserRecord,
)
from fiskai_runstate.testing import sample_meta, sample_turn

pytestmark = pytest.mark.anyio

_DOCUMENTS = schema_documents()
_RESOURCES: list[tuple[str, Resource[Any]]] = [(uri, Resource.from_contents(doc)) for uri, doc in _DOCUMENTS.items()]
_REGISTRY: Any = Registry().with_resources(_RESOURCES)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportUnknownVariableType]


def _validator(schema: dict[str, Any]) -> Any:
    return Draft202012Validator(schema, registry=_REGISTRY, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _validate(line: bytes) -> None:
    record = json.loads(line)
    kind = record["protocol"].rsplit(".", 1)[-1]
    schema = _DOCUMENTS[f"{SCHEMA_BASE}session.{kind}.json"]
    _validator(schema).validate(record)


def test_every_record_kind_has_a_schema() -> None:
    kinds = {uri.rsplit("/", 1)[-1] for uri in _DOCUMENTS}
    assert kinds == {
        f"session.{k}.json" for k in ("common", "meta", "assistant", "user", "tool_intent", "tool_result", "terminal")
    }
    for document in _DOCUMENTS.values():
        Draft202012Validator.check_schema(document)


async def test_records_written_by_the_file_store_validate(tmp_path: Path) -> None:
    store = FileJournalStore(tmp_path)
    base = sample_meta("valid")
    meta = MetaRecord(
        run_id=base.run_id,
        created=base.created,
        fingerprint=base.fingerprint,
        prompt=base.prompt,
        interactive=True,
        previous="earlier-chat",
    )
    journal = await store.create(meta)
    records = [
        *sample_turn("valid", seq=2, iteration=0),
        Record(seq=5, payload=UserRecord(message={"role": "user", "content": [{"text": {"text": "more"}}]})),
        Record(seq=6, payload=TerminalRecord(reason="error", message="boom")),
    ]
    for record in records:
        await journal.append(record)
    await journal.aclose()
    lines = (tmp_path / "valid.json").read_bytes().splitlines()
    assert len(lines) == 6
    for line in lines:
        _validate(line)


def test_schemas_reject_what_the_reader_rejects() -> None:
    line = encode_record(Record(seq=2, payload=TerminalRecord(reason="completed")))
    bad = json.loads(line)
    bad["user"] = {}
    with pytest.raises(ValidationError) as caught:
        _validator(_DOCUMENTS[f"{SCHEMA_BASE}session.terminal.json"]).validate(bad)
    assert "user" in str(caught.value.message)


def test_the_original_example_lines_validate() -> None:
    _validate(
        b'{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"orders-report",'
        b'"created":"2026-07-24T10:00:00.123456789+03:00","fingerprint":{},"prompt":"report on ORDERS"}}'
    )
    _validate(b'{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"suspended"}}')


async def test_gate_decisions_round_trip_and_validate(tmp_path: Path) -> None:
    """A gate decision rides on the intent that it allowed, or on the result of a call it refused."""
    store = FileJournalStore(tmp_path)
    journal = await store.create(sample_meta("gated"))
    assistant, *_ = sample_turn("gated", seq=2, iteration=0)
    allowed: JsonObject = {"allowed": True, "channel": "prompt", "tag": "ai:confirm", "digest": "a" * 64}
    denied: JsonObject = {"allowed": False, "channel": "no_terminal", "tag": "impact:rw", "digest": "b" * 64}
    records = [
        assistant,
        Record(
            seq=3,
            payload=ToolIntentRecord(
                tool_use_id="t1", tool_name="rm", args_digest="c" * 64, effect_id="gated/t1", gate=allowed
            ),
        ),
        Record(
            seq=4,
            payload=ToolResultRecord(
                tool_use_id="t1", result={"tool_use_id": "t1", "content": '{"allowed":false}'}, gate=denied
            ),
        ),
    ]
    for record in records:
        await journal.append(record)
    await journal.aclose()
    lines = (tmp_path / "gated.json").read_bytes().splitlines()
    for line in lines:
        _validate(line)
    loaded = await store.load("gated")
    intent, result = loaded[2].payload, loaded[3].payload
    assert isinstance(intent, ToolIntentRecord) and intent.gate == allowed
    assert isinstance(result, ToolResultRecord) and result.gate == denied
    bad = json.loads(lines[3])
    bad["tool_result"]["gate"]["channel"] = "whim"
    with pytest.raises(ValidationError):
        _validator(_DOCUMENTS[f"{SCHEMA_BASE}session.tool_result.json"]).validate(bad)
