"""A provider-level fake: scripted responses, recorded requests, no HTTP.

For loop tests that do not need the SDK (the Anthropic adapter is tested through `MessagesServer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fiskai_agent.errors import ProviderError
from fiskai_agent.llm import (
    Capabilities,
    ContentBlock,
    Message,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)

__all__ = ["ScriptedProvider", "answer", "calls", "reply"]

Script = Response | ProviderError | Callable[[Request], Response]


def reply(
    *blocks: ContentBlock | str,
    stop_reason: str | None = None,
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read_tokens: int = 0,
    cache_create_tokens: int = 0,
) -> Response:
    """An assistant response; strings become text blocks.

    The stop reason defaults to `tool_use` when a block is a tool call, else `end_turn`.
    """
    content = tuple(TextBlock(text=b) if isinstance(b, str) else b for b in blocks)
    if stop_reason is None:
        stop_reason = "tool_use" if any(isinstance(b, ToolUseBlock) for b in content) else "end_turn"
    return Response(
        message=Message(role="assistant", content=content),
        stop_reason=stop_reason,
        usage=Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_create_tokens=cache_create_tokens,
        ),
    )


def answer(text: str, *, thinking: str | None = None, input_tokens: int = 10, output_tokens: int = 5) -> Response:
    """A final answer (optionally after a thinking block)."""
    blocks: list[ContentBlock | str] = [ThinkingBlock(text=thinking, signature="sig")] if thinking else []
    return reply(*blocks, text, input_tokens=input_tokens, output_tokens=output_tokens)


def calls(
    *uses: tuple[str, dict[str, Any]], text: str = "", input_tokens: int = 10, output_tokens: int = 5
) -> Response:
    """A turn calling tools: `calls(("stream_info", {"stream": "ORDERS"}))`; ids are `toolu_<name>_<n>`."""
    blocks: list[ContentBlock | str] = [text] if text else []
    for n, (name, arguments) in enumerate(uses):
        blocks.append(ToolUseBlock(id=f"toolu_{name}_{n}", name=name, input=arguments))
    return reply(*blocks, input_tokens=input_tokens, output_tokens=output_tokens)


@dataclass
class ScriptedProvider:
    """Answers each call with the next scripted item; records every request.

    An item is a `Response`, a `ProviderError` (raised), or a function of the request. Running out of
    script fails the call with a `ProviderError` naming the call number, so a test never hangs.
    """

    __test__ = False

    script: list[Script] = field(default_factory=list[Script])
    capabilities: Capabilities = field(
        default_factory=lambda: Capabilities(provider="anthropic", tool_search=True, prompt_cache=True, thinking=True)
    )
    requests: list[Request] = field(default_factory=list[Request])
    closed: bool = False

    @classmethod
    def of(cls, *script: Script, capabilities: Capabilities | None = None) -> ScriptedProvider:
        """A provider answering `script` in order."""
        provider = cls(script=list(script))
        if capabilities is not None:
            provider.capabilities = capabilities
        return provider

    async def call(self, request: Request) -> Response:
        """The next scripted answer."""
        self.requests.append(request)
        if not self.script:
            raise ProviderError(f"ScriptedProvider: no scripted response for call {len(self.requests)}")
        item = self.script.pop(0)
        if isinstance(item, ProviderError):
            raise item
        if isinstance(item, Response):
            return item
        return item(request)

    async def aclose(self) -> None:
        """Record the close."""
        self.closed = True

    def extend(self, script: Sequence[Script]) -> None:
        """Queue more answers."""
        self.script.extend(script)
