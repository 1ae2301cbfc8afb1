"""Judged query suites: what a retrieval evaluation asks and which answers count (`_metrics` scores them).

Suites come in two shapes:
- TREC style, as in the CISI collection: a directory with `queries.jsonl` (`{"id", "text"}` per line),
  `qrels.tsv` (`query_id iteration uri grade`, whitespace separated) and optionally a `corpus/` folder.
- A mapping (parsed from YAML or JSON by the caller) with expected URIs per query; see
  `suite_from_mapping`. A URI is a relpath (`docs/keys.md`: any chunk of that file counts) or a citation
  (`docs/keys.md#2`: that chunk only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

__all__ = ["EvalQuery", "EvalSuite", "SuiteError", "load_suite", "load_trec_suite", "suite_from_mapping"]


class SuiteError(ValueError):
    """A suite file is missing or malformed; the message names the file and what is wrong."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalQuery:
    """One judged query."""

    id: str
    text: str
    relevant: Mapping[str, int]
    """Expected URI (relpath or citation) to relevance grade; every grade is > 0."""
    expected_excerpts: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Expected URI to fragments its delivered pack excerpts must contain (answer-bearing check)."""
    expected_reads: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Expected URI to fragments a follow-up read (`knowledge show`) of its delivered citation must contain."""
    kind: str = ""
    """The question's kind (`keyword`, `identifier`, `paraphrase`, `conversational`, or any label); figures are
    reported per kind."""
    answers: tuple[str, ...] = ()
    """Short verbatim strings that answer the question: a hit or pack item whose text contains any one of them
    (case-insensitive) carries an answer."""

    @property
    def has_evidence_checks(self) -> bool:
        """Whether the query states answer-bearing expectations beyond its URIs."""
        return bool(self.expected_excerpts or self.expected_reads)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalSuite:
    """A set of judged queries, and the corpus they were judged against when the suite names one."""

    name: str
    queries: tuple[EvalQuery, ...]
    corpus: Path | None = None
    """The folder of documents to index before running the queries; None when the suite names none."""
    base_dir: Path | None = None
    """The folder that expected relpaths are relative to (the suite's own folder)."""


def _fields(value: object) -> dict[str, object] | None:
    # Parsed JSON/YAML is untyped; give mappings string keys so the checks below are typed.
    if not isinstance(value, dict):
        return None
    return {str(key): item for key, item in cast("dict[object, object]", value).items()}


def _items(value: object) -> list[object] | None:
    return list(cast("list[object]", value)) if isinstance(value, list) else None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise SuiteError(f"cannot read suite file {str(path)!r}: {err.strerror or err}") from err


def _read_queries(path: Path) -> dict[str, str]:
    queries: dict[str, str] = {}
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record: object = json.loads(line)
        except json.JSONDecodeError as err:
            raise SuiteError(f"{path}:{number}: not a JSON object: {err.msg}") from err
        fields = _fields(record)
        if fields is None:
            raise SuiteError(f'{path}:{number}: expected an object with "id" and "text"')
        query_id, text = fields.get("id"), fields.get("text")
        if not isinstance(query_id, (str, int)) or not isinstance(text, str) or not text.strip():
            raise SuiteError(f'{path}:{number}: expected an object with "id" and a non-empty "text"')
        queries[str(query_id)] = text
    return queries


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise SuiteError(f"{path}:{number}: expected `query_id iteration uri grade`, got {line!r}")
        query_id, _iteration, uri, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError as err:
            raise SuiteError(f"{path}:{number}: grade {grade_text!r} is not an integer") from err
        if grade > 0:
            qrels.setdefault(query_id, {})[uri] = grade
    return qrels


def load_trec_suite(directory: Path, *, queries: str = "queries.jsonl", qrels: str = "qrels.tsv") -> EvalSuite:
    """Load a TREC-style suite: `queries.jsonl`, `qrels.tsv` and an optional `corpus/` folder.

    Queries without a relevant judgement are left out (no metric is defined for them); judgements of
    queries that are not in `queries.jsonl` are ignored.

    Raises:
        SuiteError: A file is missing or malformed, or no query has a judgement.
    """
    texts = _read_queries(directory / queries)
    judgements = _read_qrels(directory / qrels)
    judged = tuple(
        EvalQuery(id=query_id, text=text, relevant=judgements[query_id])
        for query_id, text in texts.items()
        if judgements.get(query_id)
    )
    if not judged:
        raise SuiteError(f"{directory}: no query in {queries} has a relevant judgement in {qrels}")
    corpus = directory / "corpus"
    return EvalSuite(
        name=directory.name,
        queries=judged,
        corpus=corpus if corpus.is_dir() else None,
        base_dir=directory,
    )


