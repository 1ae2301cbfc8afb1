"""`knowledge_read` (`harness.knowledge.read_tool`): a cited section with its neighbours (reference 7.3).

The model hands back an `index_ref` (`relpath#ordinal`, as knowledge_search and knowledge_enumerate give
it) and how many sections `before` and `after` it wants (0..20 each). The answer holds at most
`max_injected_tokens / 2` tokens (3000 by default), counted as 4 bytes a token like every knowledge
budget here: the cited section always (cut to the budget if it alone is larger), then neighbours
nearest first while they fit. `truncated` says something asked for was left out.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio.to_thread
from pydantic import JsonValue
from typing_extensions import override

from fiskai_core._gojson import JsonNumber
from fiskai_core.errors import ArgumentsError
from fiskai_core.knowledge import KnowledgeReader, KnowledgeSection
from fiskai_core.tools import TAG_IDEMPOTENT, CallContext, ToolArguments, ToolResult

from ._base import BuiltinTool, json_result, quoted_trace
from ._citations import CitationRewriter

__all__ = ["KNOWLEDGE_READ", "MAX_NEIGHBOURS", "KnowledgeReadTool", "cut_to_bytes"]

KNOWLEDGE_READ = "knowledge_read"
MAX_NEIGHBOURS = 20
_CUT = "\n[cut to fit the knowledge_read budget]"

_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "index_ref": {
            "type": "string",
            "description": "The section to read, as index_ref from knowledge_search or knowledge_enumerate "
            "(docs/guide.md#4).",
        },
        "before": {"type": "integer", "description": "Sections before it to include too (0-20, default 0)."},
        "after": {"type": "integer", "description": "Sections after it to include too (0-20, default 0)."},
    },
    "required": ["index_ref"],
}


def cut_to_bytes(text: str, limit: int, marker: str = _CUT) -> str:
    """`text` within `limit` UTF-8 bytes (the marker included), cut at a character boundary."""
    data = text.encode()
    if len(data) <= limit:
        return text
    keep = max(0, limit - len(marker.encode()))
    return data[:keep].decode(errors="ignore") + marker


class KnowledgeReadTool(BuiltinTool):
    """`knowledge_read` over an injected index (None: no index yet)."""

    _name = KNOWLEDGE_READ
    _description = (
        "Read a section of the operator's knowledge base by its index_ref (from knowledge_search or "
        "knowledge_enumerate), optionally with sections before and after it, to see the full context of an excerpt."
    )
    _schema = _SCHEMA
    _tags = (TAG_IDEMPOTENT,)

    def __init__(self, index: object | None, *, max_injected_tokens: int, citations: CitationRewriter | None = None):
        """Bind the tool to an index that can resolve citations; the budget is half `max_injected_tokens`."""
        self._index = index if isinstance(index, KnowledgeReader) else None
        self._budget_bytes = max(1, max_injected_tokens // 2) * 4
        self._cite = citations or CitationRewriter()

    @override
    def check(self, arguments: ToolArguments) -> None:
        """An `index_ref` `path#ordinal`; whole `before` and `after` of 0..20."""
        _ref(arguments)
        _count(arguments, "before")
        _count(arguments, "after")

    @override
    def display(self, arguments: ToolArguments) -> str:
        """`knowledge_read("<index_ref>")`."""
        ref = arguments.values.get("index_ref")
        return quoted_trace(self._name, ref if isinstance(ref, str) else "")

    @override
    async def answer(self, arguments: ToolArguments, context: CallContext) -> ToolResult:
        """The cited section and the neighbours that fit."""
        path, ordinal = _ref(arguments)
        before, after = _count(arguments, "before"), _count(arguments, "after")
        index = self._index
        if index is None:
            return json_result({"status": "index_not_built", "note": "the knowledge index has not been built yet"})
        try:
            sections, truncated = await anyio.to_thread.run_sync(
                lambda: self._gather(index, path, ordinal, before, after)
            )
        except LookupError:
            return ToolResult(
                output=f'knowledge_read: no section "{path}#{ordinal}" in the index; use an index_ref that '
                "knowledge_search or knowledge_enumerate returned",
                is_error=True,
            )
        # An injected seam (a damaged index) fails as the model's error result, not the run's end.
        except Exception as err:  # noqa: BLE001
            return ToolResult(output=f"knowledge_read: {err}", is_error=True)
        body: dict[str, Any] = dict(self._cite.cite(path, ordinal, sections[ordinal].heading_path))
        body["sections"] = [self._section(section) for _, section in sorted(sections.items())]
        body["truncated"] = truncated
        return json_result(body)

    def _gather(
        self, index: KnowledgeReader, path: str, ordinal: int, before: int, after: int
    ) -> tuple[dict[int, _Read], bool]:
        try:
            cited = index.show(f"{path}#{ordinal}")
        except Exception as err:  # the seam's own not-found error: core knows no implementation's types
            raise LookupError(str(err)) from err
        content = cut_to_bytes(cited.content, self._budget_bytes)
        used = len(content.encode())
        sections = {ordinal: _Read(cited, content)}
        truncated = content != cited.content
        wanted = [ordinal + step for step in range(1, after + 1)] + [ordinal - step for step in range(1, before + 1)]
        wanted.sort(key=lambda n: (abs(n - ordinal), n < ordinal))  # nearest first, the one after on a tie
        closed: set[bool] = set()
        for number in wanted:
            side = number > ordinal
            if side in closed or number < 0:
                continue
            try:
                section = index.show(f"{path}#{number}")
            except Exception:  # noqa: BLE001 - past the document's end
                closed.add(side)
                continue
            size = len(section.content.encode())
            if used + size > self._budget_bytes:
                closed.add(side)
                truncated = True
                continue
            used += size
            sections[number] = _Read(section, section.content)
        return sections, truncated

    def _section(self, read: _Read) -> dict[str, object]:
        section = read.section
        return {
            "index_ref": f"{section.path}#{section.ordinal}",
            "citation": self._cite.citation(section.path, section.ordinal, section.heading_path),
            "section": section.heading_path,
            "content": read.content,
        }


class _Read:
    __slots__ = ("content", "section")

    def __init__(self, section: KnowledgeSection, content: str) -> None:
        self.section = section
        self.content = content

    @property
    def heading_path(self) -> str:
        return self.section.heading_path


def _ref(arguments: ToolArguments) -> tuple[str, int]:
    ref = arguments.values.get("index_ref")
    path, _, number = ref.rpartition("#") if isinstance(ref, str) else ("", "", "")
    if not path or not number.isdigit():
        raise ArgumentsError('invalid knowledge_read input: give {"index_ref": "<path>#<section number>"}')
    return path, int(number)


def _count(arguments: ToolArguments, key: str) -> int:
    value = arguments.values.get(key)
    if value is None:
        return 0
    number = None
    if isinstance(value, JsonNumber):
        with contextlib.suppress(ValueError):
            parsed = float(value.text)
            number = int(parsed) if parsed.is_integer() else None
    if number is None or not 0 <= number <= MAX_NEIGHBOURS:
        raise ArgumentsError(f"invalid knowledge_read input: {key} must be a whole number from 0 to {MAX_NEIGHBOURS}")
    return number
