"""read_file and base64_encode (reference 7.4): every way out of the root is tried and refused."""

from __future__ import annotations

import base64
import json
import os
import posixpath
import socket
from pathlib import Path

import pytest

from fiskai_core.builtins import Base64EncodeTool, ReadFileTool, harness_tools
from fiskai_core.config import Mode, parse_config
from fiskai_core.errors import ConfigError
from fiskai_core.testing import call_tool
from fiskai_core.tools import TAG_CONFIRM, TAG_IDEMPOTENT, ToolResult

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """`root/` with docs and links of every kind, and a secret beside it (outside the root)."""
    root = tmp_path / "root"
    (root / "docs" / "sub").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\nhello\n")
    (root / "docs" / "sub" / "deep.txt").write_text("deep")
    (root / "blob.bin").write_bytes(b"\x00\xff\xfe binary")
    (tmp_path / "secret.txt").write_text("TOPSECRET")
    os.symlink("docs/guide.md", root / "rel-inside")
    os.symlink("../secret.txt", root / "rel-outside")
    os.symlink(str(root / "docs" / "guide.md"), root / "abs-inside")
    os.symlink(str(tmp_path / "secret.txt"), root / "abs-outside")
    os.symlink("docs", root / "docs-link")
    os.symlink("..", root / "docs" / "up")  # a link to the root itself: relative and inside
    os.symlink("../..", root / "docs" / "upup")  # a link past the root
    os.symlink("loop-b", root / "loop-a")
    os.symlink("loop-a", root / "loop-b")
    return root


async def _read(root: Path, path: str, max_bytes: int = 1 << 20) -> ToolResult:
    return await call_tool(ReadFileTool(root, max_bytes=max_bytes), json.dumps({"path": path}))


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("docs/guide.md", "# Guide\nhello\n"),
        ("/docs/guide.md", "# Guide\nhello\n"),  # a leading slash is ignored
        ("docs/sub/../guide.md", "# Guide\nhello\n"),  # `..` that stays inside is fine
        ("./docs//sub/deep.txt", "deep"),
        ("rel-inside", "# Guide\nhello\n"),
        ("docs-link/sub/deep.txt", "deep"),
        ("docs/up/docs/guide.md", "# Guide\nhello\n"),
    ],
)
async def test_files_inside_the_root_are_read(tree: Path, path: str, content: str) -> None:
    result = await _read(tree, path)
    assert not result.is_error, result.text
    body = json.loads(result.text)
    assert body["found"] is True and body["encoding"] == "utf-8"
    assert (body["content"], body["size"]) == (content, len(content.encode()))


async def test_the_answer_has_the_reference_keys(tree: Path) -> None:
    body = json.loads((await _read(tree, "/docs/guide.md")).text)
    assert list(body) == ["path", "found", "size", "encoding", "content"]
    assert body["path"] == "docs/guide.md"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../secret.txt", "leads outside the readable folder"),
        ("docs/../../secret.txt", "leads outside the readable folder"),
        ("/../secret.txt", "leads outside the readable folder"),
        ("rel-outside", "leads outside the readable folder"),
        ("docs/upup/secret.txt", "leads outside the readable folder"),
        ("abs-outside", "symbolic link to an absolute path"),
        ("abs-inside", "symbolic link to an absolute path"),  # absolute targets are never followed
        ("loop-a", "more than 40 symbolic links"),
        ("docs", "is a directory"),
        ("docs/", "is a directory"),
    ],
)
async def test_escapes_and_non_files_are_refused(tree: Path, path: str, why: str) -> None:
    result = await _read(tree, path)
    assert result.is_error
    assert result.text.startswith("read_file: ") and why in result.text
    assert "TOPSECRET" not in result.text


async def test_a_fifo_is_refused_without_blocking(tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    result = await _read(tree, "pipe")  # opening it for reading would wait for a writer forever
    assert result.is_error and "is a FIFO" in result.text


async def test_a_socket_and_a_device_link_are_refused(tree: Path, tmp_path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tree / "sock"))
        assert "is a socket" in (await _read(tree, "sock")).text
    finally:
        sock.close()
    os.symlink("/dev/zero", tree / "zero")
    assert "absolute path" in (await _read(tree, "zero")).text


