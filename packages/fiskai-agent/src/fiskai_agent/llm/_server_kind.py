"""Which Anthropic-compatible server a base URL reaches, recognised by what it answers, not by its port.

A 400 alone cannot decide capabilities: llama.cpp's `llama-server` and Ollama convert every tool to a
function and drop `type`, `defer_loading` and `cache_control` without complaint, so a server-side
tool-search tool becomes a function named `tool_search_tool_bm25` and every deferred tool reaches the
model. Each server has a cheap metadata endpoint that identifies it:

* llama.cpp: `GET /props` answers JSON with `build_info` (and every response says `Server: llama.cpp`);
* Ollama: `GET /api/version` answers `{"version": ...}`;
* vLLM: `GET /v1/models` lists models `owned_by: "vllm"`. vLLM refuses what it does not serve (a tool
  without `input_schema` is a 400), so the run's fallback on a refusal covers it.

Standard library only (urllib), so `fiskai info` can say the same as a run without the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from fiskai_agent.errors import SetupError

from ._base_url import loopback_authority
from ._capabilities import Capabilities

if TYPE_CHECKING:
    import urllib.request

__all__ = ["ServerKind", "anthropic_url", "capabilities_for_server", "recognise_server"]

_DROPS = "ignores defer_loading and tool-search tools (every deferred tool would reach the model)"


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerKind:
    """What a base URL turned out to be."""

    name: str
    """`llama.cpp`, `Ollama`, `vLLM`, or empty when not recognised."""
    evidence: str
    """What identified it, or why nothing did (`GET /props answered with build_info b8123-0c1e570`)."""
    drops_tool_search: bool = False
    """The server silently drops server-side tool search rather than refusing it."""

    def describe(self) -> str:
        """`llama.cpp (GET /props answered ...): ignores defer_loading ...` for `info` and warnings."""
        if not self.name:
            return f"not recognised ({self.evidence})"
        text = f"{self.name} ({self.evidence})"
        if self.drops_tool_search:
            text += f": {_DROPS}"
        elif self.name == "vLLM":
            text += ": refuses tools without input_schema, so a run falls back from tool search on its 400"
        return text


def _get(base: str, path: str, timeout: float, opener: urllib.request.OpenerDirector) -> tuple[int, Any, str]:
    """(status, decoded JSON or None, Server header) of GET base+path; status 0 when nothing answered."""
    import urllib.error
    import urllib.request

    try:
        with opener.open(urllib.request.Request(base + path, method="GET"), timeout=timeout) as response:
            status, server, raw = response.status, response.headers.get("Server", "").strip(), response.read(1 << 20)
    except urllib.error.HTTPError as err:
        return err.code, None, (err.headers.get("Server", "") if err.headers else "").strip()
    except (OSError, ValueError):
        return 0, None, ""
    try:
        return status, json.loads(raw), server
    except ValueError:
        return status, None, server


def _object(value: Any) -> dict[str, Any]:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _llama_cpp(base: str, get: Callable[[str], tuple[int, Any, str]]) -> ServerKind | None:
    status, body, server = get("/props")
    props = _object(body)
    if status == 200 and ("build_info" in props or "default_generation_settings" in props):
        build = props.get("build_info")
        evidence = f"GET /props answered with build_info {build}" if build else "GET /props answered"
        return ServerKind(name="llama.cpp", evidence=evidence, drops_tool_search=True)
    if server.lower().startswith("llama.cpp"):
        return ServerKind(name="llama.cpp", evidence=f"it answers with Server: {server}", drops_tool_search=True)
    return None


def _ollama(base: str, get: Callable[[str], tuple[int, Any, str]]) -> ServerKind | None:
    status, body, _ = get("/api/version")
    version = _object(body).get("version")
    if status == 200 and isinstance(version, str):
        return ServerKind(name="Ollama", evidence=f"GET /api/version answered {version}", drops_tool_search=True)
    return None


def _vllm(base: str, get: Callable[[str], tuple[int, Any, str]]) -> ServerKind | None:
    status, body, _ = get("/v1/models")
    data = _object(body).get("data")
    models = [_object(m) for m in cast("list[Any]", data)] if isinstance(data, list) else []
    if status == 200 and any(m.get("owned_by") == "vllm" for m in models):
        return ServerKind(name="vLLM", evidence='GET /v1/models lists models owned_by "vllm"')
    return None


def recognise_server(base_url: str, *, timeout: float = 2.0) -> ServerKind:
    """Ask `base_url` what it is (a few GETs of metadata endpoints; no model call, no credentials sent)."""
    # Imported here: urllib.request pulls in http.client and email, unused on an Anthropic URL.
    import urllib.request

    base = base_url.rstrip("/")
    # Loopback is reached directly, as the provider reaches it (a proxy would see a local model's traffic).
    handlers = [urllib.request.ProxyHandler({})] if loopback_authority(base_url) else []
    opener = urllib.request.build_opener(*handlers)
    answered = False

    def get(path: str) -> tuple[int, Any, str]:
        nonlocal answered
        result = _get(base, path, timeout, opener)
        answered = answered or result[0] != 0
        return result

    for probe in (_llama_cpp, _ollama, _vllm):
        kind = probe(base, get)
        if kind is not None:
            return kind
        if not answered:
            break  # nothing listens (or it hangs): the other probes would only wait as long again
    if not answered:
        return ServerKind(name="", evidence=f"no answer from {base} within {timeout:g}s")
    return ServerKind(name="", evidence="neither GET /props, /api/version nor /v1/models identified it")


def anthropic_url(base_url: str) -> bool:
    """Whether `base_url` is Anthropic's own API (nothing to recognise there)."""
    host = (urlsplit(base_url).hostname or "").lower()
    return host == "anthropic.com" or host.endswith(".anthropic.com")


def capabilities_for_server(caps: Capabilities, kind: ServerKind, base_url: str) -> Capabilities:
    """`caps` without server-side tool search when `kind` drops it silently (the reason says why).

    Raises:
        SetupError: `llm.capabilities.tool_search` forces it on for such a server.
    """
    if not caps.tool_search or not kind.drops_tool_search:
        return caps
    where = f"the model server at {base_url} is {kind.describe()}"
    if "tool_search" in caps.forced:
        raise SetupError(
            f"llm.capabilities.tool_search is on, but {where}; set llm.capabilities.tool_search to auto or off "
            "(fiskai then defers large tool sets behind its own find_tools tool)"
        )
    why = f"{where}, so server-side tool search is off for this run"
    return replace(caps, tool_search=False, reason=why, basis=f"{kind.name} recognised ({kind.evidence})")
