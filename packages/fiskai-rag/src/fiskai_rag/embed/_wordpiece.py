"""A pure-Python BERT WordPiece tokenizer for a query: no `tokenizers` import, no full tokenizer load.

A hybrid CLI search embeds one short query, yet loading the model's tokenizer through `tokenizers` cost
24 ms of import and 21-39 ms of `Tokenizer.from_file` per process, a quarter of the search. Model2Vec's
default models (potion-base-*) use BERT's uncased pipeline, which is small enough to run exactly in
Python: `BertNormalizer` (drop control characters, whitespace to spaces, spaces around CJK ideographs,
NFD with combining marks removed, per-character lower-casing), `BertPreTokenizer` (split on whitespace,
every punctuation character its own word) and greedy longest-match `WordPiece` (`##` continuations, a
word longer than `max_input_chars_per_word` or with an unmatched piece becomes the unknown token).

Only that exact configuration is taken (`from_tokenizer_json` returns None for any other, and the model
falls back to `tokenizers`), and a text that contains an added token's text (`[CLS]`, which
`tokenizers` would match before normalising) or a character whose Unicode class could differ between
Python's tables and the Rust crates' (unassigned, private-use, surrogate) is refused per text, so the
ids are the ones `tokenizers` gives (tested over every assigned BMP character and the influxdata-docs
chunks). The vocabulary is read from `tokenizer.json` once and cached beside it as a plain token list,
which loads several times faster than the JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import unicodedata
from pathlib import Path
from typing import Any, cast

__all__ = ["WordPiece"]

_CACHE_NAME = ".fiskai-wordpiece.txt"
_CACHE_MAGIC = "fiskai-wordpiece 1"
_HEAD_BYTES = 64 * 1024
# Rust's char::is_whitespace (Unicode White_Space) minus the control characters BertNormalizer drops
# before it looks for whitespace (U+000B, U+000C, U+001C-U+001F and U+0085 are Cc).
_SPACES = frozenset(" \t\n\r\u00a0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(map(chr, range(0x2000, 0x200B)))
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
_UNSURE = frozenset({"Cn", "Co", "Cs"})
# Blocks whose marks, punctuation, symbols and format characters kept their Unicode class from the old tables
# the Rust crates use to today's (checked character by character against tokenizers in the tests);
# elsewhere later Unicode versions added or reclassified some (U+061D, U+1734, U+2E43...), so a text
# holding such a character elsewhere goes to tokenizers.
_STABLE_BLOCKS = ((0x80, 0x58F), (0x2000, 0x23FF), (0x2500, 0x27BF), (0x3000, 0x303F), (0xFF00, 0xFFEF))


class _Refused(Exception):
    """This text needs the real tokenizer."""


class WordPiece:
    """The ids `tokenizers` gives a text under BERT's uncased WordPiece pipeline, unknown token dropped."""

    def __init__(self, vocab: dict[str, int], *, unk: str, prefix: str, max_chars: int, added: list[str]) -> None:
        self.vocab = vocab
        self.unk = unk
        self.unk_id = vocab.get(unk)
        self.prefix = prefix
        self.max_chars = max_chars
        self.added = tuple(added)

    @property
    def size(self) -> int:
        """Tokens in the vocabulary, added tokens included (as `get_vocab_size(with_added_tokens=True)`)."""
        return len(self.vocab)

    @classmethod
    def from_tokenizer_json(cls, path: Path) -> WordPiece | None:
        """Read a tokenizer file; None when it is not exactly BERT's uncased WordPiece pipeline or unreadable."""
        try:
            stat = path.stat()
        except OSError:
            return None
        stamp = f"{stat.st_size} {stat.st_mtime_ns}"
        cached = _read_cache(path.parent / _CACHE_NAME, stamp)
        if cached is not None:
            return cached
        try:
            with path.open("rb") as handle:
                # tokenizers writes the pre-tokenizer before the model's vocabulary, so any other
                # pipeline (a Unigram model's tokenizer.json can be 10 MB) is told from the head of the
                # file and goes to tokenizers without a JSON parse here first.
                if b'"BertPreTokenizer"' not in handle.read(_HEAD_BYTES):
                    return None
                handle.seek(0)
                raw: Any = json.loads(handle.read())
        except (OSError, ValueError):
            return None
        made = _from_config(cast(dict[str, Any], raw)) if isinstance(raw, dict) else None
        if made is not None:
            _write_cache(path.parent / _CACHE_NAME, stamp, made)
        return made

    def ids(self, text: str) -> list[int] | None:
        """The text's token ids without special or unknown tokens; None when it needs `tokenizers`."""
        try:
            normal = _normalise(text)
        except _Refused:
            return None
        # tokenizers matches added tokens before normalising (or after, for a `normalized` one).
        if any(token in text or token in normal for token in self.added):
            return None
        out: list[int] = []
        for word in _pre_tokenise(normal):
            out.extend(self._word(word))
        return out

    def _word(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return []  # the unknown token, which Model2Vec drops
        vocab, prefix = self.vocab, self.prefix
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found: int | None = None
            while start < end:
                piece = word[start:end] if start == 0 else prefix + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return []  # one unmatched piece makes the whole word the unknown token
            pieces.append(found)
            start = end
        unk = self.unk_id
        return [i for i in pieces if i != unk]


def _from_config(raw: dict[str, Any]) -> WordPiece | None:
    normalizer = raw.get("normalizer")
    pre = raw.get("pre_tokenizer")
    model = raw.get("model")
    if not (isinstance(normalizer, dict) and isinstance(pre, dict) and isinstance(model, dict)):
        return None
    norm = cast(dict[str, Any], normalizer)
    bert = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "lowercase": True}
    # strip_accents None follows lowercase (True): accents are stripped either way.
    if norm.get("strip_accents") not in (None, True) or {k: v for k, v in norm.items() if k != "strip_accents"} != bert:
        return None
    if cast(dict[str, Any], pre) != {"type": "BertPreTokenizer"}:
        return None
    spec = cast(dict[str, Any], model)
    vocab = spec.get("vocab")
    unk = spec.get("unk_token")
    prefix = spec.get("continuing_subword_prefix")
    max_chars = spec.get("max_input_chars_per_word")
    if (
        spec.get("type") != "WordPiece"
        or not isinstance(vocab, dict)
        or not isinstance(unk, str)
        or not isinstance(prefix, str)
        or not isinstance(max_chars, int)
    ):
        return None
    table = {str(k): int(v) for k, v in cast(dict[str, Any], vocab).items()}
    added: list[str] = []
    for entry in cast(list[Any], raw.get("added_tokens") or []):
        token = cast(dict[str, Any], entry) if isinstance(entry, dict) else {}
        content, index = token.get("content"), token.get("id")
        if not isinstance(content, str) or not isinstance(index, int) or not content:
            return None
        if content not in table:
            table[content] = index
        added.append(content)
    return WordPiece(table, unk=unk, prefix=prefix, max_chars=max_chars, added=added)


