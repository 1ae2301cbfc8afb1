"""Trace lines: full, sanitized, capped and middle-elided forms of a call."""

from __future__ import annotations

from fiskai_core.fisk import (
    ApplicationModel,
    ArgModel,
    CmdModel,
    CommandSpec,
    FlagModel,
    walk_commands,
)
from fiskai_core.fisk._describe import command_line, trace_line, trace_line_short

_LONG = "abcdefghijklmnopqrstuvwxyz"


def _spec() -> CommandSpec:
    cmd = CmdModel(
        name="pub",
        restricted_schema={"type": "object"},
        flags=[FlagModel(name="header"), FlagModel(name="force", boolean=True, negatable=True)],
        args=[ArgModel(name="subject"), ArgModel(name="body")],
    )
    app = ApplicationModel(name="nats", commands=[CmdModel(name="stream", commands=[cmd])])
    (spec,) = walk_commands(app)
    return spec


def test_command_line_joins_argv_without_quoting() -> None:
    assert command_line(["pub", "--header=a b", "--", "x y"]) == "pub --header=a b -- x y"


def test_trace_line_is_sanitized_single_line_and_falls_back_to_path() -> None:
    spec = _spec()
    raw = '{"header":"\\u001b[2J\\u001b]0;pwned\\u0007ok\\nnext","subject":"s"}'
    assert spec.trace_line(raw) == "stream pub --header=ok next -- s"
    assert spec.trace_line('{"unknown":1}') == "stream pub"


def test_trace_line_caps_at_2000_runes_after_stripping_escapes() -> None:
    value = "\u001b[31m" * 500 + "é" * 3000
    line = trace_line(["pub"], ["pub", "--", value])
    assert line == "pub -- " + "é" * (2000 - len("pub -- ")) + "…"


def test_trace_line_short_elides_values_but_keeps_path_and_flag_names() -> None:
    spec = _spec()
    raw = f'{{"header":"{_LONG}","force":true,"subject":"{_LONG}","body":"short"}}'
    assert spec.trace_line_short(raw) == (
        "stream pub --header=abcdefghij...uvwxyz --force -- abcdefghij...uvwxyz short"
    )
    assert spec.trace_line(raw) == f"stream pub --header={_LONG} --force -- {_LONG} short"


def test_trace_line_short_keeps_values_up_to_nineteen_runes() -> None:
    nineteen = "x" * 19
    assert trace_line_short(["p"], ["p", f"--a={nineteen}", "--", nineteen]) == f"p --a={nineteen} -- {nineteen}"
    assert trace_line_short(["p"], None) == "p"
