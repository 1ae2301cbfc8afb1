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
quantise their input per call (onnxruntime's `DynamicQuantizeMatMul`): about 2x the float graph's
throughput and a query in about 2 ms instead of 5, with vectors at cosine 0.988-1.0 to the float ones.
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

__all__ = ["BertModel", "graph_path", "is_bert_directory", "load_bert_model", "model_prompts"]

_GRAPH_VERSION = "1"
"""Bumped when `_bert_graph` changes what it writes, so every cached graph is rebuilt."""
_BATCH_TOKENS = 4096
"""Padded tokens per forward pass: texts of like length go together (sorted), which keeps padding low."""
_QUERY_TOKENS = 128
"""A single text of at most this many tokens (a query) runs on the one-thread session."""


class _Session(Protocol):
    """The part of `onnxruntime.InferenceSession` used here (its own stubs leave most types unknown)."""

    def run(self, output_names: list[str], input_feed: dict[str, Any]) -> list[Any]: ...


class BertModel:
    """A loaded BERT encoder: `encode(texts)` gives one pooled vector per text (not normalised).

    Two onnxruntime sessions of the one graph, each made when first needed: a query (one short text)
    runs on one thread, a batch of chunks on the runtime's default (one per core). A dozen tokens leave
    a second thread too little to do: every operator then waits to hand it work, and on a loaded two-core
    machine a query measured 10.0 ms p50 on two threads against 5.0 ms on one. A process that only
    searches, or only indexes, holds one session; the one made at load is dropped, unused, when the
    first batch arrives.
    """

    def __init__(
        self,
        directory: Path,
        tokenizer: Tokenizer,
        session: _Session,
        dimension: int,
        graph: Path,
        *,
        int8: bool = False,
    ) -> None:
        self.directory = directory
        self.int8 = int8
        """Whether the graph quantises its activations per call: then every text runs alone (`_batches`)."""
        self._graph = graph
        self._query: _Session | None = session
        """The one-thread session (the one `load_bert_model` made), for `_QUERY_TOKENS` or fewer."""
        self._bulk: _Session | None = None
        self._queried = False
        self._closed = False
        self.dimension = dimension
        self.max_tokens = max_tokens(directory)
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_tokens)  # pyright: ignore[reportUnknownMemberType]
        self._tokenizer = tokenizer

    def close(self) -> None:
        """Release the sessions (after this the model must not be used)."""
        self._closed = True
        self._query = self._bulk = None

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
        out: list[list[float]] = [[] for _ in ids]
        # Texts of like length share a batch, so little of each pass is padding.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        # An int8 graph picks one quantisation step for all it is given, so a text batched with others
        # (or with padding) would get another vector than alone. Alone, each text's vector is its own, and
        # with no padding to compute the pass is faster too (37 against 32 chunks/s on influxdata-docs).
        budget = 0 if self.int8 else _BATCH_TOKENS
        start = 0
        while start < len(order):
            width = max(1, len(ids[order[start]]))
            end = start + 1
            while end < len(order) and (end - start + 1) * max(width, len(ids[order[end]])) <= budget:
                width = max(width, len(ids[order[end]]))
                end += 1
            batch = order[start:end]
            vectors = self._forward([ids[i] for i in batch])
            for row, index in enumerate(batch):
                out[index] = vectors[row]
            start = end
        return out

    def _session_for(self, batch: list[list[int]]) -> _Session:
        """The one-thread session for one short text, else the default-threads one (made on first use)."""
        if self._closed:
            raise ModelError(f"the model at {self.directory} was closed")
        if len(batch) == 1 and len(batch[0]) <= _QUERY_TOKENS:
            if self._query is None and self._bulk is not None:
                return self._bulk  # an indexing process's last short chunk: not worth a second session
            if self._query is None:
                self._query = _session(self._graph, threads=1)[0]
            self._queried = True
            return self._query
        if self._bulk is None:
            if not self._queried:
                self._query = None  # made at load and never used: an indexing process needs only this one
            self._bulk = _session(self._graph)[0]
        return self._bulk

    def _forward(self, batch: list[list[int]]) -> list[list[float]]:
        import numpy as np

        session = self._session_for(batch)
        width = max(1, max(len(ids) for ids in batch))
        tokens = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            tokens[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        (pooled,) = session.run(["pooled"], {"input_ids": tokens, "attention_mask": mask})
        return np.asarray(pooled, dtype=np.float64).tolist()


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


def _session(path: Path, *, threads: int = 0) -> tuple[_Session, int]:
    """The session for the graph at `path` and the width of its output vector.

    `threads`: the operators' thread count; 0 is onnxruntime's default, one per core.
    """
    import onnxruntime

    runtime = cast(Any, onnxruntime)
    options = runtime.SessionOptions()
    options.graph_optimization_level = runtime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # warnings about unused initializers are not the user's concern
    # No busy-waiting between operators: on two cores shared with other work, a spinning thread takes
    # the core the other one needs; measured at load 19, a query took 43 ms without spinning, 57 ms with.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.intra_op_num_threads = threads
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
    session, dimension = _session(path, threads=1)  # made now so a damaged graph is reported at load
    return BertModel(directory, tokenizer, session, dimension, path, int8=int8)
