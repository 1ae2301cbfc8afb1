"""The 64 KiB head/tail output cap, alone and on the output of real child processes."""

from __future__ import annotations

import stat
import sys
import tracemalloc
from pathlib import Path

import anyio
import pytest

from fiskai_core.exec import MAX_TOOL_OUTPUT_BYTES, tool_env
from fiskai_core.exec._output import TRUNCATION_MARKER, HeadTailCapture
from fiskai_core.exec.running import run_argv, run_to_sink

pytestmark = pytest.mark.anyio

HALF = MAX_TOOL_OUTPUT_BYTES // 2


def _python_script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport sys\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _expected(stream: bytes) -> bytes:
    """The cap written out plainly, as the reference states it."""
    if len(stream) <= MAX_TOOL_OUTPUT_BYTES:
        return stream
    return stream[:HALF] + TRUNCATION_MARKER + stream[-HALF:]


def test_cap_is_64_kib_and_marker_is_fisk_ai_text() -> None:
    assert MAX_TOOL_OUTPUT_BYTES == 65536
    assert TRUNCATION_MARKER == b"\n...[output truncated]...\n"


def test_nothing_written_is_empty_and_not_truncated() -> None:
    result = HeadTailCapture().result()
    assert (result.data, result.truncated, result.total) == (b"", False, 0)


def test_exactly_the_limit_is_kept_whole() -> None:
    stream = bytes(range(256)) * (MAX_TOOL_OUTPUT_BYTES // 256)
    capture = HeadTailCapture()
    capture.write(stream)
    result = capture.result()
    assert result.data == stream
    assert not result.truncated
    assert result.total == MAX_TOOL_OUTPUT_BYTES


def test_one_byte_over_drops_exactly_the_middle_byte() -> None:
    stream = b"H" * HALF + b"m" + b"T" * (HALF - 1) + b"E"
    capture = HeadTailCapture()
    capture.write(stream)
    result = capture.result()
    assert result.truncated
    assert result.data == b"H" * HALF + TRUNCATION_MARKER + b"T" * (HALF - 1) + b"E"
    assert len(result.data) == MAX_TOOL_OUTPUT_BYTES + len(TRUNCATION_MARKER)
    assert result.total == MAX_TOOL_OUTPUT_BYTES + 1


def test_many_small_writes_match_the_cap_of_the_whole_stream() -> None:
    lines = [b"line %06d\n" % number for number in range(20_000)]
    capture = HeadTailCapture()
    for line in lines:
        capture.write(line)
    stream = b"".join(lines)
    result = capture.result()
    assert result.data == _expected(stream)
    assert result.data.endswith(b"line 019999\n")
    assert result.total == len(stream)


def test_chunks_larger_than_the_ring_keep_the_latest_bytes() -> None:
    chunks = [bytes([65 + index]) * (HALF + 5_000) for index in range(4)]
    capture = HeadTailCapture()
    for chunk in chunks:
        capture.write(chunk)
    assert capture.result().data == _expected(b"".join(chunks))


def test_a_utf8_sequence_split_by_the_cap_decodes_with_replacement() -> None:
    # The euro sign's three bytes straddle the end of the kept head.
    stream = b"a" * (HALF - 1) + "\u20ac".encode() + b"z" * MAX_TOOL_OUTPUT_BYTES
    capture = HeadTailCapture()
    capture.write(stream)
    text = capture.result().text()
    assert text.startswith("a" * (HALF - 1) + "\ufffd")
    assert text.endswith("z" * HALF)


@pytest.mark.parametrize("limit", [0, -2, 7])
def test_a_limit_that_cannot_split_evenly_is_refused(limit: int) -> None:
    with pytest.raises(ValueError, match="positive even"):
        HeadTailCapture(limit)


async def test_child_writing_exactly_the_limit_is_not_truncated(tmp_path: Path) -> None:
    script = _python_script(tmp_path, "exact", f"sys.stdout.buffer.write(b'x' * {MAX_TOOL_OUTPUT_BYTES})")
    with anyio.fail_after(10):
        outcome = await run_argv([script], env=tool_env())
    assert outcome.output == "x" * MAX_TOOL_OUTPUT_BYTES
    assert not outcome.truncated
    assert outcome.exit_code == 0


async def test_child_writing_one_byte_over_is_truncated_with_head_and_tail(tmp_path: Path) -> None:
    body = f"sys.stdout.buffer.write(b'H' * {HALF} + b'm' + b'T' * {HALF - 1} + b'E')"
    script = _python_script(tmp_path, "over", body)
    with anyio.fail_after(10):
        outcome = await run_argv([script], env=tool_env())
    assert outcome.truncated
    assert outcome.output == "H" * HALF + "\n...[output truncated]...\n" + "T" * (HALF - 1) + "E"


async def test_child_writing_many_small_interleaved_lines_keeps_the_right_tail(tmp_path: Path) -> None:
    body = (
        "for n in range(20000):\n"
        "    stream = sys.stdout if n % 2 else sys.stderr\n"
        "    stream.write('line %06d\\n' % n)\n"
        "    stream.flush()"
    )
    script = _python_script(tmp_path, "lines", body)
    with anyio.fail_after(20):
        outcome = await run_argv([script], env=tool_env())
    stream = "".join(f"line {n:06d}\n" for n in range(20_000)).encode()
    assert outcome.truncated
    assert outcome.output.encode() == _expected(stream)


async def test_a_200_mb_flood_is_streamed_through_bounded_memory(tmp_path: Path) -> None:
    flood = 200 * 1024 * 1024
    body = f"chunk = b'y' * 1048576\nfor _ in range({flood // 1048576}):\n    sys.stdout.buffer.write(chunk)"
    script = _python_script(tmp_path, "flood", body)
    capture = HeadTailCapture()
    tracemalloc.start()
    try:
        with anyio.fail_after(60):
            exit_code = await run_to_sink([script], env=tool_env(), sink=capture)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    result = capture.result()
    assert exit_code == 0
    assert result.total == flood
    assert result.truncated
    assert result.data == b"y" * HALF + TRUNCATION_MARKER + b"y" * HALF
    # Far below the flood: only the kept head, the ring and a few read buffers are ever alive.
    assert peak < 8 * 1024 * 1024
