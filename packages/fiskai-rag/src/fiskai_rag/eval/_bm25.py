"""Plain SQLite FTS5 BM25 over whole documents: the floor a ranking has to beat, in the same run."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Protocol, Self, cast

import apsw

__all__ = ["Bm25Baseline"]

_TERM_SPLIT = re.compile(r"[^\w]+|_+")


class _Rows(Protocol):
    def fetchall(self) -> list[tuple[object, ...]]: ...


class _Database(Protocol):
    """The slice of `apsw.Connection` used here, typed (apsw's stubs leave its value type partly unknown)."""

    def execute(self, statements: str, bindings: tuple[object, ...] = ..., /) -> _Rows: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> bool | None: ...


class Bm25Baseline:
    """Plain SQLite FTS5 BM25 over whole documents, queried with a naive OR of the query's words.

    The floor a ranking has to beat: one row per document (porter unicode61, as the index uses), every
    word of two or more characters quoted and joined with OR, ordered by `bm25()`. Held in memory.
    """

    def __init__(self) -> None:
        self._db = cast("_Database", apsw.Connection(":memory:"))
        self._db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body, tokenize='porter unicode61')")

    def add_folder(self, folder: Path, *, base_dir: Path) -> int:
        """Add every Markdown or text file under `folder`, keyed by its path relative to `base_dir`.

        Both paths are resolved first, so a relative and an absolute spelling of them agree. A folder
        outside `base_dir` (a corpus passed from elsewhere) keys its files by the folder's name and their
        path inside it, as citation paths read, which suites' expected relpaths match by their tail.

        Returns:
            How many documents were added.
        """
        root = folder.resolve()
        base = base_dir.resolve()
        anchor = base if root.is_relative_to(base) else root.parent
        files = sorted(
            path for path in root.rglob("*") if path.suffix in {".md", ".markdown", ".txt", ".text"} and path.is_file()
        )
        with self._db:
            for path in files:
                key = PurePosixPath(path.relative_to(anchor)).as_posix()
                body = path.read_text(encoding="utf-8", errors="replace")
                self._db.execute("INSERT INTO docs(path, body) VALUES (?, ?)", (key, body))
        return len(files)

    def search(self, text: str, limit: int = 20) -> list[str]:
        """Return the relpaths of the best `limit` documents for `text`, best first."""
        terms = [term for term in _TERM_SPLIT.split(text) if len(term) >= 2]
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        rows = self._db.execute(
            "SELECT path FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match, limit)
        ).fetchall()
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        """Release the in-memory database."""
        self._db.close()
