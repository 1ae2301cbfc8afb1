"""A Python CLI as a `fiskai_core.exec.ToolSource`: locate it, describe it, turn its leaves into tools.

Every runnable leaf command becomes one tool named by its path joined with `_` (a single-command app by
its own name), after an optional `prefix`. Tags come from three places and accumulate: the app's own
`__fiskai__ = {"tags": [...]}`, what fiskai adds itself (`ai:confirm` for a click confirmation option,
`ai:deny` for a command that passes arguments on unparsed, unless `allow_passthrough` names it), and
the operator's `rules` (full-match regexes on the spaced command path, so `delete` does not match
`undelete`). `ai:deny` then removes a tool before include/exclude, as for fisk.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue
from typing_extensions import override

from fiskai_core._gojson import go_quote
from fiskai_core.errors import ConfigError, IntrospectionError
from fiskai_core.tools import FilterRule, select_tools
from fiskai_core.tools._arguments import ToolArguments
from fiskai_core.tools._tags import MAX_TOOL_NAME_LENGTH, TAG_CONFIRM, TAG_DENY

from ._argv import build_argv, command_schema
from ._introspect import PyCliTarget, describe_target
from ._model import Framework, ParamModel, PyCliDocument, PyCommandModel

__all__ = ["PyCliSource", "PyCommandSpec", "TagRule", "load_python_cli", "script_interpreter"]

_COMMAND_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


@dataclass(frozen=True, slots=True, kw_only=True)
class TagRule:
    """Tags and denied parameters for the commands whose spaced path fully matches `commands`."""

    commands: str = ".*"
    tags: Sequence[str] = ()
    deny_params: Sequence[str] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PyCommandSpec:
    """One leaf command of a Python CLI, described for a model. Satisfies `fiskai_core.exec.SourceCommand`."""

    name: str
    path: tuple[str, ...]
    tags: tuple[str, ...]
    description: str
    model_description: str
    input_schema: dict[str, JsonValue]
    node: PyCommandModel
    params: tuple[ParamModel, ...]
    """The offered parameters, in declared order."""
    framework: Framework
    denied: Mapping[str, str] = field(default_factory=dict[str, str])
    """Parameters of the command that are not offered, with why (named when a model sends one)."""

    @property
    def command(self) -> str:
        """The command path as typed (the app's name for a single-command app)."""
        return " ".join(self.path) or self.node.name

    @property
    def strict_schema(self) -> bool:
        """Always: the schema states the kinds the app's own parser enforces."""
        return True

    def build_argv(self, arguments: ToolArguments) -> list[str]:
        """The argv of a call without the binary (see `fiskai_core.pycli._argv`).

        Raises:
            ArgumentsError: an unknown or denied key, or a value the app's parser would misread.
        """
        return build_argv(
            self.path, self.node, self.params, arguments.values, framework=self.framework, denied=self.denied
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PyCliSource:
    """A described Python CLI and its selected commands. Satisfies `fiskai_core.exec.ToolSource`."""

    path: str
    """The program every command runs (the console script)."""
    document: PyCliDocument
    commands: Sequence[PyCommandSpec]
    """Every runnable leaf, before `ai:deny` and include/exclude."""
    selected: Sequence[PyCommandSpec]
    label: str = ""
    warnings: Sequence[str] = ()
    strip_env: Sequence[str] = ()
    """Variables the app would read a parameter that is not offered from (click `envvar`): removed from the
    commands' environment, so a denied parameter cannot be set that way either."""

    @override
    def __repr__(self) -> str:
        return f"PyCliSource(path={self.path!r}, commands={len(self.commands)}, selected={len(self.selected)})"


def script_interpreter(script: str) -> str:
    """The interpreter a console script's shebang names (pip's and uv's wrappers, pipx venvs).

    Raises:
        IntrospectionError: the file has no usable Python shebang.
    """
    try:
        with open(script, "rb") as handle:
            head = handle.read(512).decode("utf-8", "replace").splitlines()
    except OSError as err:
        raise IntrospectionError(f"reading {go_quote(script)}: {err.strerror}") from err
    if not head or not head[0].startswith("#!"):
        raise IntrospectionError(
            f"{go_quote(script)} has no #! line naming its Python; set python: for this tool source"
        )
    words = head[0][2:].split()
    if words and words[0] == "/bin/sh" and len(head) > 1 and head[1].startswith("'''exec' "):
        words = head[1][len("'''exec' ") :].split()  # pip's wrapper for interpreter paths with spaces or long ones
    if words and os.path.basename(words[0]) == "env" and len(words) > 1:
        found = shutil.which(words[1])
        if found is None:
            raise IntrospectionError(f"{go_quote(script)} runs {go_quote(words[1])}, which is not on PATH")
        return found
    if not words or "python" not in os.path.basename(words[0]):
        raise IntrospectionError(
            f"{go_quote(script)} is not a Python console script (its #! line names no Python); set python: "
            "for this tool source"
        )
    return words[0]


def _locate(name: str, base_dir: Path | None, what: str) -> str:
    expanded = os.path.expanduser(name)
    if os.sep in expanded:
        path = Path(expanded)
        if not path.is_absolute():
            path = (base_dir / path if base_dir is not None else path).absolute()
        if not path.is_file():
            raise IntrospectionError(
                f"{what} {go_quote(name)}: no such file (relative paths start at the config's folder)"
            )
        return str(path)
    found = shutil.which(expanded)
    if found is None:
        raise IntrospectionError(f"{what} {go_quote(name)}: no such command on PATH; give its path instead")
    return found


def load_python_cli(
    framework: Framework,
    target: str,
    *,
    python: str = "",
    run: str = "",
    parser: str = "",
    base_dir: Path | None = None,
    prefix: str = "",
    rules: Sequence[TagRule] = (),
    deny_params: Sequence[str] = (),
    allow_passthrough: Sequence[str] = (),
    include: FilterRule | None = None,
    exclude: FilterRule | None = None,
    timeout: float = 20.0,
    use_cache: bool = True,
) -> PyCliSource:
    """Describe a click, typer or argparse application and select the commands a model may call.

    Args:
        framework: The framework the app is written with.
        target: A console-script name or path, or `module:attr` (a command object, a typer app, a parser,
            or an entry function).
        python: The app's interpreter; by default the console script's own (its `#!` line), or `python3`
            on PATH for `module:attr`.
        run: The program tools run; by default the console script. Required for `module:attr`.
        parser: argparse only: a parser factory (`module:attr`) read instead of trapping the entry point.
        base_dir: The config's folder, for relative paths.
        prefix: Put before every tool name (when two sources would share names).
        rules: Tag rules by command path.
        deny_params: Parameters never offered, by name, on every command.
        allow_passthrough: Commands (spaced path or tool name) that pass arguments on unparsed and may still
            be offered.
        include: Keep only matching tools (fisk's rule: unanchored regexes on tool names, exact tags).
        exclude: Then drop matching tools.
        timeout: Seconds the introspection child may take.
        use_cache: Reuse a fresh cached description.

    Raises:
        IntrospectionError: the app or its interpreter cannot be found, run or described.
        ConfigError: a rule's pattern is not a regular expression.
        ToolSelectionError: an include or exclude pattern is invalid.
    """
    module_target = ":" in target
    entry = target
    if module_target:
        if not run:
            raise IntrospectionError(
                f"{framework}: {target}: a module:attr source needs run: naming the program its commands run"
            )
        interpreter = python or shutil.which("python3") or ""
    else:
        script = _locate(target, base_dir, f"{framework}:")
        entry = os.path.basename(script)
        run = run or script
        interpreter = python or script_interpreter(script)
    interpreter = _locate(interpreter, base_dir, "python:") if interpreter else ""
    if not interpreter:
        raise IntrospectionError(f"{framework}: {target}: no python3 on PATH; set python: for this tool source")
    binary = _locate(run, base_dir, "run:")
    document = describe_target(
        PyCliTarget(framework=framework, target=entry, python=interpreter, parser=parser),
        timeout=timeout,
        use_cache=use_cache,
    )
    warnings: list[str] = []
    commands = _specs(document, prefix, rules, tuple(deny_params), tuple(allow_passthrough), warnings)
    offered = {(id(spec.node), name) for spec in commands for name in (p.name for p in spec.params)}
    strip_env = sorted(
        {
            env
            for _, node in _leaves(document.root, (), [])
            for param in node.params
            if (id(node), param.name) not in offered
            for env in param.envvars
        }
    )
    return PyCliSource(
        path=binary,
        document=document,
        commands=commands,
        selected=select_tools(commands, include=include, exclude=exclude),
        label=f"{framework}: {target}",
        warnings=tuple(warnings),
        strip_env=tuple(strip_env),
    )


def _leaves(
    node: PyCommandModel, prefix: tuple[str, ...], warnings: list[str]
) -> Iterator[tuple[tuple[str, ...], PyCommandModel]]:
    if node.commands is None:
        yield prefix, node
        return
    if _takes_own_arguments(node):
        warnings.append(
            f"the commands under {go_quote(' '.join(prefix) or node.name)} were skipped: the group takes arguments of its own, "
            "which fiskai does not pass"
        )
        return
    for sub in node.commands:
        if sub.hidden or sub.deprecated:
            continue
        if _COMMAND_WORD.fullmatch(sub.name) is None:
            warnings.append(
                f"command {go_quote(' '.join((*prefix, sub.name)))} was skipped: its name is not a plain word"
            )
            continue
        yield from _leaves(sub, (*prefix, sub.name), warnings)


def _takes_own_arguments(group: PyCommandModel) -> bool:
    """A group with a positional or a required option cannot be passed through by its name alone."""
    return any(not p.skip and (p.kind == "argument" or p.required or p.prompt) for p in group.params)


def _compiled(rules: Sequence[TagRule]) -> list[tuple[re.Pattern[str], TagRule]]:
    out: list[tuple[re.Pattern[str], TagRule]] = []
    for rule in rules:
        try:
            out.append((re.compile(rule.commands), rule))
        except re.error as err:
            raise ConfigError(
                f"tool_sources rule commands {go_quote(rule.commands)} is not a regular expression: {err}"
            ) from err
    return out


def _specs(
    document: PyCliDocument,
    prefix: str,
    rules: Sequence[TagRule],
    deny_params: tuple[str, ...],
    allow_passthrough: tuple[str, ...],
    warnings: list[str],
) -> list[PyCommandSpec]:
    compiled = _compiled(rules)
    specs: list[PyCommandSpec] = []
    seen: set[str] = set()
    root = document.root
    for path, node in _leaves(root, (), warnings):
        spaced = " ".join(path)
        name = prefix + ("_".join(path) if path else node.name)
        shown = go_quote(spaced or node.name)
        if name in seen or len(name) > MAX_TOOL_NAME_LENGTH or _COMMAND_WORD.fullmatch(name.lstrip("_")) is None:
            warnings.append(
                f"command {shown} was skipped: its tool name {go_quote(name)} is taken, too long or not a word"
            )
            continue
        seen.add(name)
        tags = list(node.tags)
        denied_names = set(deny_params)
        for pattern, rule in compiled:
            if pattern.fullmatch(spaced):
                tags.extend(tag for tag in rule.tags if tag not in tags)
                denied_names.update(rule.deny_params)
        if node.confirm_opt and TAG_CONFIRM not in tags:
            tags.append(TAG_CONFIRM)
        if node.passthrough and spaced not in allow_passthrough and name not in allow_passthrough:
            if TAG_DENY not in tags:
                tags.append(TAG_DENY)
            warnings.append(f"command {shown} is denied: {node.passthrough}; allow_passthrough names it to offer it")
        offered: list[ParamModel] = []
        denied: dict[str, str] = {}
        unusable = ""
        for param in node.params:
            if param.name in denied_names:
                denied[param.name] = "denied by the operator (deny_params)"
            elif param.skip:
                denied[param.name] = param.skip
            elif param.passthrough and spaced not in allow_passthrough and name not in allow_passthrough:
                denied[param.name] = "it passes arguments on unparsed"
            else:
                offered.append(param)
                continue
            if param.required and not param.confirmation and not param.passthrough:
                unusable = f"its required parameter {go_quote(param.name)} is not offered ({denied[param.name]})"
        if unusable:
            warnings.append(f"command {shown} was skipped: {unusable}")
            continue
        description = node.help or node.help_long
        text = _model_help(node.help, node.help_long)
        tag_line = "Tags: " + ", ".join(tags) if tags else ""
        specs.append(
            PyCommandSpec(
                name=name,
                path=path,
                tags=tuple(tags),
                description=description,
                model_description=f"{text}\n\n{tag_line}" if text and tag_line else text or tag_line,
                input_schema=command_schema(offered),
                node=node,
                params=tuple(offered),
                framework=document.framework,
                denied=denied,
            )
        )
    return specs


def _model_help(short: str, long: str) -> str:
    short, long = short.strip(), long.strip()
    if not short or short in long:
        return long
    if not long or long in short:
        return short
    return f"{short}\n\n{long}"
