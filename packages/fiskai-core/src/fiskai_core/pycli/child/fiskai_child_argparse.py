# pyright: basic
# pyright: reportMissingImports=false, reportArgumentType=false
# ruff: noqa: UP031
"""argparse parsers (given, built by a factory, or trapped at parse time) as a tree; child side."""

from __future__ import annotations

import importlib
import sys

from fiskai_child_common import Refused, _Captured, _fiskai_tags, _jsonable, _load, _long, _merge_switches, _text


def _argparse_action(argparse, action, fromfile):
    cls = type(action)
    base = {
        "name": action.dest,
        "kind": "option" if action.option_strings else "argument",
        "opts": list(action.option_strings),
        "off_opts": [],
        "nargs": 1,
        "multiple": False,
        "required": bool(action.required),
        "help": _text(action.help),
        "default": _jsonable(action.default) if not callable(action.default) else None,
        "type": {"kind": "string"},
        "action": "value",
        "skip": "",
    }
    if action.help == argparse.SUPPRESS:
        base["skip"] = "hidden"
    if getattr(action, "deprecated", False):
        base["skip"] = "deprecated"
    if action.default == argparse.SUPPRESS:
        base["default"] = None
    simple = {
        "_StoreAction": "value",
        "_AppendAction": "append",
        "_ExtendAction": "append",
        "_StoreTrueAction": "flag",
        "_StoreFalseAction": "flag",
        "_StoreConstAction": "const",
        "_CountAction": "count",
        "BooleanOptionalAction": "bool_pair",
        "_HelpAction": "help",
        "_VersionAction": "help",
    }
    kind = simple.get(cls.__name__) if cls.__module__ == "argparse" else None
    if kind is None:
        base["skip"] = base["skip"] or "custom action %s (its code runs on parse)" % cls.__name__
        return base
    if kind == "help":
        base["skip"] = "eager (help, version)"
        return base
    nargs = action.nargs
    if nargs == argparse.REMAINDER:
        base["passthrough"] = True
        return base
    if nargs is None:
        nargs = 1
    base["nargs"] = nargs
    if kind == "flag":
        base["action"] = "flag"
        base["on_value"] = bool(action.const)
    elif kind == "const":
        base["action"] = "switch"
        base["switch"] = [{"opt": _long(action.option_strings), "value": _jsonable(action.const)}]
    elif kind == "count":
        base["action"] = "count"
        base["max"] = None
    elif kind == "bool_pair":
        base["action"] = "bool_pair"
        base["opts"] = [opt for opt in action.option_strings if not opt.startswith("--no-")]
        base["off_opts"] = [opt for opt in action.option_strings if opt.startswith("--no-")]
    else:
        base["multiple"] = kind == "append"
        base["type"] = _argparse_type(argparse, action)
    if not action.option_strings and nargs in ("?", "*"):
        base["required"] = False  # argparse reports `*` positionals as required
    return base


def _argparse_type(argparse, action):
    vtype = action.type
    out = {"kind": "string"}
    if vtype is int:
        out = {"kind": "integer"}
    elif vtype is float:
        out = {"kind": "number"}
    elif isinstance(vtype, argparse.FileType):
        out = {"kind": "path", "allow_dash": True}
    choices = action.choices
    if isinstance(choices, range) and choices.step == 1:
        out = {"kind": "integer", "min": choices.start, "max": choices.stop - 1}
    elif choices is not None:
        try:
            listed = [_jsonable(choice) for choice in choices]
        except TypeError:
            listed = []
        if listed and all(isinstance(choice, (str, int)) and not isinstance(choice, bool) for choice in listed):
            out = {"kind": "choice", "choices": [str(choice) for choice in listed]}
    return out


def _argparse_node(argparse, parser, name, help_text, depth=0, inherited=""):
    # The root parser expands @file in every token before a subparser sees it, so the characters carry down.
    fromfile = "".join(sorted(set(inherited + (parser.fromfile_prefix_chars or ""))))
    node = {
        "name": name,
        "help": help_text or _text(parser.description).strip().split("\n\n")[0],
        "help_long": _text(parser.description),
        "hidden": False,
        "deprecated": False,
        "params": [],
        "commands": None,
        "passthrough": "",
        "confirm_opt": "",
        "tags": _fiskai_tags(parser),
        "prefix_chars": parser.prefix_chars,
        "fromfile_prefix_chars": fromfile,
        "allow_abbrev": bool(getattr(parser, "allow_abbrev", True)),
        "exclusive": [
            [action.dest for action in group._group_actions]
            for group in getattr(parser, "_mutually_exclusive_groups", [])
        ],
    }
    subparsers = None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            subparsers = action
            continue
        param = _argparse_action(argparse, action, fromfile)
        if param.get("passthrough"):
            node["passthrough"] = "%r takes the remaining arguments unparsed (REMAINDER)" % param["name"]
        node["params"].append(param)
    node["params"] = _merge_switches(node["params"])
    if subparsers is not None and depth < 20:
        helps = {choice.dest: _text(choice.help) for choice in getattr(subparsers, "_choices_actions", [])}
        seen = set()
        node["commands"] = []
        for sub_name, sub in subparsers.choices.items():
            if id(sub) in seen:  # an alias shares its command's parser
                continue
            seen.add(id(sub))
            node["commands"].append(
                _argparse_node(argparse, sub, sub_name, helps.get(sub_name, ""), depth + 1, fromfile)
            )
    return node


def _argparse_parser(obj, factory):
    argparse = importlib.import_module("argparse")
    if factory:
        built, _, _ = _load(factory)
        parser = built() if callable(built) and not isinstance(built, argparse.ArgumentParser) else built
        if not isinstance(parser, argparse.ArgumentParser):
            raise Refused("the parser factory %s did not give an argparse.ArgumentParser" % factory)
        return parser, ""
    if isinstance(obj, argparse.ArgumentParser):
        return obj, ""
    if not callable(obj):
        raise Refused("the object is neither an ArgumentParser nor a function")
    import optparse

    saved = {}

    def trap(how):
        def raiser(self, *args, **kwargs):
            raise _Captured(self, how)

        return raiser

    for method in ("parse_args", "parse_known_args", "parse_intermixed_args", "parse_known_intermixed_args"):
        if hasattr(argparse.ArgumentParser, method):
            saved[(argparse.ArgumentParser, method)] = getattr(argparse.ArgumentParser, method)
            setattr(argparse.ArgumentParser, method, trap(method))
    saved[(optparse.OptionParser, "parse_args")] = optparse.OptionParser.parse_args
    optparse.OptionParser.parse_args = trap("optparse")
    # A missed trap only prints help.
    sys.argv = [sys.argv[0], "--help"]
    try:
        obj()
    except _Captured as captured:
        if captured.how == "optparse":
            raise Refused("it uses optparse, which fiskai does not support (options can be abbreviated)") from None
        return captured.obj, captured.how
    except SystemExit:
        pass
    finally:
        for (owner, method), original in saved.items():
            setattr(owner, method, original)
    raise Refused("the entry point returned without parsing arguments with argparse; name a parser factory")
