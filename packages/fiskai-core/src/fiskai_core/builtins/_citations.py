"""`harness.knowledge.citations`: how a document path becomes the citation the model quotes (reference 7.3).

Rules are tried in order and the first whose `pattern` is found in the citation path rewrites it; with no
match the citation is the raw `index_ref` (`relpath#ordinal`). `replace` expands as Go's
`regexp.Expand` does (`$1`, `$name`, `${name}`, `$$`) plus `${ordinal}`, `${heading}` (the section's
own heading, the last part of its breadcrumb) and `${anchor}` (that heading slugged as GitHub does:
lower case, punctuation dropped, spaces to hyphens; the `-1` suffix GitHub adds to a repeated heading is
not known here). Every substituted value is percent-encoded for a URL path, `/` kept.

Each cited item also carries `ref`, a 6-character id stable for its `index_ref` (the first six hex digits
of its SHA-256), short enough for a model to repeat exactly.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from urllib.parse import quote

from fiskai_core.config import CitationRule

__all__ = ["CitationRewriter", "github_anchor", "short_ref"]

_REFERENCE = re.compile(r"\$(?:(\$)|\{([^}]*)\}|(\w+))")
_KEPT = frozenset({"L", "N", "M"})
_SPAN = re.compile(r"(.*)#(\d+)\.\.#\d+\Z", re.DOTALL)
_ONE = re.compile(r"(.*)#(\d+)\Z", re.DOTALL)


def github_anchor(heading: str) -> str:
    """`heading` as github-slugger makes an anchor: `Set up & run` -> `set-up--run`."""
    kept = (
        ch
        for ch in heading.lower()
        if ch in " -" or unicodedata.category(ch)[0] in _KEPT or unicodedata.category(ch) == "Pc"
    )
    return "".join(kept).replace(" ", "-")


def short_ref(index_ref: str) -> str:
    """The item's 6-character stable id."""
    return hashlib.sha256(index_ref.encode()).hexdigest()[:6]


class CitationRewriter:
    """The configured rules, compiled once."""

    __slots__ = ("_rules",)

    def __init__(self, rules: Sequence[CitationRule] = ()) -> None:
        self._rules = [(re.compile(rule.pattern), rule.replace) for rule in rules]

    @property
    def has_rules(self) -> bool:
        """Whether any rule is configured."""
        return bool(self._rules)

    def cite_ref(self, citation: str, heading_path: str = "") -> dict[str, str]:
        """`cite` for a raw citation `path#n` or span `path#n..#m` (cited by its first section)."""
        match = _SPAN.match(citation) or _ONE.match(citation)
        if match is None:
            return {"citation": citation}
        fields = self.cite(match.group(1), int(match.group(2)), heading_path)
        fields["index_ref"] = citation
        fields["ref"] = short_ref(citation)
        return fields

    def cite(self, path: str, ordinal: int, heading_path: str = "") -> dict[str, str]:
        """`{citation, index_ref, path, ref}` for one section of the document at citation path `path`."""
        index_ref = f"{path}#{ordinal}"
        return {
            "citation": self.citation(path, ordinal, heading_path),
            "index_ref": index_ref,
            "path": path,
            "ref": short_ref(index_ref),
        }

    def citation(self, path: str, ordinal: int, heading_path: str = "") -> str:
        """The citation the model sees: the first matching rule's expansion, else `path#ordinal`."""
        for pattern, replace in self._rules:
            match = pattern.search(path)
            if match is None:
                continue
            heading = heading_path.rsplit(" > ", 1)[-1].strip()
            special = {"ordinal": str(ordinal), "heading": heading, "anchor": github_anchor(heading)}

            def expand(ref: re.Match[str], match: re.Match[str] = match, special: dict[str, str] = special) -> str:
                if ref.group(1):
                    return "$"
                name = ref.group(2) if ref.group(2) is not None else ref.group(3)
                if name in special:
                    value = special[name]
                elif name.isdigit():
                    value = match.group(int(name)) if int(name) <= (match.re.groups) else ""
                else:
                    value = match.groupdict().get(name) or ""
                return quote(value or "", safe="/")

            return _REFERENCE.sub(expand, replace)
        return f"{path}#{ordinal}"
