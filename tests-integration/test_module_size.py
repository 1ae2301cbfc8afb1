from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 500
"""Issue 27: no source module reaches 500 lines (a reader takes a module in at once)."""


def test_no_module_exceeds_the_size_ceiling() -> None:
    sources = sorted((ROOT / "packages").glob("*/src/**/*.py"))
    assert sources, "no package sources found"
    oversized = {
        str(path.relative_to(ROOT)): lines
        for path in sources
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) >= LIMIT
    }
    assert oversized == {}


def test_no_grab_bag_module_names() -> None:
    banned = {"utils", "helpers", "common", "misc"}
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "packages").glob("*/src/**/*.py")
        if path.stem.lstrip("_") in banned
    ]
    assert offenders == []
