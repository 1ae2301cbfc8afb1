"""What a shorter token cap would buy the contextual default: throughput, and what it costs in retrieval.

Run: uv run python bench/knowledge_token_cap.py [--cap 128]
     uv run python bench/knowledge_token_cap.py --cap 128 --eval ../shared/fixtures/ir/med \
         packages/fiskai-rag/evals/influxdata-heldout.yaml --store-root /tmp/cap

all-MiniLM-L6-v2 reads at most 256 tokens a text (its `max_seq_length`); many influxdata-docs chunks
are longer. A lower cap is the one lever left for issue 35's 10x throughput, and it changes every
vector of a longer chunk, so it is measured here, not shipped. Without `--eval`: chunks/s of the former
numpy encoder at 256 tokens, and of the int8 default at 256 and at the cap, alternating on the same
influxdata-docs chunks. With `--eval`: `fiskai knowledge eval SUITE --model all-MiniLM-L6-v2-int8` in
this process with the cap applied to the model, one store per suite under `--store-root` (kept, so a
second suite over the same corpus can pass `--no-index`); it prints hybrid, lexical and BM25 nDCG@10
and, for question sets, the top-5 answer rate by kind.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from knowledge_ops import _corpus_chunks

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "corpus" / "influxdata-docs"


def _throughput(cap: int, chunks: int, rounds: int) -> None:
    from numpy_bert import load_bert_model as load_numpy

    from fiskai_rag.embed._bert_model import load_bert_model
    from fiskai_rag.models import KNOWN_MODELS, model_dir

    directory = model_dir(KNOWN_MODELS["all-MiniLM-L6-v2"])
    texts = _corpus_chunks(str(SHARED), chunks)
    full, capped = load_bert_model(directory, int8=True), load_bert_model(directory, int8=True)
    capped.max_tokens = cap
    capped._tokenizer.enable_truncation(cap)  # pyright: ignore[reportUnknownMemberType]
    encoders: dict[str, Any] = {
        "numpy, former, 256 tokens": load_numpy(directory).encode,
        "int8 (default), 256 tokens": full.encode,
        f"int8, {cap} tokens": capped.encode,
    }
    for encode in encoders.values():
        encode(texts[:4])
    rates: dict[str, list[float]] = {name: [] for name in encoders}
    for _ in range(rounds):
        for name, encode in encoders.items():
            start = time.perf_counter()
            encode(texts)
            rates[name].append(len(texts) / (time.perf_counter() - start))
    tokens = [len(ids) for ids in full.token_ids(texts)]
    print(f"{len(texts)} influxdata-docs chunks: {sum(t > cap for t in tokens)} read past {cap} tokens at 256\n")
    base = rates["numpy, former, 256 tokens"]
    print(f"{'encoder':28} {'chunks/s':>9} {'vs numpy':>9}  per round (vs numpy)")
    for name, values in rates.items():
        each = " ".join(f"{v:.1f} ({v / b:.1f}x)" for v, b in zip(values, base, strict=True))
        median = statistics.median(values)
        print(f"{name:28} {median:9.1f} {median / statistics.median(base):8.2f}x  {each}")


def _evaluate(cap: int, suites: list[str], store_root: Path) -> None:
    from fiskai_cli._root import cli

    def capped(directory: Path) -> int:
        del directory
        return cap

    bert: Any = importlib.import_module("fiskai_rag.embed._bert_model")
    bert.max_tokens = capped  # what `BertModel` reads its cap through
    print(f"all-MiniLM-L6-v2-int8 read at most {cap} tokens a text\n")
    for suite in suites:
        store = store_root / Path(suite).name.removesuffix(".yaml")
        argv = ["knowledge", "eval", suite, "--model", "all-MiniLM-L6-v2-int8", "--store", str(store)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            cli.main(args=[*argv, "--format", "json"], prog_name="fiskai")
        result: dict[str, Any] = json.loads(out.getvalue())
        answers: list[dict[str, Any]] = result.get("answers") or []
        figures = " / ".join(f"{result[side]['ndcg_at_10']:.3f}" for side in ("ranking", "lexical", "baseline"))
        kinds = " ".join(f"{row['kind']} {row['in_top_5']:.3f}" for row in answers)
        print(f"{suite}: nDCG@10 hybrid / lexical / BM25 {figures}" + (f"; top 5: {kinds}" if kinds else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description="A shorter token cap for the contextual default, measured")
    parser.add_argument("--cap", type=int, default=128)
    parser.add_argument("--chunks", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--eval", nargs="+", default=[], metavar="SUITE", help="score these suites at the cap")
    parser.add_argument("--store-root", type=Path, default=Path("bench/.data/token-cap"))
    args = parser.parse_args()
    if args.eval:
        _evaluate(args.cap, args.eval, args.store_root)
    elif not SHARED.is_dir():
        print(f"influxdata-docs not found at {SHARED} (../shared/fixtures)")
        return 1
    else:
        _throughput(args.cap, args.chunks, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
