"""A small contextual embedding model (a sentence-transformers BERT encoder), run in-process on onnxruntime.

A static model gives a word the same vector wherever it stands; a contextual one reads the whole
passage, so "how do I stop the service from using so much memory" can meet a section on cache limits.
all-MiniLM-L6-v2 does about 24 MFLOP per token, so indexing is compute-bound, while a query of a dozen
tokens takes a few milliseconds.

The model directory is what sentence-transformers saves (see `_bert_weights`). Its weights are written
once as an ONNX graph (`_bert_graph`) into the cache, `$XDG_CACHE_HOME/fiskai/onnx/<key>.onnx`, keyed by
the weights file's path, size and modification time and the graph's format version, so an edited or
replaced model gets a new graph and a read-only model directory still works. onnxruntime then runs it
with its fused CPU kernels. Encoding follows sentence-transformers: special tokens added, the text cut
at `max_seq_length` tokens, the layers with the exact (erf) GELU, then the pooling; the store normalises.

With `int8` the graph's linear layers hold int8 weights (symmetric, one step per output column) and
quantise their input per call (onnxruntime's `DynamicQuantizeMatMul`): about 3x the float graph's
throughput and a query in about 2 ms instead of 5, with vectors at cosine 0.986-1.0 to the float ones.
That is another model to an index (`all-MiniLM-L6-v2-int8`); retrieval held on every set it was scored
on (issue 35, fiskai-rag's README). `bench/knowledge.py --semantic` re-measures both in every run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from fiskai_rag.errors import ModelError, Remedy

from ._bert_weights import is_bert_directory, max_tokens, model_prompts

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["BertModel", "graph_path", "import_onnxruntime", "is_bert_directory", "load_bert_model", "model_prompts"]

_GRAPH_VERSION = "1"
"""Bumped when `_bert_graph` changes what it writes, so every cached graph is rebuilt."""
_BATCH_TOKENS = 4096
"""Padded tokens per forward pass: texts of like length go together (sorted), which keeps padding low."""


class _Session(Protocol):
    """The part of `onnxruntime.InferenceSession` used here (its own stubs leave most types unknown)."""

    def run(self, output_names: list[str], input_feed: dict[str, Any]) -> list[Any]: ...


class BertModel:
    """A loaded BERT encoder: `encode(texts)` gives one pooled vector per text (not normalised).

    One onnxruntime session on one thread, run from as many Python threads as the process may use cores
    (the runtime releases the GIL while it computes). A query of a dozen tokens leaves a second operator
    thread too little to do: every operator then waits to hand it work, and on a loaded two-core machine a
    query measured 10.0 ms p50 on two threads against 5.0 ms on one. A batch of chunks gains more from
    texts side by side than from operators split across threads: on influxdata-docs (152 tokens a chunk,
    int8) 110 chunks/s against 75 on one two-thread session, with bit-identical vectors, and no second
    copy of the weights.
    """

    def __init__(
        self,
        directory: Path,
        tokenizer: Tokenizer,
        session: _Session,
        dimension: int,
        *,
        int8: bool = False,
        workers: int | None = None,
    ) -> None:
        self.directory = directory
        self.int8 = int8
        """Whether the graph quantises its activations per call: then every text runs alone (`_batches`)."""
        self._session: _Session | None = session
        self.workers = workers or _usable_cores()
        """Texts (or batches) run side by side on this many threads."""
        self.dimension = dimension
        self.max_tokens = max_tokens(directory)
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_tokens)  # pyright: ignore[reportUnknownMemberType]
        self._tokenizer = tokenizer

    def close(self) -> None:
        """Release the session (after this the model must not be used)."""
        self._session = None

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids as the model reads them: [CLS] ... [SEP], at most `max_tokens`."""
        return [list(e.ids) for e in self._tokenizer.encode_batch_fast([_clip(t, self.max_tokens) for t in texts])]

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One pooled vector per text, in order; a text repeated in the call is encoded once."""
        distinct = list(dict.fromkeys(texts))
        if len(distinct) < len(texts):
            # Pages copied across version trees repeat chunks word for word (5.6% of influxdata-docs'),
            # and a contextual model's vector is the expensive part of indexing.
            vectors = dict(zip(distinct, self._batches(self.token_ids(distinct)), strict=True))
            return [vectors[text] for text in texts]
        return self._batches(self.token_ids(texts))

    def _batches(self, ids: list[list[int]]) -> list[list[float]]:
        if self._session is None:
            raise ModelError(f"the model at {self.directory} was closed")
        session = self._session
        out: list[list[float]] = [[] for _ in ids]
        # Longest first, so the threads finish together; texts of like length share a batch, so little of
        # each pass is padding.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        # An int8 graph picks one quantisation step for all it is given, so a text batched with others
        # (or with padding) would get another vector than alone. Alone, each text's vector is its own, and
        # with no padding to compute the pass is faster too (37 against 32 chunks/s on influxdata-docs).
        budget = 0 if self.int8 else _BATCH_TOKENS
        batches: list[list[int]] = []
        start = 0
        while start < len(order):
            width = max(1, len(ids[order[start]]))  # the longest of its batch
            end = start + 1
            while end < len(order) and (end - start + 1) * width <= budget:
                end += 1
            batches.append(order[start:end])
            start = end

        def run(batch: list[int]) -> None:
            for row, vector in enumerate(_forward(session, [ids[i] for i in batch])):
                out[batch[row]] = vector

        if len(batches) <= 1 or self.workers <= 1:
            for batch in batches:
                run(batch)
            return out
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(self.workers, len(batches)), thread_name_prefix="bert") as pool:
            list(pool.map(run, batches))  # collecting the results re-raises a pass's error here
        return out


def _forward(session: _Session, batch: list[list[int]]) -> list[list[float]]:
    import numpy as np

    width = max(1, max(len(ids) for ids in batch))
    tokens = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    for row, ids in enumerate(batch):
        tokens[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1
    (pooled,) = session.run(["pooled"], {"input_ids": tokens, "attention_mask": mask})
    return np.asarray(pooled, dtype=np.float64).tolist()


def _usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which containers and `taskset` narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def _clip(text: str, max_tokens: int) -> str:
    # Truncation happens on tokens, but tokenizing a huge chunk whole would cost its full length first;
    # max_tokens rarely span more than 16 characters each.
    return text[: max_tokens * 16]


def graph_path(directory: Path, *, int8: bool = False) -> Path:
    """Where the ONNX graph of the model in `directory` (int8 or float) is cached (it may not exist yet).

    Raises:
        ModelError: The weights file cannot be read.
    """
    from fiskai_rag.models import cache_dir

    weights = (directory / "model.safetensors").resolve()
    try:
        info = weights.stat()
    except OSError as err:
        raise ModelError(f"cannot read {weights}: {err.strerror or err}") from err
    version = f"{_GRAPH_VERSION}-int8" if int8 else _GRAPH_VERSION
    key = hashlib.sha256(f"{version}\0{weights}\0{info.st_size}\0{info.st_mtime_ns}".encode()).hexdigest()
    return cache_dir().parent / "onnx" / f"{key[:32]}.onnx"


def _export(directory: Path, target: Path, *, int8: bool) -> None:
    """Build the graph from the weights and write it to `target` atomically."""
    import onnx

    from ._bert_graph import build_bert_graph
    from ._bert_weights import read_bert_weights

    model = build_bert_graph(read_bert_weights(directory), int8=int8)
    spare = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        onnx.save_model(model, str(spare))  # pyright: ignore[reportUnknownMemberType]
        os.replace(spare, target)
    except OSError as err:
        spare.unlink(missing_ok=True)
        raise ModelError(f"cannot write the model's ONNX graph {target}: {err.strerror or err}", remedy=None) from err


def import_onnxruntime() -> Any:
    """onnxruntime, imported with its usage events to Microsoft off unless the operator turned them on.

    onnxruntime 1.29 and later send events to mobile.events.data.microsoft.com from a background thread
    on Linux too (its Privacy.md: macOS as well). With 1.32 here, a process that made one session and encoded texts opened a
    CONNECT to it through the proxy variables 9.1 s later, although `disable_telemetry_events()` had
    been called: that call mutes only the events after it. `ORT_DISABLE_TELEMETRY=1`, read once when the
    runtime starts, turns it all off: with it, no request in 150 s. So it is set before the import; a
    value the operator set is kept. An application that imports onnxruntime itself before fiskai-rag
    must set it itself.
    """
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime

    runtime = cast(Any, onnxruntime)
    runtime.disable_telemetry_events()  # for a runtime another import started before this one
    return runtime


def _session(path: Path) -> tuple[_Session, int]:
    """The one-thread session for the graph at `path` and the width of its output vector."""
    runtime = import_onnxruntime()
    options = runtime.SessionOptions()
    options.graph_optimization_level = runtime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # warnings about unused initializers are not the user's concern
    options.intra_op_num_threads = 1  # parallel work is texts side by side (`BertModel`)
    try:
        session = runtime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own Fail/InvalidGraph types for a damaged file
        raise ModelError(f"onnxruntime cannot load {path}: {err}; delete it to rebuild it", remedy=None) from err
    return cast(_Session, session), int(session.get_outputs()[0].shape[-1])


def load_bert_model(directory: Path, *, int8: bool = False) -> BertModel:
    """Load a sentence-transformers BERT directory (the `semantic` extra), building its graph on first use.

    `int8`: run the linear layers with int8 weights (see the module's notes).

    Raises:
        ModelError: A file is missing or malformed, or a library of the `semantic` extra is not installed.
    """
    from ._static_model import load_tokenizer

    tokenizer = load_tokenizer(directory / "tokenizer.json")
    path = graph_path(directory, int8=int8)
    # onnx only builds the graph; a cached one needs the runtime alone.
    needed = ("numpy", "onnxruntime") if path.is_file() else ("numpy", "onnx", "onnxruntime")
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelError(
            f"the contextual embedding model needs {' and '.join(missing)}: pip install 'fiskai-rag[semantic]'",
            remedy=Remedy.INSTALL_SEMANTIC,
        )
    if not path.is_file():
        _export(directory, path, int8=int8)
    session, dimension = _session(path)  # made now so a damaged graph is reported at load
    return BertModel(directory, tokenizer, session, dimension, int8=int8)
