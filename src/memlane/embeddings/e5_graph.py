"""multilingual-e5-small as an ONNX graph for ONNX Runtime, built in memory from ``E5Weights``.

No export step and no torch: the BERT encoder is written out node by node (a fraction of a second),
its matrices kept 4-bit in ``MatMulNBits`` (13.5 MB of weights instead of 85 MB of floats). Attention,
the residual LayerNorms and GELU are ONNX Runtime's fused operators (``com.microsoft``). The word
embedding lookup stays outside the graph (``E5Runtime`` dequantises only the rows a batch uses), so
the graph takes the summed input embeddings and returns the last hidden states.

``accuracy_level`` 0 multiplies the 4-bit weights in float: the model exactly as the package defines it
(cosine 1.000000 to a float64 reference of the same weights). Level 4 quantises activations to int8
per block, as the package's own engine does (sentence vectors: cosine ≥ 0.999 to level 0, 0.9996 on
average over LoCoMo questions with language centres); a search's text is computed so (``E5Runtime``).
"""

from __future__ import annotations

import numpy as np

from memlane.embeddings.e5_weights import E5Weights, packed_nbits

OPSET = 18  # Split with num_outputs


def build(weights: E5Weights, accuracy_level: int = 0) -> bytes:
    from onnx import TensorProto, helper, numpy_helper

    shape = weights.shape
    hidden, ff = shape.hidden, shape.feed_forward
    initializers, nodes = [], []

    def constant(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attributes) -> str:
        domain = "com.microsoft" if op in ("MatMulNBits", "MultiHeadAttention", "SkipLayerNormalization",
                                           "Gelu") else None
        nodes.append(helper.make_node(op, inputs, [output], domain=domain, **attributes))
        return output

    def linear(x: str, name: str, rows: int, cols: int, parts: tuple[str, ...] = ()) -> str:
        """``x`` times the 4-bit matrix ``name`` plus its bias; with ``parts``, those matrices stacked into
        one product named ``name`` (rows are independent in ``MatMulNBits``: stacking changes no value)."""
        names = list(parts) or [name]
        packed, scales = packed_nbits(np.concatenate([weights.q4(n + ".w", rows, cols) for n in names]))
        bias = np.concatenate([weights.vector(n + ".b") for n in names])
        return node("MatMulNBits", [x, constant(name + ".q", packed), constant(name + ".s", scales), "", "",
                                    constant(name + ".b", bias)],
                    name, K=cols, N=rows * len(names), bits=4, block_size=32, accuracy_level=accuracy_level)

    x = node("LayerNormalization", ["embeds", constant("emb.ln.w", weights.vector("emb.ln.w")),
                                    constant("emb.ln.b", weights.vector("emb.ln.b"))], "x", axis=-1,
             epsilon=shape.eps)
    node("Cast", ["mask"], "mask32", to=TensorProto.INT32)
    for layer in range(shape.layers):
        p = f"l{layer}"
        # the query, key and value projections in one product, split for attention (one operator
        # instead of three: a search's single short text spends most of its time between operators)
        qkv = linear(x, f"{p}.qkv", hidden, hidden, parts=(f"{p}.q", f"{p}.k", f"{p}.v"))
        q, k, v = f"{p}.query", f"{p}.key", f"{p}.value"
        nodes.append(helper.make_node("Split", [qkv], [q, k, v], axis=-1, num_outputs=3))
        context = node("MultiHeadAttention", [q, k, v, "", "mask32"], f"{p}.ctx",
                       num_heads=shape.heads)
        attended = linear(context, f"{p}.ao", hidden, hidden)
        x = node("SkipLayerNormalization", [attended, x, constant(f"{p}.aln.w", weights.vector(f"{p}.aln.w")),
                                            constant(f"{p}.aln.b", weights.vector(f"{p}.aln.b"))], f"{p}.x1",
                 epsilon=shape.eps)
        inner = node("Gelu", [linear(x, f"{p}.fi", ff, hidden)], f"{p}.gelu")
        out = linear(inner, f"{p}.fo", hidden, ff)
        x = node("SkipLayerNormalization", [out, x, constant(f"{p}.oln.w", weights.vector(f"{p}.oln.w")),
                                            constant(f"{p}.oln.b", weights.vector(f"{p}.oln.b"))], f"{p}.x2",
                 epsilon=shape.eps)
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("embeds", TensorProto.FLOAT, ["batch", "tokens", hidden]),
         helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", hidden])],
        initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString()