def _read_cache(path: Path, stamp: str) -> WordPiece | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.split("\n")
    if len(lines) < 3 or lines[0] != _CACHE_MAGIC or lines[1] != stamp:
        return None
    try:
        meta: Any = json.loads(lines[2])
        unk, prefix, max_chars, added = meta["unk"], meta["prefix"], int(meta["max_chars"]), list(meta["added"])
        extra = {str(k): int(v) for k, v in meta["extra"].items()}
    except (ValueError, KeyError, TypeError):
        return None
    vocab = dict(zip(lines[3:], range(len(lines) - 3), strict=True))
    vocab.update(extra)
    return WordPiece(vocab, unk=str(unk), prefix=str(prefix), max_chars=max_chars, added=[str(a) for a in added])


def _write_cache(path: Path, stamp: str, model: WordPiece) -> None:
    # The tokens in id order, one a line, when ids run 0..n-1 without a gap and no token holds a line
    # break; anything else (added tokens past the end) goes in the JSON header line.
    ordered = sorted(model.vocab.items(), key=lambda item: item[1])
    run: list[str] = []
    for expected, (token, index) in enumerate(ordered):
        if index != expected or "\n" in token or "\r" in token:
            break
        run.append(token)
    extra = dict(ordered[len(run) :])
    meta = {"unk": model.unk, "prefix": model.prefix, "max_chars": model.max_chars, "added": list(model.added)}
    body = "\n".join([_CACHE_MAGIC, stamp, json.dumps({**meta, "extra": extra}), *run])
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    # Best effort: a model directory may be read-only; the tokenizer file is then read every time.
    with contextlib.suppress(OSError):
        temporary.write_text(body, encoding="utf-8")
        os.replace(temporary, path)
    with contextlib.suppress(OSError):
        temporary.unlink(missing_ok=True)


def _normalise(text: str) -> str:
    if text.isascii():
        # The common case, without a per-character Unicode lookup: controls other than \t \n \r go,
        # \t \n \r become spaces, letters are lower-cased (NFD changes no ASCII character).
        if not text.isprintable():
            text = "".join(" " if c in "\t\n\r" else c for c in text if c.isprintable() or c in "\t\n\r")
        return text.lower()
    out: list[str] = []
    for char in text:
        if char in "\t\n\r":
            out.append(" ")
            continue
        category = unicodedata.category(char)
        code = ord(char)
        if category in _UNSURE or code > 0xFFFF:
            raise _Refused
        if (category[0] in "MPS" or category == "Cf") and not any(low <= code <= high for low, high in _STABLE_BLOCKS):
            raise _Refused
        if char == "\x00" or char == "\ufffd" or category[0] == "C":
            continue
        if char in _SPACES:
            out.append(" ")
            continue
        if any(low <= code <= high for low, high in _CJK):
            out.append(f" {char} ")
            continue
        out.append(char)
    stripped = "".join(c for c in unicodedata.normalize("NFD", "".join(out)) if unicodedata.category(c) != "Mn")
    # Per character, as the Rust normalizer lower-cases: str.lower() of a whole string turns a final
    # capital sigma into the final form, which BERT's vocabulary would not match the same way.
    return "".join(c.lower() for c in stripped)


def _pre_tokenise(text: str) -> list[str]:
    words: list[str] = []
    current: list[str] = []
    for char in text:
        if char in _SPACES:
            if current:
                words.append("".join(current))
                current = []
        elif _is_punctuation(char):
            if current:
                words.append("".join(current))
                current = []
            words.append(char)
        else:
            current.append(char)
    if current:
        words.append("".join(current))
    return words


def _is_punctuation(char: str) -> bool:
    if char.isascii():
        return not char.isalnum() and char.isprintable() and char != " "
    return unicodedata.category(char)[0] == "P"
