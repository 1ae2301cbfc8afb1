# pyright: basic
# pyright: reportMissingImports=false, reportArgumentType=false
# ruff: noqa: UP031, PERF401, D403
"""click and typer (either side of its vendoring of click) as a framework-neutral tree; child side."""

from __future__ import annotations

import importlib
import sys

from fiskai_child_common import (
    _FORWARDERS,
    Refused,
    _Captured,
    _fiskai_tags,
    _jsonable,
    _long,
    _merge_switches,
    _text,
    _version,
)


def _click_modules():
    mods = []
    for name in ("click", "typer._click"):
        try:
            mods.append(importlib.import_module(name))
        except ImportError:
            continue
    return mods


def _is_click_command(obj):
    for ck in _click_modules():
        base = getattr(ck, "Command", None)
        if base is not None and isinstance(obj, base):
            return ck
    return None


def _click_type(ck, param, typer_style):
    if typer_style:
        return _typer_type(param)
    ptype = getattr(param, "type", None)
    names = [klass.__name__ for klass in type(ptype).__mro__]
    out = {"kind": "string"}
    if "Choice" in names:
        choices = []
        for choice in getattr(ptype, "choices", ()):
            # click takes an Enum member by name (`red`), not by value.
            choices.append(choice.name if hasattr(choice, "name") and hasattr(choice, "value") else str(choice))
        out = {"kind": "choice", "choices": choices}
    elif "IntRange" in names or "IntParamType" in names:
        out = {"kind": "integer"}
    elif "FloatRange" in names or "FloatParamType" in names:
        out = {"kind": "number"}
    elif "BoolParamType" in names:
        out = {"kind": "boolean"}
    elif "Path" in names or "File" in names:
        # A File always reads `-` as stdin; a Path only with allow_dash.
        out = {"kind": "path", "allow_dash": "File" in names or bool(getattr(ptype, "allow_dash", False))}
    elif "UnprocessedParamType" in names:
        out = {"kind": "unprocessed"}
    elif "Tuple" in names:
        out = {"kind": "tuple"}
    if "_NumberRangeBase" in names or "IntRange" in names or "FloatRange" in names:
        for key in ("min", "max"):
            value = getattr(ptype, key, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = value
        out["min_open"] = bool(getattr(ptype, "min_open", False))
        out["max_open"] = bool(getattr(ptype, "max_open", False))
    return out


def _typer_type(param):
    """typer >= 0.26 leaves `type` None: the annotation in `type_descriptor` says what the value is."""
    import enum
    import pathlib
    import typing

    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", str)
    for _ in range(3):  # Optional[List[T]] and the like
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if typing.get_origin(annotation) is None or not args:
            break
        annotation = args[0]
    out = {"kind": "string"}
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            out = {"kind": "boolean"}
        elif issubclass(annotation, enum.Enum):
            # typer takes the member *value* (`r`), the opposite of click.
            out = {"kind": "choice", "choices": [str(member.value) for member in annotation]}
        elif issubclass(annotation, int):
            out = {"kind": "integer"}
        elif issubclass(annotation, float):
            out = {"kind": "number"}
        elif issubclass(annotation, pathlib.PurePath):
            out = {
                "kind": "path",
                "allow_dash": bool(getattr(getattr(descriptor, "parameter_info", None), "allow_dash", False)),
            }
    if getattr(descriptor, "file_annotation", None) is not None:
        out = {"kind": "path", "allow_dash": True}
    for key in ("min", "max"):
        value = getattr(param, key, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
    return out


def _unset(value):
    return value is None or type(value).__name__ in ("Sentinel", "_Missing") or repr(value).startswith("Sentinel.")


def _click_param(ck, param, typer_style):
    # typer's vendored click has no Option class; the parameter names its own kind.
    is_option = getattr(param, "param_type_name", "") == "option"
    out = {
        "name": param.name or "",
        "kind": "option" if is_option else "argument",
        "opts": list(param.opts),
        "off_opts": list(getattr(param, "secondary_opts", []) or []),
        "nargs": param.nargs,
        "multiple": bool(param.multiple),
        "required": bool(param.required),
        "help": _text(getattr(param, "help", "")),
        "default": None if callable(param.default) or _unset(param.default) else _jsonable(param.default),
        "type": _click_type(ck, param, typer_style),
        "envvars": _envvars(param),
        "action": "value",
        "skip": "",
    }
    if param.is_eager:
        out["skip"] = "eager (help, version)"
    elif getattr(param, "deprecated", False):
        out["skip"] = "deprecated"
    elif getattr(param, "hidden", False):
        out["skip"] = "hidden"
    if not is_option:
        if out["type"]["kind"] == "unprocessed":
            out["passthrough"] = True
        return out
    out["prompt"] = getattr(param, "prompt", None) is not None
    needs_value = getattr(param, "_flag_needs_value", None)
    if needs_value is None:  # older click
        needs_value = not param.is_flag and (
            getattr(param, "prompt", None) is not None and not getattr(param, "prompt_required", True)
        )
    out["optional_value"] = bool(needs_value)
    if getattr(param, "count", False):
        out["action"] = "count"
        cap = out["type"].get("max")
        out["max"] = cap if isinstance(cap, int) else None
    elif param.is_flag:
        flag_value = getattr(param, "flag_value", None)
        if out["off_opts"]:
            out["action"] = "bool_pair"
        elif isinstance(flag_value, bool) or _unset(flag_value) or getattr(param, "is_bool_flag", False):
            out["action"] = "flag"
            out["on_value"] = True if _unset(flag_value) else bool(flag_value)
        else:
            out["action"] = "switch"
            out["switch"] = [{"opt": _long(param.opts), "value": _jsonable(flag_value)}]
            out["default_switch"] = param.default is True or (not _unset(param.default) and param.default == flag_value)
    if not param.expose_value:
        if param.is_flag and out["prompt"]:
            out["confirmation"] = True
        out["skip"] = out["skip"] or "not passed to the command"
    return out


def _envvars(param):
    names = getattr(param, "envvar", None)
    if isinstance(names, str):
        return [names]
    return [name for name in names or () if isinstance(name, str)]


def _click_node(ck, cmd, name, parent, typer_style, depth=0):
    settings = dict(getattr(cmd, "context_settings", None) or {})
    # A bare Context ignores the command's own settings (a subcommand's `-h` alias would be lost).
    ctx = cmd.context_class(cmd, info_name=name, parent=parent, **settings)
    params = _merge_switches([_click_param(ck, param, typer_style) for param in cmd.params])
    prefix = getattr(ctx, "auto_envvar_prefix", None)
    if prefix:
        # click reads PREFIX_NAME for every option that does not name its own variable.
        for param in params:
            if param["kind"] == "option" and not param["envvars"]:
                param["envvars"] = ["%s_%s" % (prefix, param["name"].upper())]
    callback = getattr(cmd, "callback", None)
    node = {
        "name": name,
        "help": _text(getattr(cmd, "short_help", None)) or _text(getattr(cmd, "help", None)).strip().split("\n\n")[0],
        "help_long": _text(getattr(cmd, "help", None)),
        "hidden": bool(getattr(cmd, "hidden", False)),
        "deprecated": bool(getattr(cmd, "deprecated", False)),
        "params": params,
        "commands": None,
        "passthrough": "",
        "confirm_opt": "",
        "tags": _fiskai_tags(cmd, callback),
    }
    for param in params:
        if param.get("confirmation"):
            node["confirm_opt"] = _long(param["opts"])
        if param.get("passthrough"):
            node["passthrough"] = "argument %r takes unprocessed arguments" % param["name"]
    if getattr(ctx, "ignore_unknown_options", False) or getattr(ctx, "allow_extra_args", False):
        node["passthrough"] = "it passes unknown options through (ignore_unknown_options)"
    code = getattr(getattr(callback, "__wrapped__", callback), "__code__", None)
    if code is not None and _FORWARDERS.intersection(code.co_names):
        node["passthrough"] = "it forwards its arguments to another program (%s)" % ", ".join(
            sorted(_FORWARDERS.intersection(code.co_names))
        )
    if hasattr(cmd, "list_commands") and depth < 20:
        node["commands"] = []
        for sub_name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, sub_name)
            if sub is None:
                continue
            node["commands"].append(_click_node(ck, sub, sub_name, ctx, typer_style, depth + 1))
    return node


def _from_click(obj, prog):
    ck = _is_click_command(obj)
    if ck is None:
        raise Refused("the object is not a click command")
    typer_style = ck.__name__ == "typer._click"
    if typer_style:
        framework = "typer"
        version = _version("typer")
    elif type(obj).__module__.startswith("typer"):
        framework, version = "typer", _version("typer")
    else:
        framework, version = "click", _version("click")
    root = _click_node(ck, obj, prog, None, typer_style)
    if framework == "typer":
        # typer's root `--install-completion` edits shell rc files; it is eager anyway, said twice on purpose.
        root["params"] = [p for p in root["params"] if p["name"] not in ("install_completion", "show_completion")]
    return framework, version, root


def _typer_command(obj):
    typer = importlib.import_module("typer")
    if isinstance(obj, typer.Typer):
        return typer.main.get_command(obj)
    if _is_click_command(obj) is not None:
        return obj
    if callable(obj):
        # An entry function that builds the app and calls it: stop at `Typer.__call__`.
        original = typer.Typer.__call__

        def trap(self, *args, **kwargs):
            raise _Captured(self)

        typer.Typer.__call__ = trap
        sys.argv = [sys.argv[0], "--help"]
        try:
            obj()
        except _Captured as captured:
            return typer.main.get_command(captured.obj)
        except SystemExit:
            pass
        finally:
            typer.Typer.__call__ = original
    raise Refused("the object is neither a typer app nor a function that calls one")
