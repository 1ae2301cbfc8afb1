"""Build a Model2Vec-format model with the default model's exact shape and random weights, for cost figures.

Run: uv run python bench/static_shape_model.py bench/.data/shape-8M [--corpus DIR]

potion-base-8M (the default in-process model) is 29,528 tokens x 256 dimensions of float32 behind a
lower-casing WordPiece tokenizer. Its weights cannot be fetched on machines that reach no model hub, but
what it costs (index time per 10k chunks, RSS, disk, query latency) depends on that shape and on how
many tokens a text becomes, not on the weights' values. So this trains a WordPiece tokenizer of the same
vocabulary size on real documentation (influxdata-docs by default, so token counts are realistic) and
fills the matrix with seeded random numbers. Its rankings mean nothing; its costs are the default's.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

from fiskai_rag.testing import write_safetensors

VOCABULARY = 29_528
DIMENSIONS = 256
SHARED = Path(os.environ.get("FISKAI_SHARED_DIR", Path(__file__).resolve().parent.parent.parent / "shared"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--corpus", type=Path, default=SHARED / "fixtures" / "corpus" / "influxdata-docs")
    args = parser.parse_args()
    files = [str(p) for p in sorted(args.corpus.rglob("*.md"))]
    if not files:
        raise SystemExit(f"no Markdown files under {args.corpus}; pass --corpus DIR")
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train(files, trainers.WordPieceTrainer(vocab_size=VOCABULARY, special_tokens=["[UNK]"]))
    rows = np.random.default_rng(7).standard_normal((tokenizer.get_vocab_size(), DIMENSIONS)).astype(np.float32)
    args.out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(args.out / "tokenizer.json"))
    write_safetensors(args.out / "model.safetensors", {"embeddings": ("F32", rows.shape, rows.tobytes())})
    (args.out / "config.json").write_text(json.dumps({"normalize": True}), encoding="utf-8")
    print(f"{args.out}: {rows.shape[0]} tokens x {rows.shape[1]} dims F32")


if __name__ == "__main__":
    main()
