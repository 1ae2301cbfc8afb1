# pyright: basic
# pyright: reportMissingImports=false, reportArgumentType=false
# ruff: noqa: UP031, BLE001
"""Introspection script run INSIDE a Python CLI's own interpreter; never imported by fiskai.

`python -I fiskai_child.py OUT FRAMEWORK TARGET [PARSER]` writes one JSON document to OUT describing the
command tree of TARGET (a console-script name or `module:attr`) as a framework-neutral tree, or
`{"error": "..."}`. It imports only the standard library itself and reaches click, typer and argparse
through `importlib`, so it runs on whatever the app has installed (fiskai-core never imports click).
It must stay valid for older interpreters: no `match`, no runtime `X | Y` types.

What it never does: call a command, run a parameter callback, call a default factory, convert a value,
or read stdin. The argparse and typer traps stop the app at the moment it asks to parse.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

# -I keeps the script's own folder off sys.path; its sibling modules go last, so no app module is shadowed.
sys.path.append(os.path.dirname(os.path.abspath(__file__)))

from fiskai_child_argparse import _argparse_node, _argparse_parser
from fiskai_child_click import _from_click, _typer_command
from fiskai_child_common import FORMAT, Refused, _dist_of, _fingerprint, _load, _version


def describe(framework, target, factory):
    """The document for TARGET, or Refused."""
    obj, dist, module_name = _load(target)
    prog = target.rpartition(":")[2].split(".")[-1] if ":" in target else target
    if framework in ("click", "typer"):
        if framework == "typer":
            obj = _typer_command(obj)
        found, version, root = _from_click(obj, prog)
        if framework == "click" and found == "typer":
            framework = "typer"
        if framework == "typer" and found == "click":
            version = _version("typer")
    elif framework == "argparse":
        argparse = importlib.import_module("argparse")
        parser, how = _argparse_parser(obj, factory)
        root = _argparse_node(argparse, parser, prog, "")
        if how in ("parse_known_args", "parse_known_intermixed_args"):
            root["passthrough"] = "the app parses with parse_known_args, so unknown options pass through"
        version = ""
    else:
        raise Refused("unknown framework %r" % framework)
    if dist is None:
        dist = _dist_of(module_name)
    return {
        "format": FORMAT,
        "framework": framework,
        "framework_version": version,
        "python": sys.executable,
        "python_version": "%d.%d.%d" % sys.version_info[:3],
        "dist": dist.metadata["Name"] if dist is not None else "",
        "dist_version": dist.version if dist is not None else "",
        "fingerprint": _fingerprint(dist, module_name),
        "root": root,
    }


def main(argv):
    """Write the document (or the error) to the file argv[1] names."""
    out, framework, target = argv[1], argv[2], argv[3]
    factory = argv[4] if len(argv) > 4 else ""
    # Imports may print; stdout is not the channel.
    try:
        document = describe(framework, target, factory)
    except Refused as err:
        document = {"error": str(err)}
    except BaseException as err:
        document = {"error": "%s: %s" % (type(err).__name__, str(err).splitlines()[0] if str(err) else "")}
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
