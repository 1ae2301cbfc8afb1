"""`harness.hooks` as the run's `Hooks`: each configured command bound to its point.

A relative program path is relative to agent.yaml's folder, as `application_path` is; a bare name is
looked up on PATH. The commands get the environment a tool gets (`harness.environment` applies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from fiskai_core.hooks import CommandHook, Hooks

if TYPE_CHECKING:
    from fiskai_cli._settings import Settings
    from fiskai_core.config import HookCommand

__all__ = ["command_hooks"]


def command_hooks(settings: Settings) -> Hooks:
    """The hooks agent.yaml configures (none: an empty `Hooks`, which costs nothing per call)."""
    config = settings.config
    hooks = config.harness.hooks
    folder = settings.folder

    def bind(
        point: Literal["pre_tool_use", "post_tool_use", "user_prompt_submit"], entries: list[HookCommand]
    ) -> tuple[CommandHook, ...]:
        made: list[CommandHook] = []
        for entry in entries:
            program = entry.command[0]
            if "/" in program and not program.startswith("/"):
                program = str(folder / program)
            made.append(
                CommandHook(
                    point,
                    [program, *entry.command[1:]],
                    timeout=entry.timeout.total_seconds(),
                    tools=entry.tools,
                    cwd=str(folder),
                    strip_env=config.credential_env_names(),
                    pass_env=config.passed_env_names(),
                )
            )
        return tuple(made)

    return Hooks(
        pre_tool_use=bind("pre_tool_use", hooks.pre_tool_use),
        post_tool_use=bind("post_tool_use", hooks.post_tool_use),
        user_prompt_submit=bind("user_prompt_submit", hooks.user_prompt_submit),
    )
