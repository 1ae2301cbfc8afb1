"""Enumeration: the complete set of documents a match query selects, not the best few (reference 7.3).

The query syntax of the Go agent's `knowledge match` / `knowledge_enumerate`:

- `word word`: every word must appear somewhere in the document (in any section, body or heading);
- `"quoted phrase"`: the words adjacent, within one section;
- `-word` or `-"phrase"`: no section of the document may contain it;
- `body:word`, `heading:word` (also before a phrase): only the section bodies, or only the heading
  breadcrumbs, count.

Matching is FTS5's, over the index's own tokenizer (`porter unicode61`): stemmed, case-folded,
diacritics folded. User text never reaches FTS5 as syntax: each word or phrase is one quoted FTS5
string (quotes doubled), optionally behind a column filter.

Each document is counted by its sections (chunks) whose body matches a required term; `min_body_matches`
keeps only documents with at least that many, so a document that only names a word in a heading or once
in passing can be left out. Order: most matching sections first, then citation path. A query with no
required term (only exclusions, or only punctuation) is `query_empty`: enumerating a whole corpus is
`sources`' job.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from fiskai_rag.store._db import Conn
from fiskai_rag.store._sql import Columns

__all__ = [
    "DEFAULT_ENUMERATE_LIMIT",
    "MAX_ENUMERATE_LIMIT",
    "Enumeration",
    "MatchTerm",
    "MatchedDocument",
    "enumerate_documents",
    "parse_match",
]

DEFAULT_ENUMERATE_LIMIT = 200
MAX_ENUMERATE_LIMIT = 1000
_TOKEN = re.compile(r'(-?)(body:|heading:)?(?:"([^"]*)"?|(\S+))')
_SEARCHABLE = re.compile(r"[^\W_]")
_COLUMNS = {"body:": "content", "heading:": "heading_path", "": ""}
_BATCH = 500
"""Document ids bound per statement (SQLite's default limit is 32766 variables; this stays far below)."""


class MatchTerm(NamedTuple):
    """One word or phrase of a match query."""

    text: str
    column: str
    """`content`, `heading_path`, or empty for both."""
    excluded: bool

    @property
    def fts(self) -> str:
        """The FTS5 expression: the quoted text, behind its column filter."""
        quoted = '"' + self.text.replace('"', '""') + '"'
        return f"{self.column} : {quoted}" if self.column else quoted


class MatchedDocument(NamedTuple):
    """One matching document."""

    path: str
    """Its citation path (`docs/design.md`)."""
    title: str
    sections: int
    """Sections whose body matches a required term."""
    first: int
    """The ordinal of its first such section (or of its first matching one, when no body matched)."""
    heading: str
    """That section's heading breadcrumb."""


class Enumeration(NamedTuple):
    """An enumeration's answer."""

    status: str
    """`ok`, `index_not_built`, `corpus_empty` or `query_empty`."""
    documents: list[MatchedDocument]
    matched: int
    """How many documents match (`documents` holds at most `limit` of them)."""
    indexed_documents: int
    limit: int
    min_body_matches: int

    @property
    def truncated(self) -> bool:
        """Whether more documents matched than were returned."""
        return self.matched > len(self.documents)


def parse_match(query: str) -> list[MatchTerm]:
    """The words and phrases of `query`, in order; those with nothing searchable are dropped."""
    terms: list[MatchTerm] = []
    for match in _TOKEN.finditer(query):
        minus, field, phrase, word = match.groups()
        text = phrase if phrase is not None else word
        if not text or text in _COLUMNS or not _SEARCHABLE.search(text):  # `heading:` alone names nothing
            continue
        terms.append(MatchTerm(text.strip(), _COLUMNS[field or ""], excluded=bool(minus)))
    return terms


def enumerate_documents(db: Conn, query: str, *, limit: int | None = None, min_body_matches: int = 0) -> Enumeration:
    """Every document `query` selects, up to `limit` of them (1..`MAX_ENUMERATE_LIMIT`, default 200)."""
    cap = max(1, min(MAX_ENUMERATE_LIMIT, limit if limit is not None and limit > 0 else DEFAULT_ENUMERATE_LIMIT))
    floor = max(0, min_body_matches)
    total = int(db.execute("SELECT count(*) FROM documents").fetchall()[0][0])

    def answer(status: str, documents: list[MatchedDocument] | None = None, matched: int = 0) -> Enumeration:
        return Enumeration(status, documents or [], matched, total, cap, floor)

    if total == 0:
        return answer("corpus_empty")
    terms = parse_match(query)
    required = [term for term in terms if not term.excluded]
    if not required:
        return answer("query_empty")
    ids = _document_ids(db, required, [term for term in terms if term.excluded])
    counts = _sections(db, ids, [term for term in required if term.column != "heading_path"], body=True)
    if floor:
        ids = [doc for doc in ids if counts.get(doc, (0, 0))[0] >= floor]
    firsts = _sections(db, [doc for doc in ids if doc not in counts], required, body=False)
    cols = Columns.of(db)
    rows: list[tuple[int, MatchedDocument]] = []
    for start in range(0, len(ids), _BATCH):
        batch = ids[start : start + _BATCH]
        marks = ",".join("?" * len(batch))
        sql = f"SELECT d.id, {cols.cite}, d.title FROM documents d WHERE d.id IN ({marks})"
        for doc, path, title in db.execute(sql, batch):
            sections, first = counts.get(int(doc)) or (0, firsts.get(int(doc), (0, 0))[1])
            rows.append((int(doc), MatchedDocument(str(path), str(title), sections, first, "")))
    rows.sort(key=lambda row: (-row[1].sections, row[1].path))
    chosen = [row._replace(heading=_heading(db, doc, row.first)) for doc, row in rows[:cap]]
    return answer("ok", chosen, len(rows))


def _document_ids(db: Conn, required: list[MatchTerm], excluded: list[MatchTerm]) -> list[int]:
    select = "SELECT c.document_id FROM chunks_fts f JOIN chunks c ON c.id = f.rowid WHERE chunks_fts MATCH ?"
    sql = " INTERSECT ".join([select] * len(required))
    if excluded:
        sql += " EXCEPT " + " EXCEPT ".join([select] * len(excluded))
    bindings = [term.fts for term in required] + [term.fts for term in excluded]
    return [int(row[0]) for row in db.execute(sql, bindings)]


def _sections(db: Conn, ids: list[int], terms: list[MatchTerm], *, body: bool) -> dict[int, tuple[int, int]]:
    """Per document of `ids`: (sections matching any of `terms`, the first one's ordinal).

    With `body`, only section bodies count (a term's own column filter is replaced by `content`).
    """
    if not ids or not terms:
        return {}
    expression = " OR ".join(f"({MatchTerm(term.text, 'content', False).fts if body else term.fts})" for term in terms)
    # One pass over the matches, filtered here: binding the ids in batches made FTS5 walk a common word's
    # postings once per batch (a 3197-document match took 0.7 s; see docs/builtins.md).
    wanted = set(ids)
    sql = (
        "SELECT c.document_id, count(*), min(c.ordinal) FROM chunks_fts f JOIN chunks c ON c.id = f.rowid "
        "WHERE chunks_fts MATCH ? GROUP BY c.document_id"
    )
    return {int(row[0]): (int(row[1]), int(row[2])) for row in db.execute(sql, [expression]) if int(row[0]) in wanted}


def _heading(db: Conn, doc: int, ordinal: int) -> str:
    sql = (
        "SELECT f.heading_path FROM chunks c JOIN chunks_fts f ON f.rowid = c.id "
        "WHERE c.document_id = ? AND c.ordinal = ?"
    )
    rows = db.execute(sql, (doc, ordinal)).fetchall()
    return str(rows[0][0]) if rows else ""
