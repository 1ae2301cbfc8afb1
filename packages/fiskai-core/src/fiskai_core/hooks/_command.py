"""`harness.hooks`: a hook that is a command, asked with the event as JSON on stdin.

The command runs from its argv (no shell) in its own process group, with the same scrubbed environment
a tool gets (no model or collector credentials), and must answer within its timeout; then its whole
group is killed. It answers on stdout with one JSON object:

    {"decision": "allow"}
    {"decision": "deny", "reason": "why"}
    {"decision": "rewrite", "tool": "other_tool", "arguments": {...}}     pre_tool_use
    {"decision": "rewrite", "output": "..."}                              post_tool_use
    {"decision": "rewrite", "prompt": "..."}                              user_prompt_submit

Empty output with exit status 0 allows. Anything else denies (fails closed): a non-zero exit, a
timeout, output that is not such an object. For `post_tool_use` a denial replaces the output with the
reason, so a policy that cannot decide never lets the output through unchecked.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import anyio
import anyio.abc

from fiskai_core.exec import tool_env
from fiskai_core.exec._process import format_seconds, kill_group, start_failure

from ._api import Allow, Deny, PromptSubmit, ReplaceOutput, RewritePrompt, RewriteTool, ToolOutput, ToolUse

__all__ = ["CommandHook"]

_MAX_ANSWER = 1024 * 1024

CommandPoint = Literal["pre_tool_use", "post_tool_use", "user_prompt_submit"]


class CommandHook:
    """One configured hook command for one point; call it with the point's event."""

    def __init__(
        self,
        point: CommandPoint,
        argv: Sequence[str],
        *,
        timeout: float,
        tools: Sequence[str] = (),
        cwd: str | None = None,
        strip_env: Sequence[str] = (),
        pass_env: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.point = point
        self.argv = tuple(argv)
        self.timeout = timeout
        self.tools = frozenset(tools)
        self.cwd = cwd
        self._env = tool_env(env, strip=strip_env, passthrough=pass_env)
        self.name = os.path.basename(self.argv[0])

    async def __call__(self, event: ToolUse | ToolOutput | PromptSubmit) -> Any:
        if isinstance(event, ToolUse | ToolOutput) and self.tools and event.tool not in self.tools:
            return Allow()
        payload = {"hook_event_name": self.point, **_event_json(event)}
        code, answer, why = await self._ask(json.dumps(payload, ensure_ascii=False).encode())
        if why:
            return self._refuse(why, event)
        text = answer.decode("utf-8", "replace").strip()
        if code != 0:
            detail = f": {text.splitlines()[0][:200]}" if text else ""
            return self._refuse(f"exited with status {code}{detail}", event)
        if not text:
            return Allow()
        try:
            decoded: object = json.loads(text)
        except ValueError:
            return self._refuse("answered with something that is not JSON", event)
        if not isinstance(decoded, dict):
            return self._refuse("answered with JSON that is not an object", event)
        return self._decision(dict(decoded), event)  # pyright: ignore[reportUnknownArgumentType]

    def _refuse(self, why: str, event: object) -> Deny | ReplaceOutput:
        reason = f'hook "{self.name}" {why}; the call is denied'
        if isinstance(event, ToolOutput):
            return ReplaceOutput(f"output withheld: {reason}", reason=reason)
        return Deny(reason)

    def _decision(self, answer: dict[str, Any], event: object) -> Any:
        decision = answer.get("decision")
        written = answer.get("reason")
        reason = written if isinstance(written, str) else ""
        if decision == "allow":
            return Allow()
        if decision == "deny":
            if isinstance(event, ToolOutput):
                return ReplaceOutput(f"output withheld by hook {self.name}: {reason or 'denied'}", reason=reason)
            return Deny(reason or f'denied by hook "{self.name}"')
        if decision == "rewrite":
            if isinstance(event, ToolUse):
                tool, arguments = answer.get("tool"), answer.get("arguments")
                if (tool is not None and not isinstance(tool, str)) or (
                    arguments is not None and not isinstance(arguments, dict)
                ):
                    return self._refuse("rewrote with a tool that is not a name or arguments not an object", event)
                return RewriteTool(tool=tool, arguments=arguments, reason=reason)  # pyright: ignore[reportUnknownArgumentType]
            if isinstance(event, ToolOutput) and isinstance(answer.get("output"), str):
                return ReplaceOutput(answer["output"], reason=reason)
            if isinstance(event, PromptSubmit) and isinstance(answer.get("prompt"), str):
                return RewritePrompt(answer["prompt"], reason=reason)
        return self._refuse(f"answered {json.dumps(answer)[:120]}, which is not a decision for {self.point}", event)

    async def _ask(self, payload: bytes) -> tuple[int, bytes, str]:
        """Run the command with `payload` on stdin: (exit status, stdout, why it failed or "")."""
        try:
            process = await anyio.open_process(
                list(self.argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=self.cwd,
                env=self._env,
                start_new_session=True,
            )
        except OSError as err:
            return -1, b"", f"could not start: {start_failure(self.argv[0], self.cwd, err)}"
        out = bytearray()
        try:
            with anyio.move_on_after(self.timeout) as waited:
                await _feed(process, payload)
                assert process.stdout is not None
                async for chunk in process.stdout:
                    out += chunk
                    if len(out) > _MAX_ANSWER:
                        break
                await process.wait()
        finally:
            if process.returncode is None:
                kill_group(process.pid)
                with anyio.CancelScope(shield=True):
                    await process.wait()
            await process.aclose()
        if waited.cancelled_caught:
            return -1, b"", f"did not answer within {format_seconds(self.timeout)} and was killed"
        if len(out) > _MAX_ANSWER:
            return -1, b"", "answered with more than 1 MiB"
        return process.returncode or 0, bytes(out), ""


async def _feed(process: anyio.abc.Process, payload: bytes) -> None:
    assert process.stdin is not None
    try:
        await process.stdin.send(payload)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # a hook that decides without reading its input is fine
    finally:
        await process.stdin.aclose()


def _event_json(event: ToolUse | ToolOutput | PromptSubmit) -> dict[str, Any]:
    return {key: value for key, value in dataclasses.asdict(event).items() if value not in ("", None)}