def _expected(value: object, where: str) -> dict[str, int]:
    if isinstance(value, str):
        return {value: 1}
    items = _items(value)
    if items and all(isinstance(item, str) and item for item in items):
        return {str(item): 1 for item in items}
    pairs = _fields(value)
    if pairs:
        # bool is an int subclass; `true` is not a grade.
        grades = {
            uri: grade
            for uri, grade in pairs.items()
            if isinstance(grade, int) and not isinstance(grade, bool) and grade > 0
        }
        if len(grades) == len(pairs):
            return grades
    raise SuiteError(f"{where}: `expected` must be a URI, a list of URIs, or a map of URI to a grade > 0")


def _evidence(value: object, relevant: Mapping[str, int], where: str, key: str) -> dict[str, tuple[str, ...]]:
    if value is None:
        return {}
    pairs = _fields(value)
    if pairs is None:
        raise SuiteError(f"{where}: `{key}` must map an expected URI to a list of text fragments")
    evidence: dict[str, tuple[str, ...]] = {}
    for uri, fragments in pairs.items():
        if uri not in relevant:
            raise SuiteError(f"{where}: `{key}` names {uri!r}, which is not in `expected`; list it there first")
        listed = _items(fragments)
        if not listed or not all(isinstance(item, str) and item.strip() for item in listed):
            raise SuiteError(f"{where}: `{key}` for {uri!r} must be a non-empty list of non-empty text fragments")
        evidence[uri] = tuple(str(item) for item in listed)
    return evidence


def _answers(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    listed = _items(value)
    if not listed or not all(isinstance(item, str) and item.strip() for item in listed):
        raise SuiteError(f"{where}: `answers` must be a non-empty list of non-empty text fragments")
    return tuple(str(item) for item in listed)


def suite_from_mapping(data: object, *, name: str, base_dir: Path) -> EvalSuite:
    """Build a suite from a parsed YAML or JSON document.

    The document::

        corpus: docs/            # optional; relative to base_dir; indexed before the queries run
        queries:
          - id: rotate           # optional; defaults to the 1-based position
            query: how do I rotate the signing keys
            expected: [docs/keys.md, docs/ops.md#3]   # or one URI, or {uri: grade}
            expected_excerpts:                       # optional: the delivered pack must carry these words
              docs/keys.md: [rotate every 90 days]
            expected_reads:                          # optional: reading the citation must show these
              docs/keys.md: [kms rotate-key]
            kind: paraphrase                         # optional: figures are reported per kind
            answers: [every 90 days]                 # optional: any one of these in a hit answers it

    Args:
        data: The parsed document.
        name: The suite's name in reports (usually the file name).
        base_dir: The folder relative paths are resolved against.

    Raises:
        SuiteError: The document does not have this shape.
    """
    document = _fields(data)
    if document is None:
        raise SuiteError(f"{name}: expected a mapping with a `queries` list")
    entries = _items(document.get("queries"))
    if not entries:
        raise SuiteError(f"{name}: `queries` must be a non-empty list")
    queries: list[EvalQuery] = []
    for position, entry in enumerate(entries, start=1):
        where = f"{name}: query {position}"
        fields = _fields(entry)
        if fields is None:
            raise SuiteError(f"{where}: expected a mapping with `query` and `expected`")
        text = fields.get("query")
        if not isinstance(text, str) or not text.strip():
            raise SuiteError(f"{where}: `query` must be non-empty text")
        query_id = fields.get("id", str(position))
        relevant = _expected(fields.get("expected"), where)
        kind = fields.get("kind", "")
        if not isinstance(kind, str):
            raise SuiteError(f"{where}: `kind` must be text")
        queries.append(
            EvalQuery(
                id=str(query_id),
                text=text,
                relevant=relevant,
                expected_excerpts=_evidence(fields.get("expected_excerpts"), relevant, where, "expected_excerpts"),
                expected_reads=_evidence(fields.get("expected_reads"), relevant, where, "expected_reads"),
                kind=kind,
                answers=_answers(fields.get("answers"), where),
            )
        )
    corpus = document.get("corpus")
    if corpus is not None and not isinstance(corpus, str):
        raise SuiteError(f"{name}: `corpus` must be a path")
    return EvalSuite(
        name=name,
        queries=tuple(queries),
        corpus=base_dir / corpus if corpus else None,
        base_dir=base_dir,
    )


def load_suite(path: Path) -> EvalSuite:
    """Load a suite from a TREC-style directory, a `qrels.tsv` inside one, or a JSON suite file.

    YAML suites are parsed by the caller (this library does not depend on a YAML parser) and passed
    to `suite_from_mapping`.

    Raises:
        SuiteError: The suite cannot be read.
    """
    if path.is_dir():
        return load_trec_suite(path)
    if path.suffix in {".tsv", ".qrels"}:
        return load_trec_suite(path.parent, qrels=path.name)
    if path.suffix == ".json":
        try:
            data: object = json.loads(_read_text(path))
        except json.JSONDecodeError as err:
            raise SuiteError(f"{path}: not valid JSON: {err.msg} (line {err.lineno})") from err
        return suite_from_mapping(data, name=path.name, base_dir=path.parent)
    raise SuiteError(f"{path}: expected a TREC suite directory, a qrels .tsv, or a .json/.yaml suite file")
