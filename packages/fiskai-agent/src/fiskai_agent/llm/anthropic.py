"""The Anthropic provider: the only module that imports the anthropic SDK.

Nothing imports this module statically; the registry loads it when a run starts (`create_provider`).
Neutral requests become Messages API parameters (GA, no beta header):

* system blocks as separate text blocks; with prompt caching, `cache_control` on the last one and the
  request-level `cache_control` (the conversation-tail breakpoint), TTL 1 h for interactive runs;
* tools as `{"type": "custom", ..., "defer_loading": <bool>}` with optional properties annotated, plus
  `{"type": "tool_search_tool_bm25", "name": "tool_search_tool_bm25"}` when some tool is deferred;
* thinking as `{"type": "adaptive", "display": "summarized"}`;
* blocks the neutral model does not know (server tool calls, search results, redacted thinking) are
  sent back exactly as they came.

Capabilities are decided per run (`fiskai_agent.llm._capabilities`): a Claude model (`claude-*`) keeps
tool search, caching and thinking whatever the base URL (proxies and test servers serve them); any other
model behind a non-Anthropic base URL runs without them, since local Anthropic-compatible servers reject
those fields. A request may narrow them further (`Request.capabilities`, after a server refused one).
"""

from __future__ import annotations

import contextvars
import json
import os
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final, cast

import anthropic
import anyio
import httpx2
from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient

from fiskai_agent.errors import ProviderError, ProviderFailure, SetupError
from fiskai_core.tools import DecodedValue, loads_exact, plain_json

