import tomllib
from pathlib import Path
from typing import Any

from fiskai_cli._version import VERSION

ROOT = Path(__file__).resolve().parent.parent
TIERS = ["core", "runstate", "memory", "rag", "agent", "mcp", "a2a", "cli"]
LEAVES = {"core", "runstate", "memory", "rag"}


def _project(tier: str) -> dict[str, Any]:
    text = (ROOT / "packages" / f"fiskai-{tier}" / "pyproject.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["project"]


def _deps(tier: str) -> list[str]:
    return [str(dep) for dep in _project(tier)["dependencies"]]


def test_every_tier_is_a_separately_versioned_distribution_with_typed_sources() -> None:
    for tier in TIERS:
        project = _project(tier)
        assert project["name"] == f"fiskai-{tier}"
        assert isinstance(project["version"], str)
        assert (ROOT / "packages" / f"fiskai-{tier}" / "src" / f"fiskai_{tier}" / "py.typed").is_file()
        assert (ROOT / "packages" / f"fiskai-{tier}" / "README.md").is_file()


def test_leaf_tiers_depend_on_no_fiskai_distribution() -> None:
    for tier in LEAVES:
        assert [dep for dep in _deps(tier) if dep.startswith("fiskai-")] == []


def test_sibling_dependencies_use_compatible_ranges() -> None:
    for tier in TIERS:
        for dep in _deps(tier):
            if dep.startswith("fiskai-"):
                assert ">=0.1,<0.2" in dep, dep


def test_mcp_extra_of_the_cli_does_not_pull_anthropic() -> None:
    assert _project("cli")["optional-dependencies"]["mcp"] == ["fiskai-mcp>=0.1,<0.2"]
    assert [dep for dep in _deps("mcp") if "anthropic" in dep or "fiskai-agent" in dep] == []


def test_cli_version_constant_matches_its_distribution() -> None:
    assert VERSION == _project("cli")["version"]
