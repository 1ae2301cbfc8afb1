"""Root pytest configuration: shared fixtures that import no fiskai package."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """The read-only `../shared/fixtures` folder beside the checkout (or `FISKAI_SHARED_DIR/fixtures`).

    A missing folder fails the test run: these tests exist to check real captured data, so they must not
    quietly skip.
    """
    base = Path(os.environ.get("FISKAI_SHARED_DIR", _ROOT.parent / "shared"))
    path = base / "fixtures"
    if not path.is_dir():
        pytest.fail(f"shared fixtures not found at {path}; put ../shared beside the checkout or set FISKAI_SHARED_DIR")
    return path


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point XDG state and config into a temp dir so no test touches the developer's real state."""
    base = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    yield
