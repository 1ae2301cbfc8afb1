"""`fiskai_core`'s top-level names: each resolves to its subpackage's object, and none is loaded early."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

import fiskai_core
from fiskai_core import CallContext, ToolResult


def _loaded_by(statement: str) -> list[str]:
    """The modules a fresh interpreter gains by running `statement`."""
    code = f"import sys\nbefore = set(sys.modules)\n{statement}\nprint(sorted(set(sys.modules) - before))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return ast.literal_eval(out.stdout)


def test_importing_fiskai_core_loads_nothing_else() -> None:
    assert _loaded_by("import fiskai_core") == ["fiskai_core"]


def test_importing_a_submodule_loads_only_what_it_imports() -> None:
    # The CLI reads the credential lists before anything else loads; the top level must not add to that.
    assert [m for m in _loaded_by("import fiskai_core.credentials") if m.startswith("fiskai_core")] == [
        "fiskai_core",
        "fiskai_core.credentials",
    ]


def test_the_lazy_table_and_all_name_the_same_names() -> None:
    lazy: dict[str, str] = vars(fiskai_core)["_LAZY"]
    assert sorted(lazy) == sorted(fiskai_core.__all__)


@pytest.mark.parametrize("name", fiskai_core.__all__)
def test_every_top_level_name_is_its_subpackage_object(name: str) -> None:
    module = importlib.import_module(vars(fiskai_core)["_LAZY"][name], "fiskai_core")
    assert name in getattr(module, "__all__", ()), f"{module.__name__} does not export {name}"
    assert getattr(fiskai_core, name) is getattr(module, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'fiskai_core' has no attribute 'Tools'"):
        _ = fiskai_core.Tools


def test_names_imported_from_the_top_level_are_typed() -> None:
    # pyright checks this file: the names must be visible to it through the TYPE_CHECKING imports.
    result: ToolResult = ToolResult(output="done")
    context: CallContext = CallContext()
    assert (result.text, context.delivered) == ("done", frozenset())
