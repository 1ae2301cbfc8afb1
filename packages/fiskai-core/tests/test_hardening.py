"""Secrets hidden from other processes of the same user: the environment block and the process's memory.

Real processes only: a Python child hides its secrets, then starts a command that reads the child's
`/proc/<pid>/environ` the way a tool would. A forked child running as a non-root user shows what
non-dumpable means for a reader of the same user (as root the block's content is the only protection, and
the first tests check exactly that).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from fiskai_core.credentials import credential_matcher

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux's")

_SECRET = "sk-hidden-0123456789abcdef"

# Hides SECRET_* (when told to), then reports what it still sees itself and what a child reading its /proc sees.
_CHILD = """
import ctypes, json, os, subprocess, sys
from fiskai_core.hardening import hide_environment

hidden = hide_environment(lambda name: name.startswith("SECRET_")) if sys.argv[1] == "hide" else None
me = os.getpid()
peek = subprocess.run(["cat", f"/proc/{me}/environ"], capture_output=True, env={"PATH": os.environ["PATH"]})
inherited = subprocess.run(["sh", "-c", 'printf %s "$SECRET_KEY"'], capture_output=True)  # env=None: the C environ
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
print(json.dumps({
    "hidden": None if hidden is None else [list(hidden.names), hidden.undumpable, hidden.problem],
    "peek": peek.stdout.decode("latin-1"),
    "os_environ": os.environ.get("SECRET_KEY"),
    "getenv": (libc.getenv(b"SECRET_KEY") or b"").decode(),
    "inherited": inherited.stdout.decode(),
}))
"""


def _child(mode: str) -> dict[str, Any]:
    env = {
        "PATH": os.environ["PATH"],
        "SECRET_KEY": _SECRET,
        "SECRET_OTHER": _SECRET + "-other",
        "SECRET_EMPTY": "",
        "KEPT": "visible",
    }
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_without_hiding_a_child_reads_the_secret_from_proc() -> None:
    """The leak the rest of this file closes (issue 36.2): deleting from os.environ would not change this."""
    seen = _child("plain")

    assert f"SECRET_KEY={_SECRET}\0" in seen["peek"]


def test_hidden_values_are_blank_in_proc_but_the_process_keeps_them() -> None:
    seen = _child("hide")

    assert seen["hidden"] == [["SECRET_KEY", "SECRET_OTHER"], True, None]
    assert _SECRET not in seen["peek"]
    assert "SECRET_KEY=\0" in seen["peek"]  # the name stays, the value is NUL bytes
    assert "KEPT=visible\0" in seen["peek"]
    # Python, the C library and a child started without an explicit environment all still have the value.
    assert seen["os_environ"] == _SECRET
    assert seen["getenv"] == _SECRET
    assert seen["inherited"] == _SECRET


# As a non-root user (root drops to nobody first), dumpable as a process started as that user is; then hides
# (when told to) and lets a child of the same user open its /proc files.
_SAME_USER = """
import ctypes, json, os, sys
from fiskai_core.hardening import hide_environment

if os.geteuid() == 0:
    os.setgroups([])
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
zero, one = ctypes.c_ulong(0), ctypes.c_ulong(1)
ctypes.CDLL(None).prctl(4, one, zero, zero, zero)  # PR_SET_DUMPABLE: the uid change above cleared it
report = {}
if sys.argv[1] == "hide":
    report["problem"] = hide_environment(lambda _name: False).problem
parent = os.getpid()
read_end, write_end = os.pipe()
if os.fork() == 0:
    for name in ("environ", "mem"):
        try:
            with open(f"/proc/{parent}/{name}", "rb"):
                report[name] = "opened"
        except PermissionError:
            report[name] = "denied"
    os.write(write_end, json.dumps(report).encode())
    os._exit(0)
os.close(write_end)
print(os.read(read_end, 4096).decode())
"""


def _same_user_reads(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _SAME_USER, mode], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_reader_of_the_same_user_may_open_nothing_once_hidden() -> None:
    before = _same_user_reads("plain")
    after = _same_user_reads("hide")

    assert before["environ"] == "opened", before  # the control: same user, dumpable (mem may be Yama's to refuse)
    assert after == {"problem": None, "environ": "denied", "mem": "denied"}


def test_the_matcher_covers_the_namespaces_the_defaults_and_the_operator_list() -> None:
    everything = credential_matcher(["MYCORP_*", "EMBED_KEY"])
    operator_only = credential_matcher(["MYCORP_*", "EMBED_KEY"], defaults=False)
    names = ["ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY", "GH_TOKEN", "MYCORP_A", "EMBED_KEY"]

    assert [name for name in names if everything(name)] == names
    assert [name for name in names if operator_only(name)] == ["MYCORP_A", "EMBED_KEY"]
    assert not any(everything(name) for name in ["PATH", "AWS_REGION", "NATS_URL", "MYCORPX", "gh_token"])
