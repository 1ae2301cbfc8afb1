"""The stats line printed after a run (reference 6.7), and the JSON summary `--format json` prints."""

from __future__ import annotations

from typing import Any

from fiskai_agent import RunResult, RunStats

__all__ = ["go_duration", "result_json", "stats_line"]


def stats_line(stats: RunStats, *, verbose: bool = False) -> str:
    """`Run summary: [session=<id> ][model=<m> ]llm_calls=<n> tool_calls=<n>... latency=<d>`.

    `tokens=` is uncached input / output; `cached=` appears when any input was read from the cache and
    `cache_write=` only with `-v`.
    """
    head = "Run suspended" if stats.suspended else "Run summary"
    parts: list[str] = []
    if stats.session_id:
        parts.append(f"session={stats.session_id}")
    if stats.model:
        parts.append(f"model={stats.model}")
    parts += [f"llm_calls={stats.llm_calls}", f"tool_calls={stats.tool_calls}"]
    if stats.remote_tool_calls:
        parts.append(f"remote_tool_calls={stats.remote_tool_calls}")
    parts.append(f"tokens={stats.input_tokens}/{stats.output_tokens}")
    if stats.cache_read_tokens:
        parts.append(f"cached={stats.cache_read_tokens}")
    if verbose and stats.cache_create_tokens:
        parts.append(f"cache_write={stats.cache_create_tokens}")
    parts.append(f"latency={go_duration(stats.elapsed)}")
    return f"{head}: {' '.join(parts)}"


def go_duration(seconds: float) -> str:
    """A duration rounded to the millisecond, written as Go prints one (`850ms`, `2.5s`, `1m3.207s`)."""
    ms = round(seconds * 1000)
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    minutes, ms_left = divmod(ms, 60_000)
    secs = f"{ms_left / 1000:.3f}".rstrip("0").rstrip(".")
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def result_json(result: RunResult) -> dict[str, Any]:
    """`--format json`: the outcome, the answer, the session and the counters, for scripts."""
    stats = result.stats
    return {
        "reason": result.reason,
        "ok": result.ok,
        "answer": result.answer,
        "error": result.error or None,
        "session_id": result.session_id,
        "stats": {
            "model": stats.model,
            "llm_calls": stats.llm_calls,
            "tool_calls": stats.tool_calls,
            "remote_tool_calls": stats.remote_tool_calls,
            "tool_calls_by_kind": dict(stats.by_kind),
            "input_tokens": stats.input_tokens,
            "output_tokens": stats.output_tokens,
            "cache_read_tokens": stats.cache_read_tokens,
            "cache_create_tokens": stats.cache_create_tokens,
            "elapsed_seconds": round(stats.elapsed, 3),
        },
    }
