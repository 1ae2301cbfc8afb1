# pyright: basic, reportMissingImports=false, reportAttributeAccessIssue=false, reportOptionalMemberAccess=false
# ruff: noqa: UP031
"""The oracle, run in the subject venv's interpreter: parse argvs with the app's OWN parser, side-effect free.

`python oracle_child.py CHILD_DIR CASES OUT`: CASES is a JSON list of {framework, target, parser, argv};
for each, OUT gets {"params": {name: value}} (what the parser assigned, by parameter name) or {"error"}.
click/typer: `make_parser(ctx).parse_args` level by level, down the command path (converts nothing, runs
no callback). argparse: `parse_args` on the app's own parser with every default SUPPRESSed, so only what
the argv set appears.
"""

import json
import sys

sys.path.append(sys.argv[1])

from fiskai_child_argparse import _argparse_parser
from fiskai_child_click import _typer_command
from fiskai_child_common import _load

_loaded = {}


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if repr(value).startswith("Sentinel."):  # click 8.3+ UNSET: the parser saw no value
        return None
    return repr(value)


def _click(case):
    key = (case["framework"], case["target"])
    if key not in _loaded:
        obj, _, _ = _load(case["target"])
        _loaded[key] = _typer_command(obj) if case["framework"] == "typer" else obj
    cmd = _loaded[key]
    args = list(case["argv"])
    ctx = None
    name = case["target"]
    while True:
        settings = dict(getattr(cmd, "context_settings", None) or {})
        ctx = cmd.context_class(cmd, info_name=name, parent=ctx, **settings)
        opts, rest, _order = cmd.make_parser(ctx).parse_args(args)
        if not hasattr(cmd, "list_commands"):
            if rest:
                return {"error": "leftover %r" % rest}
            return {"params": {k: _plain(v) for k, v in opts.items()}}
        if opts:
            return {"error": "group options set: %r" % sorted(opts)}
        if not rest:
            return {"error": "no command"}
        name, args = rest[0], rest[1:]
        cmd = cmd.get_command(ctx, name)
        if cmd is None:
            return {"error": "no such command %r" % name}


def _argparse(case):
    import argparse

    key = ("argparse", case["target"], case.get("parser", ""))
    if key not in _loaded:
        obj, _, _ = _load(case["target"])
        parser, _how = _argparse_parser(obj, case.get("parser", ""))
        command_dests = set()
        stack = [parser]
        while stack:
            current = stack.pop()
            for action in current._actions:
                action.default = argparse.SUPPRESS
                # Structure only, as click's make_parser: no conversion (FileType opens files), no choice check.
                action.type = None
                action.choices = None if not isinstance(action, argparse._SubParsersAction) else action.choices
                if isinstance(action, argparse._SubParsersAction):
                    command_dests.add(action.dest)
                    stack.extend(action.choices.values())
        _loaded[key] = (parser, command_dests)
    parser, command_dests = _loaded[key]
    parser.exit_on_error = False
    try:
        namespace = parser.parse_args(case["argv"])
    except SystemExit as err:
        return {"error": "exit %s" % err.code}
    except argparse.ArgumentError as err:
        return {"error": str(err)}
    return {"params": {k: _plain(v) for k, v in vars(namespace).items() if k not in command_dests}}


def main():
    given, out = sys.argv[2], sys.argv[3]  # the argparse trap rewrites sys.argv
    with open(given, encoding="utf-8") as handle:
        cases = json.load(handle)
    results = []
    for case in cases:
        try:
            results.append(_argparse(case) if case["framework"] == "argparse" else _click(case))
        except BaseException as err:  # noqa: BLE001 - a parse failure is a result
            results.append({"error": "%s: %s" % (type(err).__name__, err)})
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main()