async def test_a_device_inside_the_root_is_refused() -> None:
    # /dev as the root: /dev/null is a character device, which must never be opened.
    result = await _read(Path("/dev"), "null")
    assert result.is_error and "is a device" in result.text


async def test_a_file_over_the_cap_is_refused_whole(tree: Path) -> None:
    (tree / "big.txt").write_text("x" * 101)
    refused = await _read(tree, "big.txt", max_bytes=100)
    assert refused.is_error
    assert "101 bytes, over the 100-byte limit" in refused.text
    exact = await _read(tree, "big.txt", max_bytes=101)
    assert json.loads(exact.text)["size"] == 101


async def test_binary_comes_back_as_base64(tree: Path) -> None:
    body = json.loads((await _read(tree, "blob.bin")).text)
    assert body["encoding"] == "base64"
    assert base64.b64decode(body["content"]) == b"\x00\xff\xfe binary"


async def test_a_missing_file_is_found_false_not_an_error(tree: Path) -> None:
    for path in ("nothing.md", "docs/guide.md/below", "nope/deeper/file"):
        result = await _read(tree, path)
        assert not result.is_error
        assert json.loads(result.text) == {"path": posixpath.normpath(path), "found": False}


async def test_bad_arguments_are_refused_before_reading(tree: Path) -> None:
    for arguments in ('{"path": ""}', '{"path": "/"}', '{"path": 3}', "{}"):
        result = await call_tool(ReadFileTool(tree, max_bytes=10), arguments)
        assert result.is_error and "read_file" in result.text


async def test_base64_encode_is_standard_base64_of_utf8() -> None:
    tool = Base64EncodeTool()
    assert json.loads((await call_tool(tool, '{"text": "hé?>"}')).text) == {
        "encoded": base64.b64encode("hé?>".encode()).decode()
    }
    assert json.loads((await call_tool(tool, '{"text": ""}')).text) == {"encoded": ""}
    assert (await call_tool(tool, '{"text": 5}')).is_error


def test_harness_tools_follow_the_configuration(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    config = parse_config(
        "harness:\n  tools:\n    - {name: base64_encode}\n    - {name: read_file, confirm: true, options: {root: docs, "
        "max_bytes: 10}}\n",
        Mode.MCP,
    )
    encode, read = harness_tools(config.harness.tools, folder=tmp_path)
    assert isinstance(read, ReadFileTool) and read.root == (tmp_path / "docs").resolve()
    assert list(read.tags) == [TAG_IDEMPOTENT, TAG_CONFIRM]  # confirm gates it like ai:confirm
    assert list(encode.tags) == [TAG_IDEMPOTENT]
    assert "10 bytes" in read.description


def test_a_missing_root_fails_at_start(tmp_path: Path) -> None:
    config = parse_config("harness: {tools: [{name: read_file, options: {root: absent}}]}", Mode.MCP)
    with pytest.raises(ConfigError, match="read_file root .*absent.* is not an existing folder"):
        harness_tools(config.harness.tools, folder=tmp_path)


def test_the_default_root_is_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = parse_config("harness: {tools: [{name: read_file}]}", Mode.MCP)
    (read,) = harness_tools(config.harness.tools, folder=None)
    assert isinstance(read, ReadFileTool) and read.root == tmp_path.resolve()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{name: read_fil}]", 'unknown built-in "read_fil"; the harness offers read_file, base64_encode'),
        ("[{name: base64_encode, options: {x: 1}}]", 'unknown option "x" for base64_encode, which takes no options'),
        ("[{name: read_file, options: {rot: a}}]", 'unknown option "rot" for read_file, which takes only root'),
        ("[{name: read_file, options: {max_bytes: 0}}]", "max_bytes must be a positive whole number"),
        ("[{name: read_file, options: {root: 3}}]", "root must be a string"),
        ("[{name: read_file}, {name: read_file}]", "harness.tools[1]: read_file is listed twice"),
    ],
)
def test_bad_entries_fail_at_load(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match="harness.tools") as caught:
        parse_config(f"harness: {{tools: {text}}}", Mode.MCP)
    assert message in str(caught.value)
