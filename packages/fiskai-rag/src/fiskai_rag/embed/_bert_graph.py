"""A BERT encoder's weights written out as an ONNX graph, for onnxruntime to run.

The graph is the standard sentence-transformers forward pass in plain ONNX operators (opset 17):
word + position + segment-0 embeddings and their LayerNormalization; per layer, self-attention with the
padding masked out, its output projection, residual and LayerNormalization, then the feed-forward block
with the exact (erf) GELU, residual and LayerNormalization; then mean pooling over the attention mask
(or the [CLS] state). Inputs are `input_ids` and `attention_mask` (int64, batch x tokens); the output
`pooled` (float32, batch x hidden) is not normalised: the store does that.

onnxruntime's graph optimiser recognises these patterns and fuses them (LayerNorm, GELU, attention
softmax), so nothing here needs its contrib operators; `onnx` is imported only to build the file, once
per model, never on the query path.

The attention scale 1/sqrt(head size) is folded into the query projection, which saves a multiply over
every score matrix and changes the vectors only by float rounding.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx

    from ._bert_weights import BertWeights

__all__ = ["OPSET", "build_bert_graph"]

OPSET = 17
"""The first opset with LayerNormalization as a standard operator."""
_MASKED = -1e4
"""Added to a padding position's attention score: its softmax weight underflows to 0 in float32."""


def build_bert_graph(weights: BertWeights, *, int8: bool = False) -> onnx.ModelProto:
    """The encoder as an ONNX model (weights as initializers, float32; the linear layers' int8 with `int8`)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []
    count = 0

    def const(name: str, value: object) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        nonlocal count
        count += 1
        out = f"{op.lower()}_{count}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def linear(x: str, part: tuple[np.ndarray, np.ndarray], name: str, scale: float = 1.0) -> str:
        weight = (part[0].T * np.float32(scale)).astype(np.float32)  # MatMul takes in x out
        bias = (part[1] * np.float32(scale)).astype(np.float32)
        if int8:
            # Symmetric per output column; the activations are quantised per call by the operator.
            steps = np.maximum(np.abs(weight).max(axis=0), np.float32(1e-12)) / np.float32(127.0)
            quantised = np.clip(np.rint(weight / steps), -127, 127).astype(np.int8)
            return node(
                "DynamicQuantizeMatMul",
                [x, const(f"{name}.weight_q", quantised), const(f"{name}.weight_step", steps.astype(np.float32)),
                 const(f"{name}.weight_zero", np.zeros(steps.shape, dtype=np.int8)), const(f"{name}.bias", bias)],
                domain="com.microsoft",
            )  # fmt: skip
        return node("Add", [node("MatMul", [x, const(f"{name}.weight", weight)]), const(f"{name}.bias", bias)])

    def norm(x: str, part: tuple[np.ndarray, np.ndarray], name: str) -> str:
        return node(
            "LayerNormalization",
            [x, const(f"{name}.weight", part[0]), const(f"{name}.bias", part[1])],
            axis=-1,
            epsilon=weights.eps,
        )

    hidden, heads = weights.hidden, weights.heads
    size = hidden // heads
    # Embeddings: the position rows are sliced to the batch's width, read from input_ids' shape.
    width = node("Gather", [node("Shape", ["input_ids"]), const("one_index", np.array([1], dtype=np.int64))])
    zero = const("zero", np.array([0], dtype=np.int64))
    positions = node("Slice", [const("positions", weights.positions), zero, width, zero])
    x = node("Gather", [const("words", weights.words), "input_ids"])
    x = node("Add", [node("Add", [x, positions]), const("segment", weights.segment)])
    x = norm(x, weights.embedding_norm, "embeddings.norm")

    # The mask: 0 where a token is, -1e4 where padding is, shaped to broadcast over heads and queries.
    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", [const("f_one", np.float32(1.0)), mask]), const("masked", np.float32(_MASKED))])
    bias = node("Unsqueeze", [bias, const("axes_1_2", np.array([1, 2], dtype=np.int64))])

    split_shape = const("split_shape", np.array([0, 0, heads, size], dtype=np.int64))
    merge_shape = const("merge_shape", np.array([0, 0, hidden], dtype=np.int64))
    scale = 1.0 / math.sqrt(size)
    for n, layer in enumerate(weights.layers):
        name = f"layer{n}"
        query = node("Transpose", [node("Reshape", [linear(x, layer.query, f"{name}.q", scale), split_shape])],
                     perm=[0, 2, 1, 3])  # fmt: skip
        key = node("Transpose", [node("Reshape", [linear(x, layer.key, f"{name}.k"), split_shape])], perm=[0, 2, 3, 1])
        value = node("Transpose", [node("Reshape", [linear(x, layer.value, f"{name}.v"), split_shape])],
                     perm=[0, 2, 1, 3])  # fmt: skip
        scores = node("Softmax", [node("Add", [node("MatMul", [query, key]), bias])], axis=-1)
        attended = node("Transpose", [node("MatMul", [scores, value])], perm=[0, 2, 1, 3])
        attended = node("Reshape", [attended, merge_shape])
        x = norm(node("Add", [linear(attended, layer.attention_out, f"{name}.attn_out"), x]),
                 layer.attention_norm, f"{name}.attn_norm")  # fmt: skip
        inner = linear(x, layer.intermediate, f"{name}.inner")
        # GELU, exact: 0.5 x (1 + erf(x / sqrt 2)); onnxruntime fuses this into one Gelu kernel.
        erf = node("Erf", [node("Div", [inner, const(f"{name}.sqrt2", np.float32(math.sqrt(2.0)))])])
        gelu = node("Mul", [node("Mul", [inner, node("Add", [erf, const(f"{name}.one", np.float32(1.0))])]),
                            const(f"{name}.half", np.float32(0.5))])  # fmt: skip
        x = norm(node("Add", [linear(gelu, layer.output, f"{name}.out"), x]), layer.output_norm, f"{name}.out_norm")

    if weights.cls_pooling:
        pooled = node("Gather", [x, const("first", np.array(0, dtype=np.int64))], axis=1)
    else:
        weights3 = node("Unsqueeze", [mask, const("axes_2", np.array([2], dtype=np.int64))])
        summed = node("ReduceSum", [node("Mul", [x, weights3]), const("axes_1", np.array([1], dtype=np.int64))],
                      keepdims=0)  # fmt: skip
        counts = node("ReduceSum", [mask, const("axes_1b", np.array([1], dtype=np.int64))], keepdims=1)
        pooled = node("Div", [summed, node("Max", [counts, const("f_one_b", np.float32(1.0))])])
    nodes.append(helper.make_node("Identity", [pooled], ["pooled"]))

    graph = helper.make_graph(
        nodes,
        "bert_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        initializers,
    )
    opsets = [helper.make_opsetid("", OPSET)]
    if int8:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="fiskai-rag")
    model.ir_version = 8  # readable by every onnxruntime the extra allows
    return model
