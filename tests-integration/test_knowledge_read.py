"""knowledge_read (fiskai_core) over a real fiskai_rag store: the cited section, neighbours, the budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fiskai_core.builtins import KnowledgeAccess, KnowledgeReadTool, agent_tool_set
from fiskai_core.knowledge import KnowledgeReader
from fiskai_core.testing import call_tool
from fiskai_rag import Store, open_store

pytestmark = pytest.mark.anyio


@pytest.fixture
def reader(tmp_path: Path) -> Store:
    docs = tmp_path / "docs"
    docs.mkdir()
    sections = "".join(f"## Part {n}\n\nSection {n} text. {'word ' * 40}\n\n" for n in range(1, 7))
    (docs / "guide.md").write_text(f"# Guide\n\nIntro.\n\n{sections}", encoding="utf-8")
    with open_store(tmp_path / "store", read_only=False) as writer:
        writer.index([docs], reconcile=True)
    return open_store(tmp_path / "store", read_only=True)


async def test_the_cited_section_comes_with_its_neighbours(reader: Store) -> None:
    with reader:
        seam: KnowledgeReader = reader  # checked statically: the real store fits core's seam
        tool = KnowledgeReadTool(seam, max_injected_tokens=6000)
        result = await call_tool(tool, '{"index_ref": "docs/guide.md#3", "before": 1, "after": 2}')
        assert not result.is_error, result.text
        body = json.loads(result.text)
        assert (body["index_ref"], body["citation"], body["path"], body["truncated"]) == (
            "docs/guide.md#3",
            "docs/guide.md#3",
            "docs/guide.md",
            False,
        )
        assert [s["index_ref"] for s in body["sections"]] == [f"docs/guide.md#{n}" for n in (2, 3, 4, 5)]
        assert (
            body["sections"][1]["section"] == "Guide > Part 3" and "Section 3 text." in body["sections"][1]["content"]
        )
        # Asking past the end stops at the last section.
        end = json.loads((await call_tool(tool, '{"index_ref": "docs/guide.md#6", "after": 5}')).text)
        assert [s["index_ref"] for s in end["sections"]] == ["docs/guide.md#6"] and not end["truncated"]


async def test_the_budget_keeps_the_cited_section_and_drops_neighbours(reader: Store) -> None:
    with reader:
        # 100 tokens = 200 bytes after halving: the cited section (about 230 bytes) is cut, nothing else fits.
        tool = KnowledgeReadTool(reader, max_injected_tokens=100)
        body = json.loads((await call_tool(tool, '{"index_ref": "docs/guide.md#3", "before": 2, "after": 2}')).text)
        assert [s["index_ref"] for s in body["sections"]] == ["docs/guide.md#3"]
        assert body["truncated"] is True
        assert len(body["sections"][0]["content"].encode()) <= 200
        assert body["sections"][0]["content"].endswith("[cut to fit the knowledge_read budget]")


async def test_unknown_refs_and_bad_arguments_are_errors(reader: Store) -> None:
    with reader:
        tool = KnowledgeReadTool(reader, max_injected_tokens=6000)
        missing = await call_tool(tool, '{"index_ref": "docs/guide.md#99"}')
        assert missing.is_error and 'no section "docs/guide.md#99"' in missing.text
        for arguments in ('{"index_ref": "guide"}', '{"index_ref": "a#x"}', '{"index_ref": "a#1", "after": 21}'):
            assert (await call_tool(tool, arguments)).is_error, arguments


def test_it_is_offered_only_when_read_tool_is_set() -> None:
    names = [e.tool.name for e in agent_tool_set(knowledge=KnowledgeAccess(None)).entries]
    assert "knowledge_read" not in names
    names = [e.tool.name for e in agent_tool_set(knowledge=KnowledgeAccess(None, read_tool=True)).entries]
    assert names == ["knowledge_search", "knowledge_enumerate", "knowledge_read"]


def _long_section(tmp_path: Path) -> Store:
    docs = tmp_path / "longdocs"
    docs.mkdir()
    filler = "word " * 170  # about 850 bytes a paragraph: one chunk each
    body = f"Alpha paragraph {filler}\n\nBeta paragraph zebrafinch {filler}\n\nGamma paragraph {filler}\n\n"
    (docs / "guide.md").write_text(f"# Guide\n\n## Long part\n\n{body}## Other\n\nUnrelated text.\n", encoding="utf-8")
    with open_store(tmp_path / "longstore", read_only=False) as writer:
        writer.index([docs], reconcile=True)
    return open_store(tmp_path / "longstore", read_only=True)


async def test_expand_to_section_widens_a_hit_to_its_heading_section(tmp_path: Path) -> None:
    from fiskai_core.builtins import KnowledgeSearchTool

    with _long_section(tmp_path) as reader:
        plain = json.loads(
            (
                await call_tool(
                    KnowledgeSearchTool(reader, max_injected_tokens=6000, top_k=1, result_format="json"),
                    '{"query": "zebrafinch"}',
                )
            ).text
        )
        (hit,) = plain["results"]
        path, _, ordinal = hit["citation"].rpartition("#")
        assert "Alpha" not in hit["content"] and "zebrafinch" in hit["content"]

        wide_tool = KnowledgeSearchTool(
            reader, max_injected_tokens=6000, top_k=1, result_format="json", expand_to_section=True
        )
        (wide,) = json.loads((await call_tool(wide_tool, '{"query": "zebrafinch"}')).text)["results"]
        first, last = int(ordinal) - 1, int(ordinal) + 1
        assert wide["citation"] == f"{path}#{first}..#{last}"
        assert wide["content"].index("Alpha") < wide["content"].index("zebrafinch") < wide["content"].index("Gamma")
        assert "Unrelated" not in wide["content"]  # the next heading's section stays out

        # 500 tokens = 2000 bytes a result: the hit and one neighbour (the one after, on a tie).
        narrow_tool = KnowledgeSearchTool(
            reader, max_injected_tokens=500, top_k=1, result_format="json", expand_to_section=True
        )
        (narrow,) = json.loads((await call_tool(narrow_tool, '{"query": "zebrafinch"}')).text)["results"]
        assert narrow["citation"] == f"{path}#{ordinal}..#{last}"


def test_expand_to_section_needs_the_json_format() -> None:
    from fiskai_core.config import Mode, parse_config
    from fiskai_core.errors import ConfigError

    with pytest.raises(ConfigError, match="set result_format: json"):
        parse_config("harness: {knowledge: {expand_to_section: true}}", Mode.MCP)
    assert parse_config(
        "harness: {knowledge: {expand_to_section: true, result_format: json}}", Mode.MCP
    ).harness.knowledge.expand_to_section
