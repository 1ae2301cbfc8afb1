"""Write `knowledge.db` as fiskai-rag wrote stores before documents were keyed by absolute path.

Run once with the code of commit 3c68b41 (schema 1: documents keyed by the path as typed, relative to
the folder the index ran in); `test_migration.py` opens the result with today's code. Every corpus file
gets the fixed mtime below so a test can recreate the exact stat the store recorded.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from fiskai_rag import open_store

MTIME_NS = 1_764_000_000_000_000_000
HERE = Path(__file__).parent
CORPUS = HERE.parent / "pack" / "corpus"


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        shutil.copytree(CORPUS, work / "corpus")
        for path in (work / "corpus").rglob("*.md"):
            os.utime(path, ns=(MTIME_NS, MTIME_NS))
        os.chdir(work)
        with open_store(work / "store", read_only=False) as store:
            sys.stderr.write(f"{store.index(['corpus'])}\n")
        shutil.copyfile(work / "store" / "knowledge.db", HERE / "knowledge.db")


if __name__ == "__main__":
    main()
