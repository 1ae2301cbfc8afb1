"""Check every built wheel's metadata: license, readme, and compatible ranges on sibling tiers."""

from __future__ import annotations

import re
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

TIERS = ("core", "runstate", "memory", "rag", "agent", "mcp", "a2a", "cli")


def main(dist: Path) -> int:
    problems: list[str] = []
    wheels = sorted(dist.glob("*.whl"))
    names = {w.name.split("-")[0] for w in wheels}
    expected = {f"fiskai_{t}" for t in TIERS}
    if names != expected:
        problems.append(f"expected wheels {sorted(expected)}, built {sorted(names)}")
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
            meta = Parser().parsestr(zf.read(meta_name).decode())
            has_typed = any(n.endswith("/py.typed") for n in zf.namelist())
        label = wheel.name
        if not (meta.get("License-Expression") or meta.get("License")):
            problems.append(f"{label}: no license")
        if meta.get("Description-Content-Type") != "text/markdown" or len(meta.get_payload() or "") < 40:
            problems.append(f"{label}: no readme")
        if not has_typed:
            problems.append(f"{label}: no py.typed")
        for req in meta.get_all("Requires-Dist") or []:
            match = re.match(r"fiskai-(\w+)(\[[^\]]*\])?\s*(.*)", req)
            if (
                match
                and match.group(1) != meta["Name"].removeprefix("fiskai-")
                and not re.search(r">=\d+\.\d+.*<\d+\.\d+", match.group(3))
            ):
                problems.append(f"{label}: sibling requirement without a compatible range: {req!r}")
        print(f"{label}: {meta['Name']} {meta['Version']}, {len(meta.get_all('Requires-Dist') or [])} requirements")
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
