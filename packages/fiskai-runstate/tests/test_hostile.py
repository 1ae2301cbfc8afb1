"""Hostile journals: each damage is a clear error naming where, and nothing on disk changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiskai_runstate import FileJournalStore, Record, encode_record, fold
from fiskai_runstate.errors import JournalCorruptError, JournalVersionError
from fiskai_runstate.file import parse_journal
from fiskai_runstate.records import MAX_RECORD_BYTES, SCHEMA_VERSION
from fiskai_runstate.testing import sample_meta, sample_turn

pytestmark = pytest.mark.anyio


def _lines(run_id: str, turns: int = 2) -> list[bytes]:
    records = [Record(seq=1, payload=sample_meta(run_id))]
    for iteration in range(turns):
        records += sample_turn(run_id, seq=len(records) + 1, iteration=iteration)
    return [encode_record(r) + b"\n" for r in records]


async def _refused(tmp_path: Path, run_id: str, data: bytes) -> JournalCorruptError:
    """Load and open both refuse the journal, and the file is byte-for-byte unchanged."""
    path = tmp_path / f"{run_id}.json"
    path.write_bytes(data)
    store = FileJournalStore(tmp_path)
    with pytest.raises(JournalCorruptError) as loaded:
        await store.load(run_id)
    with pytest.raises(JournalCorruptError):
        await store.open(run_id)
    assert path.read_bytes() == data
    return loaded.value


async def test_bit_flipped_record_is_named_by_line(tmp_path: Path) -> None:
    lines = _lines("flip")
    damaged = bytearray(lines[2])
    damaged[damaged.index(b"ORDERS")] ^= 0x02  # "ORDERS" -> "MRDERS": still valid JSON
    error = await _refused(tmp_path, "flip", b"".join([*lines[:2], bytes(damaged), *lines[3:]]))
    assert error.line == 3
    assert "checksum mismatch" in str(error)


def test_every_single_bit_flip_is_detected_except_in_the_final_newline() -> None:
    """A flipped final newline turns the last record into an unterminated tail, dropped like a torn write."""
    data = b"".join(_lines("flips", turns=1))
    for bit in range(len(data) * 8):
        damaged = bytearray(data)
        damaged[bit // 8] ^= 1 << (bit % 8)
        if bit // 8 == len(data) - 1:
            records, _, torn = parse_journal(bytes(damaged), "flips")
            assert (len(records), torn) == (3, True)
            continue
        with pytest.raises(JournalCorruptError):
            parse_journal(bytes(damaged), "flips")


async def test_truncated_journal_keeps_its_complete_prefix(tmp_path: Path) -> None:
    lines = _lines("cut")
    data = b"".join(lines)
    cut = len(lines[0]) + len(lines[1]) + 10
    (tmp_path / "cut.json").write_bytes(data[:cut])
    records = await FileJournalStore(tmp_path).load("cut")
    assert [r.seq for r in records] == [1, 2]
    assert fold(records).pending is not None


async def test_journal_missing_its_beginning_is_refused_at_line_one(tmp_path: Path) -> None:
    data = b"".join(_lines("headless"))
    error = await _refused(tmp_path, "headless", data[25:])
    assert error.line == 1


async def test_newer_schema_version_is_refused_naming_both_versions(tmp_path: Path) -> None:
    lines = _lines("future")
    newer_version = SCHEMA_VERSION + 1
    payload = sample_turn("future", seq=2, iteration=5)[2].payload
    newer = encode_record(Record(seq=4, payload=payload, version=newer_version))
    error = await _refused(tmp_path, "future", b"".join([*lines[:3], newer + b"\n", *lines[4:]]))
    assert isinstance(error, JournalVersionError)
    assert (error.found, error.supported, error.line) == (newer_version, SCHEMA_VERSION, 4)
    assert f"schema version {newer_version}" in str(error)
    assert f"versions up to {SCHEMA_VERSION}" in str(error)


async def test_newer_meta_payload_version_is_refused(tmp_path: Path) -> None:
    meta = b'{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":9,"run_id":"m","created":"x","fingerprint":{}}}\n'
    error = await _refused(tmp_path, "m", meta)
    assert isinstance(error, JournalVersionError)
    assert error.found == 9


async def test_duplicated_sequence_is_named_by_line(tmp_path: Path) -> None:
    lines = _lines("dup")
    error = await _refused(tmp_path, "dup", b"".join([*lines[:3], lines[2], *lines[3:]]))
    assert error.line == 4
    assert "seq 3 does not follow seq 3" in str(error)


async def test_oversize_line_is_refused_before_parsing(tmp_path: Path) -> None:
    lines = _lines("huge")
    oversize = b"x" * (MAX_RECORD_BYTES + 1) + b"\n"
    error = await _refused(tmp_path, "huge", b"".join([*lines[:2], oversize, *lines[2:]]))
    assert error.line == 3
    assert "record limit" in str(error)


async def test_unknown_field_and_second_payload_are_refused(tmp_path: Path) -> None:
    meta = _lines("strict")[0]
    extra = (
        b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"completed"},"user":{}}\n'
    )
    error = await _refused(tmp_path, "strict", meta + extra)
    assert error.line == 2
    assert "unexpected keys" in str(error)


async def test_journal_written_by_the_original_reads_and_folds(tmp_path: Path) -> None:
    original = (
        b'{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"orders-report",'
        b'"created":"2026-07-24T10:00:00.123456789+03:00","fingerprint":{"provider":"anthropic","model":"m"},'
        b'"prompt":"report on ORDERS"}}\n'
        b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":'
        b'{"role":"assistant","content":[{"tool_use":{"id":"toolu_1","name":"stream_info","input":{"stream":"ORDERS"}}}]},'
        b'"stop_reason":"tool_use","in_tokens":1200,"out_tokens":40}}\n'
        b'{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{"tool_use_id":"toolu_1",'
        b'"result":{"tool_use_id":"toolu_1","content":"{}"}}}\n'
        b'{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"suspended"}}\n'
    )
    (tmp_path / "orders-report.json").write_bytes(original)
    state = fold(await FileJournalStore(tmp_path).load("orders-report"))
    assert (state.version, state.status, state.next_iteration, state.counters.tool_calls) == (3, "suspended", 1, 1)
    assert len(state.messages) == 3


async def test_every_single_bit_flip_of_the_checksum_field_is_detected(tmp_path: Path) -> None:
    line = _lines("crc", turns=0)[0]
    store = FileJournalStore(tmp_path)
    start = len(line) - 1 - len(b',"crc32":"00000000"}')
    for bit in range(start * 8, (len(line) - 1) * 8):
        damaged = bytearray(line)
        damaged[bit // 8] ^= 1 << (bit % 8)
        (tmp_path / "crc.json").write_bytes(bytes(damaged))
        with pytest.raises(JournalCorruptError):
            await store.load("crc")


async def test_a_version_edited_without_its_checksum_is_damage_not_a_newer_record(tmp_path: Path) -> None:
    # One flipped bit turns "version":6 into "version":14; a checksum that no longer matches decides.
    lines = _lines("later")
    flipped = SCHEMA_VERSION ^ (1 << SCHEMA_VERSION.bit_length())  # one bit flipped, and a newer version
    written, newer = f'"version":{SCHEMA_VERSION}'.encode(), f'"version":{flipped}'.encode()
    assert written in lines[1]
    lines[1] = lines[1].replace(written, newer)
    error = await _refused(tmp_path, "later", b"".join(lines))
    assert not isinstance(error, JournalVersionError)
    assert (error.line, "checksum mismatch" in str(error)) == (2, True)