from ._attempts import attempt_events
from ._base_url import loopback_authority, validate_base_url
from ._blocks import neutral_block
from ._capabilities import Capabilities, anthropic_capabilities
from ._provider import HttpExchange, HttpObserver, ProviderSettings
from ._stream import collect_stream
from ._types import (
    ContentBlock,
    JsonObject,
    Message,
    ProviderBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

__all__ = ["AnthropicProvider", "capabilities_for", "create_provider", "request_params"]

PROVIDER_ID = "anthropic"
_SEARCH_TOOL: JsonObject = {"type": "tool_search_tool_bm25", "name": "tool_search_tool_bm25"}
_LOCAL_KEY = "fiskai-local"
_BASE_URL_ENV = "ANTHROPIC_BASE_URL"
# The SDK refuses a non-streaming call whose max_tokens could outlast 10 minutes; stream above it.
_NON_STREAMING_MAX_TOKENS = 21_333
_iteration: contextvars.ContextVar[int] = contextvars.ContextVar("fiskai_iteration", default=0)


def capabilities_for(model: str, base_url: str | None) -> Capabilities:
    """The automatic capabilities for `model` at `base_url` (see `fiskai_agent.llm._capabilities`)."""
    return anthropic_capabilities(PROVIDER_ID, model, base_url)


def _annotated_schema(schema: Mapping[str, Any]) -> JsonObject:
    """A copy of `schema` with each optional property's description marked, so a model sees what it may omit."""
    out = dict(schema)
    props = schema.get("properties")
    if not isinstance(props, dict):
        return out
    required = schema.get("required")
    required_names = set(cast("list[str]", required)) if isinstance(required, list) else set[str]()
    annotated: JsonObject = {}
    for name, raw in cast("dict[str, Any]", props).items():
        if name in required_names or not isinstance(raw, dict):
            annotated[name] = raw
            continue
        prop = dict(cast("dict[str, Any]", raw))
        description = prop.get("description")
        prop["description"] = (
            f"{description} (optional)" if isinstance(description, str) and description else "Optional."
        )
        annotated[name] = prop
    out["properties"] = annotated
    return out


def _block_param(block: ContentBlock) -> JsonObject:
    match block:
        case TextBlock():
            return {"type": "text", "text": block.text}
        case ThinkingBlock():
            return {"type": "thinking", "thinking": block.text, "signature": block.signature}
        case ToolUseBlock():
            return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
        case ToolResultBlock():
            out: JsonObject = {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": block.content}
            if block.is_error:
                out["is_error"] = True
            return out
        case ProviderBlock():
            return dict(block.raw)


SchemaCache = dict[int, tuple[Mapping[str, Any], JsonObject]]
"""Annotated input schemas by the identity of the schema they came from (kept alive beside them)."""


def _cached_annotated_schema(schema: Mapping[str, Any], cache: SchemaCache | None) -> JsonObject:
    if cache is None:
        return _annotated_schema(schema)
    hit = cache.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    annotated = _annotated_schema(schema)
    cache[id(schema)] = (schema, annotated)
    return annotated


def request_params(request: Request, capabilities: Capabilities, schema_cache: SchemaCache | None = None) -> JsonObject:
    """The Messages API parameters for `request` (also what tests compare against).

    A run sends the same tool schemas on every call; with `schema_cache` each is annotated once per
    provider instead of once per call (250 tools: about 0.6 ms a call saved, bench/agent.py).
    """
    cache = capabilities.prompt_cache and request.prompt_cache
    cache_control: JsonObject = {"type": "ephemeral"}
    if request.cache_ttl == "1h":
        cache_control = {"type": "ephemeral", "ttl": "1h"}
    system: list[JsonObject] = [{"type": "text", "text": text} for text in request.system]
    if cache and system:
        system[-1] = {**system[-1], "cache_control": cache_control}
    tool_search = capabilities.tool_search and request.tool_search
    tools: list[JsonObject] = []
    for tool in request.tools:
        param: JsonObject = {"type": "custom", "name": tool.name, "description": tool.description}
        # Always present where tool search exists (as the original sends it); left out where it does not,
        # since local Anthropic-compatible servers reject the unknown field even when false.
        if capabilities.tool_search:
            param["defer_loading"] = tool.defer_loading and tool_search
        param["input_schema"] = _cached_annotated_schema(tool.input_schema, schema_cache)
        tools.append(param)
    if tool_search:
        tools.append(dict(_SEARCH_TOOL))
    params: JsonObject = {
        "model": request.model,
        "max_tokens": request.max_output_tokens,
        "messages": [
            {"role": message.role, "content": [_block_param(block) for block in message.content]}
            for message in request.messages
        ],
    }
    if system:
        params["system"] = system
    if tools:
        params["tools"] = tools
    if capabilities.thinking and request.thinking:
        params["thinking"] = {"type": "adaptive", "display": "summarized"}
    if capabilities.thinking and request.effort:
        # Effort is a Claude-server feature like thinking: a server without thinking gets neither.
        params["output_config"] = {"effort": request.effort}
    if cache:
        params["cache_control"] = cache_control
    return params


def _content_block(decoded: DecodedValue) -> ContentBlock:
    """A block of a response decoded with its numbers kept: a tool_use's input stays exact."""
    raw = cast("JsonObject", plain_json(decoded)) if isinstance(decoded, dict) else {}
    exact = decoded.get("input") if isinstance(decoded, dict) and decoded.get("type") == "tool_use" else None
    return neutral_block(raw, exact)


def _usage(raw: object) -> Usage:
    fields = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}

    def count(name: str) -> int:
        value = fields.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return Usage(
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        cache_read_tokens=count("cache_read_input_tokens"),
        cache_create_tokens=count("cache_creation_input_tokens"),
    )


def _response(body: bytes) -> Response:
    """A Messages API response body, decoded once: the model's tool arguments keep their numbers' text.

    Raises:
        ProviderError: The body is not a Messages API message.
    """
    try:
        document = loads_exact(body)
    except ValueError as err:
        raise ProviderError(f"the model API answered with something unusable: {err}") from None
    if not isinstance(document, dict) or not isinstance(document.get("content"), list):
        raise ProviderError("the model API answered with something unusable: not a message")
    content = cast("list[DecodedValue]", document["content"])
    head = cast("dict[str, Any]", plain_json({k: v for k, v in document.items() if k != "content"}))
    return Response(
        message=Message(role="assistant", content=tuple(_content_block(block) for block in content)),
        stop_reason=str(head.get("stop_reason") or ""),
        usage=_usage(head.get("usage")),
        model=str(head.get("model") or ""),
        id=str(head.get("id") or ""),
    )


class _Observe:
    """SDK middleware reporting every HTTP attempt to an `HttpObserver`, bodies untouched."""

    def __init__(self, observer: HttpObserver) -> None:
        self._observer = observer

    async def __call__(self, request: Any, call_next: Any) -> Any:
        started = time.monotonic()
        body = request.json
        request_body = json.dumps(body).encode() if body is not None else b""
        base = HttpExchange(
            iteration=_iteration.get(),
            attempt=int(request.retries_taken),
            method=str(request.method).upper(),
            url=str(request.url),
            request_body=request_body,
        )
        try:
            response = await call_next(request)
        except anthropic.APIError as err:
            elapsed = (time.monotonic() - started) * 1000
            self._observer.exchange(replace(base, duration_ms=elapsed, error=str(err)))
            raise
        http = response.http_response
        payload: bytes | None = None
        if not request.stream:
            payload = await http.aread()
        elapsed = (time.monotonic() - started) * 1000
        self._observer.exchange(replace(base, status=http.status_code, response_body=payload, duration_ms=elapsed))
        return response


def _direct_to_loopback(base_url: str | None) -> DefaultAsyncHttpxClient | None:
    """The SDK's default HTTP client, told to reach a loopback `base_url` directly; None for any other URL.

    httpx honours HTTP_PROXY, HTTPS_PROXY and ALL_PROXY for every host NO_PROXY does not name, loopback
    included, so a local model's plain-http traffic, API key and all, would cross the proxy. Go's net/http
    never proxies loopback; neither does this. A mount without a transport is a direct connection; every
    other host (a redirect) keeps the environment's proxies.
    """
    authority = loopback_authority(base_url) if base_url else None
    if authority is None:
        return None
    return DefaultAsyncHttpxClient(mounts={f"all://{authority}": None})


class AnthropicProvider:
    """The Messages API over the anthropic SDK (JSON, or SSE streaming for large output caps)."""

    def __init__(self, settings: ProviderSettings, *, stream: bool = False) -> None:
        """Build the client (no network until the first call).

        Raises:
            SetupError: No credentials and no local base URL.
        """
        self._schema_cache: SchemaCache = {}
        if settings.base_url is None and os.environ.get(_BASE_URL_ENV):
            # Read here, not left to the SDK (which would read it unchecked), so an environment base URL is
            # validated like a flag and decides the capabilities and the credential check like one.
            settings = replace(settings, base_url=validate_base_url(os.environ[_BASE_URL_ENV]))
        api_key = settings.api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        auth_token = None if api_key else os.environ.get("ANTHROPIC_AUTH_TOKEN") or None
        if api_key is None and auth_token is None:
            if not settings.base_url:
                raise SetupError(
                    "no Anthropic credentials: set ANTHROPIC_API_KEY (or pass --api-key); to use a local "
                    "Anthropic-compatible server instead, set llm.base_url in agent.yaml or ANTHROPIC_BASE_URL "
                    "(e.g. http://127.0.0.1:11434 for Ollama)"
                )
            # Local servers ignore the key, but the SDK insists on some credential.
            api_key = _LOCAL_KEY
        self._settings = settings
        self._stream = stream
        self._capabilities = capabilities_for(settings.model, settings.base_url).restricted(settings.overrides)
        middleware: list[Any] = [attempt_events]
        if settings.observer is not None:
            middleware.append(_Observe(settings.observer))
        self._client = AsyncAnthropic(
            api_key=api_key,
            auth_token=auth_token,
            base_url=settings.base_url,
            max_retries=settings.max_retries,
            timeout=settings.call_timeout,
            middleware=middleware,
            http_client=_direct_to_loopback(settings.base_url),
        )

    @property
    def capabilities(self) -> Capabilities:
        """What this run may use."""
        return self._capabilities

    async def call(self, request: Request) -> Response:
        """One Messages call, retries included, bounded by `call_timeout`."""
        params = request_params(request, _narrowed(self._capabilities, request.capabilities), self._schema_cache)
        token = _iteration.set(request.iteration)
        timeout = self._settings.call_timeout
        try:
            with anyio.fail_after(timeout):
                response = await self._create(
                    params, stream=self._stream or request.max_output_tokens > _NON_STREAMING_MAX_TOKENS
                )
        except TimeoutError:
            raise ProviderError(
                f"the model call did not finish within {timeout:g}s (llm.budget.call_timeout); the server may be "
                "overloaded or hung"
            ) from None
        except anthropic.APIStatusError as err:
            raise self._status_error(err, request) from None
        except anthropic.APIConnectionError as err:
            where = self._settings.base_url or "the Anthropic API"
            raise ProviderError(f"cannot reach {where}: {err}", retryable=True, failure="busy") from None
        except anthropic.APIError as err:
            # A response the SDK could not use (for example a server that is not a Messages API).
            raise ProviderError(f"the model API answered with something unusable: {err}") from None
        finally:
            _iteration.reset(token)
        return response

    async def _create(self, params: JsonObject, *, stream: bool) -> Response:
        messages: Any = self._client.messages
        if stream:
            events = await messages.create(**params, stream=True)
            try:
                async with events:
                    return await collect_stream(events)
            except httpx2.HTTPError as err:
                # The SDK maps transport errors only while it sends the request, not while a stream is read:
                # a server that dies mid-answer surfaces here as httpx2's own error (the SDK's HTTP client).
                where = self._settings.base_url or "the Anthropic API"
                raise ProviderError(
                    f"the model server at {where} broke off the streamed answer: {err}", retryable=True
                ) from None
        raw = await messages.with_raw_response.create(**params)
        return _response(await raw.read())

    def _status_error(self, err: anthropic.APIStatusError, request: Request) -> ProviderError:
        status = err.status_code
        detail = _error_detail(err)
        message = f"HTTP {status} from the model API: {detail}"
        if status == 401:
            message += "; check ANTHROPIC_API_KEY (or --api-key)"
        elif status == 400 and request.thinking and _narrowed(self._capabilities, request.capabilities).thinking:
            message += f'; model "{request.model}" may not support thinking, set llm.thinking.enabled to false'
        if status == 400 and request.effort and _narrowed(self._capabilities, request.capabilities).thinking:
            message += (
                f'; llm.reasoning_effort "{request.effort}" may not be a level model "{request.model}" accepts '
                "(low, medium, high, xhigh, max)"
            )
        return ProviderError(
            message,
            status=status,
            retryable=status in (408, 409, 429) or status >= 500,
            detail=detail,
            failure=_failure(err, detail),
        )

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()


def _narrowed(own: Capabilities, run: Capabilities | None) -> Capabilities:
    """`own` with every capability `run` turned off turned off too."""
    if run is None:
        return own
    return replace(
        own,
        tool_search=own.tool_search and run.tool_search,
        prompt_cache=own.prompt_cache and run.prompt_cache,
        thinking=own.thinking and run.thinking,
    )


_BUSY: Final = (anthropic.RateLimitError, anthropic.OverloadedError, anthropic.ServiceUnavailableError)
_REFUSED: Final = (anthropic.AuthenticationError, anthropic.PermissionDeniedError, anthropic.NotFoundError)
_TOO_LONG: Final = ("prompt is too long", "context window", "context length", "too many tokens")


def _failure(err: anthropic.APIStatusError, detail: str) -> ProviderFailure:
    """The SDK's exception type, as the kind of failure a served caller is told (reference 3.8).

    Rate limits and overload (429, 529, 503) are `busy` (resend later); bad credentials, a forbidden or
    unknown model (401, 403, 404) are `refused`; a request over the model's context (413, or a 400 whose
    message says the prompt is too long) is `context_exceeded`; anything else (500, other 400s) is `other`.
    """
    if isinstance(err, _BUSY):
        return "busy"
    if isinstance(err, _REFUSED):
        return "refused"
    too_long = isinstance(err, anthropic.BadRequestError) and any(words in detail.lower() for words in _TOO_LONG)
    if too_long or isinstance(err, anthropic.RequestTooLargeError):
        return "context_exceeded"
    return "other"


def _error_detail(err: anthropic.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = cast("dict[str, Any]", body).get("error")
        if isinstance(inner, dict):
            text = cast("dict[str, Any]", inner).get("message")
            if isinstance(text, str) and text:
                return text
    return err.message


def create_provider(settings: ProviderSettings) -> AnthropicProvider:
    """The registry's factory."""
    return AnthropicProvider(settings, stream=settings.stream)
