"""fastembed against fiskai's own onnxruntime encoder, on the same graphs and chunks (issue 35, Deliver 1).

Run: uv run --with fastembed python bench/knowledge_fastembed.py [--chunks 96] [--rounds 3]

fastembed is not a dependency: `--with` lays it over the workspace's environment for this run only.
It cannot fetch its own ONNX export of all-MiniLM-L6-v2 without the model hub, so it is handed the graphs
fiskai builds (float and int8, `fiskai_rag.embed._bert_graph`) as a custom model with their pooled
output, and runs its own tokenizer (the model's tokenizer.json, cut at the same 256 tokens), batching
and normalisation over them. Each round times every encoder once on the same influxdata-docs chunks,
alternating, so load on a shared machine hits all alike; the table shows medians, the ratio to fiskai's
encoder of the same graph, and the lowest cosine between their vectors.

fastembed's data-parallel mode (`parallel=0`, one process a core) is not timed: its worker processes
did not answer with a model registered by `add_custom_model` here (the parent's `queue.Empty`).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from knowledge_ops import _corpus_chunks

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "corpus" / "influxdata-docs"


def _fastembed(graph: Path, model: Path, work: Path, name: str) -> Any:
    """fastembed's TextEmbedding over `graph`, with the model's tokenizer cut at fiskai's 256 tokens."""
    from fiskai_rag.embed._bert_model import import_onnxruntime

    import_onnxruntime()  # started before fastembed imports it: its usage reports off, as fiskai-rag's own
    # Imported by name: fastembed is laid over the environment for this run only, so it has no stubs here.
    embedding: Any = importlib.import_module("fastembed")
    description: Any = importlib.import_module("fastembed.common.model_description")

    folder = work / name.replace("/", "-")
    folder.mkdir(parents=True)
    for file in ("tokenizer.json", "config.json"):
        shutil.copy(model / file, folder / file)
    # fastembed cuts at tokenizer_config's model_max_length; fiskai at sentence-transformers' max_seq_length.
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 256}), encoding="utf-8")
    shutil.copy(graph, folder / "model.onnx")
    embedding.TextEmbedding.add_custom_model(
        model=name,
        pooling=description.PoolingType.DISABLED,
        normalization=True,
        sources=description.ModelSource(hf="fiskai/local-only"),
        dim=384,
        model_file="model.onnx",
        output_name="pooled",
    )
    return embedding.TextEmbedding(model_name=name, specific_model_path=str(folder))


def _batched(embedder: Any, batch: int) -> Callable[[list[str]], list[Any]]:
    def encode(texts: list[str]) -> list[Any]:
        return list(embedder.embed(texts, batch_size=batch))

    return encode


def main() -> int:
    parser = argparse.ArgumentParser(description="fastembed against fiskai's onnxruntime encoder, same graphs")
    parser.add_argument("--chunks", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import numpy as np

    if importlib.util.find_spec("fastembed") is None:
        print("fastembed is not installed: uv run --with fastembed python bench/knowledge_fastembed.py")
        return 1
    from fiskai_rag.embed._bert_model import graph_path, load_bert_model
    from fiskai_rag.models import KNOWN_MODELS, installed, model_dir

    spec = KNOWN_MODELS["all-MiniLM-L6-v2"]
    if not installed(spec):
        print("all-MiniLM-L6-v2 is not in the model cache: fiskai knowledge model fetch all-MiniLM-L6-v2")
        return 1
    if not SHARED.is_dir():
        print(f"influxdata-docs not found at {SHARED} (../shared/fixtures)")
        return 1
    model = model_dir(spec)
    texts = _corpus_chunks(str(SHARED), args.chunks)
    encoders: dict[tuple[str, str], Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for kind in ("float", "int8"):
            ours = load_bert_model(model, int8=kind == "int8")
            encoders[(kind, "fiskai")] = ours.encode
            theirs = _fastembed(graph_path(model, int8=kind == "int8"), model, Path(scratch), f"fiskai/minilm-{kind}")
            for batch in (32, 1):
                encoders[(kind, f"fastembed, batch {batch}")] = _batched(theirs, batch)
        for encode in encoders.values():
            encode(texts[:4])  # the runtime's first pass allocates its buffers
        rates: dict[tuple[str, str], list[float]] = {key: [] for key in encoders}
        vectors: dict[tuple[str, str], Any] = {}
        for _ in range(args.rounds):
            for key, encode in encoders.items():
                start = time.perf_counter()
                found = np.asarray(encode(texts), dtype=np.float64)
                rates[key].append(len(texts) / (time.perf_counter() - start))
                vectors[key] = found / np.linalg.norm(found, axis=1, keepdims=True)
    print(f"{len(texts)} influxdata-docs chunks, {args.rounds} rounds; python {sys.version.split()[0]}\n")
    print(f"{'graph':6} {'encoder':22} {'chunks/s':>9} {'vs fiskai':>10} {'min cosine':>11}  rounds")
    for (kind, who), values in rates.items():
        base = statistics.median(rates[(kind, "fiskai")])
        cosine = float((vectors[(kind, who)] * vectors[(kind, "fiskai")]).sum(axis=1).min())
        each = " ".join(f"{v:.1f}" for v in values)
        print(
            f"{kind:6} {who:22} {statistics.median(values):9.1f} {statistics.median(values) / base:10.2f} {cosine:11.6f}  {each}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
