# pyright: basic
# pyright: reportMissingImports=false, reportArgumentType=false
# ruff: noqa: UP031, BLE001, D403
"""Shared parts of the introspection child (see `fiskai_child.py`); runs in the app's interpreter."""

from __future__ import annotations

import importlib
import os
import sys

FORMAT = 1
_FORWARDERS = frozenset(
    {"run_module", "run_path", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe"}
)
"""Names a callback uses to hand its arguments to another program (sqlite-utils `install` runs pip)."""


class Refused(Exception):
    """The target cannot be described; the message says why, in one line."""


class _Captured(BaseException):
    """Raised by a trapped parse (a BaseException, so an app's `except Exception` cannot swallow it)."""

    def __init__(self, obj, how=""):
        super().__init__("captured")
        self.obj = obj
        self.how = how


def _jsonable(value, depth=0):
    """A default or choice as JSON, or None when it has no plain JSON form (callables are never called)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    try:
        import enum

        if isinstance(value, enum.Enum):
            return _jsonable(value.value, depth + 1)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(value, (list, tuple)) and depth < 3:
        return [_jsonable(item, depth + 1) for item in value]
    return None


def _text(value):
    return value if isinstance(value, str) else ""


def _load(target):
    """The object a console-script name or `module:attr` names (importing its module, nothing more)."""
    if ":" in target:
        module_name, _, attr = target.partition(":")
        obj = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj, None, module_name
    from importlib import metadata

    found = [ep for ep in metadata.entry_points(group="console_scripts") if ep.name == target]
    if not found:
        raise Refused(
            "no console script named %r is installed in this interpreter (%s); name the object as module:attr"
            % (target, sys.executable)
        )
    ep = found[0]
    return ep.load(), getattr(ep, "dist", None), ep.value.partition(":")[0].strip()


def _dist_of(module_name):
    from importlib import metadata

    top = module_name.split(".")[0]
    try:
        names = metadata.packages_distributions().get(top) or []
    except AttributeError:  # Python < 3.10
        names = []
    for name in names:
        try:
            return metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _fingerprint(dist, module_name):
    """Files whose change invalidates a cached description: the dist's METADATA and the target module."""
    paths = []
    if dist is not None:
        try:
            meta = dist.locate_file(dist._path.name + "/METADATA") if hasattr(dist, "_path") else None
        except Exception:
            meta = None
        if meta is not None:
            paths.append(str(meta))
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if file:
        paths.append(os.path.abspath(file))
    out = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out.append([path, st.st_mtime_ns, st.st_size])
    return out


def _long(opts):
    longs = [opt for opt in opts if opt.startswith("--")]
    return max(longs, key=len) if longs else opts[0]


def _merge_switches(params):
    """click feature switches: several flags sharing one `name` become one enum parameter."""
    merged = []
    by_name = {}
    for param in params:
        if param.get("action") == "switch" and param["name"] in by_name:
            first = by_name[param["name"]]
            first["switch"].extend(param["switch"])
            if param.pop("default_switch", False):
                first["default"] = param["switch"][0]["value"]
            continue
        if param.get("action") == "switch":
            by_name[param["name"]] = param
            if param.pop("default_switch", False):
                param["default"] = param["switch"][0]["value"]
            else:
                param["default"] = None
        merged.append(param)
    return merged


def _fiskai_tags(*objs):
    for obj in objs:
        meta = getattr(obj, "__fiskai__", None)
        if isinstance(meta, dict) and isinstance(meta.get("tags"), (list, tuple)):
            return [str(tag) for tag in meta["tags"]]
    return []


def _version(dist_name):
    from importlib import metadata

    try:
        return metadata.version(dist_name)
    except metadata.PackageNotFoundError:
        return ""
