#!/usr/bin/python3
"""ONNX's own backend node tests, written out for switchyard's importer (tests/onnx/onnx_node_suite_test.cpp).

    /usr/bin/python3 tools/onnx/node_suite.py --out DIR [--ops Add,Sub,...]

The cases come from python3-onnx's generators (onnx.backend.test.case.node: one model of one node,
or of a small expanded function, and numpy's expected outputs for given inputs): the suite every
ONNX backend runs. Each case whose every node's op type is in --ops (default: all) is written as
DIR/<name>/ in the layout of ONNX's backend test data: model.onnx and test_data_set_<k>/ with
input_<i>.pb and output_<i>.pb, serialized onnx.TensorProto values named after the graph's inputs
and outputs. DIR/<name>/case.txt holds "rtol atol from_opset": the case's tolerances and the
opset it was written for. switchyard's own cases in the same form follow (sy_*): what ONNX's data
leaves out and an importer composing ops can get wrong (guarded logs and divisions through Where,
integers beyond 2^24, negative indices known only at run time, Cast's rounding and wrapping).

A case is written at the opset it was written for, so the op versions of older opsets run on ONNX's
own data; one below opset 7 (the importer reads 7 to 27) is converted to opset 17 with
onnx.version_converter, which keeps its meaning, or written as it is when it does not convert (the
importer refuses it, naming the opset). The sy_opset* cases cover what changed at opsets 18 to 27,
which onnx 1.12 does not know (their models skip onnx.checker), and the older attribute forms that
ONNX's data leaves out. A case whose
inputs or outputs are not tensors (sequences, optionals) is left out.

Debian 12's python3-onnx is 1.12, whose generators use numpy aliases that numpy 1.24 removed
(np.float, np.int, np.bool, np.object); they are put back before the generators run. Run with
Debian's /usr/bin/python3.
"""
import argparse
import math
import os
import shutil
import sys

import numpy as np

for _alias, _type in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if _alias not in np.__dict__:
        setattr(np, _alias, _type)

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper, version_converter  # noqa: E402
from onnx.backend.test.case.node import collect_testcases  # noqa: E402
from suite_windows import window_cases  # noqa: E402

MIN_OPSET = 7
TARGET_OPSET = 17


def tensor_proto(value, info):
    array = np.asarray(value)
    elem_type = info.type.tensor_type.elem_type
    # numpy has no bfloat16: the generators hold its bits as uint16.
    if elem_type == TensorProto.BFLOAT16 and array.dtype == np.uint16:
        return helper.make_tensor(info.name, TensorProto.BFLOAT16, array.shape, array.tobytes(),
                                  raw=True)
    return numpy_helper.from_array(array, info.name)


def write_data_sets(folder, model, data_sets):
    for k, (inputs, outputs) in enumerate(data_sets):
        data = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(data)
        for prefix, values, infos in (("input", inputs, model.graph.input),
                                      ("output", outputs, model.graph.output)):
            for i, value in enumerate(values):
                with open(os.path.join(data, f"{prefix}_{i}.pb"), "wb") as out:
                    out.write(tensor_proto(value, infos[i]).SerializeToString())


def default_opset(model):
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return None


def all_tensors(model):
    return all(v.type.HasField("tensor_type")
               for v in list(model.graph.input) + list(model.graph.output))


# switchyard's own cases in the same form (names sy_*): what ONNX's data leaves out and an
# importer composing ops can get wrong. Expected outputs are numpy's.
def extra_cases():
    F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL

    def model(name, nodes, inputs, outputs, initializers=(), opset=TARGET_OPSET):
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(*i) for i in inputs],
                                  [helper.make_tensor_value_info(*o) for o in outputs],
                                  list(initializers))
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    def const(name, array):
        return numpy_helper.from_array(np.asarray(array), name)

    node = helper.make_node
    x = np.array([-2.0, -0.0, 0.0, 0.5, 3.0, np.inf, np.nan], dtype=np.float32)
    with np.errstate(all="ignore"):
        # A guarded log: the branch not taken holds NaN and -inf.
        yield ("sy_where_guarded_log",
               model("guarded_log", [node("Greater", ["x", "zero"], ["c"]),
                                     node("Log", ["x"], ["l"]),
                                     node("Where", ["c", "l", "zero"], ["y"])],
                     [("x", F, [7])], [("y", F, [7])], [const("zero", np.float32(0))]),
               [([x], [np.where(x > 0, np.log(x), np.float32(0)).astype(np.float32)])])
        # A guarded division: n / 0 is +-inf or NaN where d is 0.
        n = np.array([1.0, -2.0, 0.0, 4.0], dtype=np.float32)
        d = np.array([0.0, 0.0, 0.0, 2.0], dtype=np.float32)
        yield ("sy_where_guarded_division",
               model("guarded_division", [node("Equal", ["d", "zero"], ["c"]),
                                          node("Div", ["n", "d"], ["q"]),
                                          node("Where", ["c", "zero", "q"], ["y"])],
                     [("n", F, [4]), ("d", F, [4])], [("y", F, [4])],
                     [const("zero", np.float32(0))]),
               [([n, d], [np.where(d == 0, np.float32(0), n / d).astype(np.float32)])])
    # -inf taken stays -inf (a masked score), broadcast over rows.
    c = np.array([[True, False, True], [False, False, True]])
    s = np.arange(6, dtype=np.float32).reshape(2, 3)
    yield ("sy_where_takes_infinity",
           model("takes_infinity", [node("Where", ["c", "s", "minus_inf"], ["y"])],
                 [("c", B, [2, 3]), ("s", F, [2, 3])], [("y", F, [2, 3])],
                 [const("minus_inf", np.float32(-np.inf))]),
           [([c, s], [np.where(c, s, np.float32(-np.inf))])])
    # Integers beyond f32's 2^24 stay exact.
    big = np.array([2**40 + 1, -(2**33) - 3, 7], dtype=np.int64)
    other = np.array([2**53 - 1, 5, -(2**45) + 11], dtype=np.int64)
    pick = np.array([True, False, False])
    yield ("sy_where_int64_beyond_f32",
           model("where_int64", [node("Where", ["c", "a", "b"], ["y"])],
                 [("c", B, [3]), ("a", I64, [3]), ("b", I64, [3])], [("y", I64, [3])]),
           [([pick, big, other], [np.where(pick, big, other)])])
    square = (np.arange(16, dtype=np.int64).reshape(4, 4) + 2**40)
    yield ("sy_trilu_int64_beyond_f32",
           model("trilu_int64", [node("Trilu", ["x"], ["y"], upper=0)],
                 [("x", I64, [4, 4])], [("y", I64, [4, 4])]),
           [([square], [np.tril(square)])])
    yield ("sy_clip_int64_beyond_f32",
           model("clip_int64", [node("Clip", ["x", "lo", "hi"], ["y"])],
                 [("x", I64, [3])], [("y", I64, [3])],
                 [const("lo", np.int64(-(2**40))), const("hi", np.int64(2**40 + 1))]),
           [([big], [np.clip(big, -(2**40), 2**40 + 1)])])
    # Negative indices computed at run time count from the end (vulkan and cuda would otherwise
    # leave those elements unwritten).
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    indices = np.array([-1, 0, -5, 4, -2], dtype=np.int64)
    yield ("sy_gather_negative_indices_at_run_time",
           model("gather_negative", [node("Gather", ["table", "i"], ["y"], axis=0)],
                 [("i", I64, [5])], [("y", F, [5, 3])], [const("table", table)]),
           [([indices], [table[indices]])])
    # Cast to bfloat16 and float16 rounds to nearest even (PyTorch, ONNX Runtime, onnx >= 1.14),
    # then back to float.
    values = np.array([0.47892547, 0.48033667, 1.00390625, 1.01171875, 65520.0, 1e-8],
                      dtype=np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    with np.errstate(over="ignore"):  # 65520 rounds to float16's infinity
        halves = values.astype(np.float16).astype(np.float32)
    for to, name, expected in ((TensorProto.BFLOAT16, "bfloat16", rounded.view(np.float32)),
                               (TensorProto.FLOAT16, "float16", halves)):
        yield (f"sy_cast_{name}_rounds_to_nearest_even",
               model(f"cast_{name}", [node("Cast", ["x"], ["h"], to=to),
                                      node("Cast", ["h"], ["y"], to=F)],
                     [("x", F, [6])], [("y", F, [6])]),
               [([values], [expected])])
    # A narrower integer type keeps the low bits (numpy's astype).
    wide = np.array([300, -1, 255, 2**40 + 7, -129], dtype=np.int64)
    for to, dtype in ((TensorProto.UINT8, np.uint8), (TensorProto.INT8, np.int8),
                      (TensorProto.INT32, np.int32)):
        yield (f"sy_cast_int64_to_{np.dtype(dtype).name}_wraps",
               model("cast_wraps", [node("Cast", ["x"], ["y"], to=to)],
                     [("x", I64, [5])], [("y", to, [5])]),
               [([wide], [wide.astype(dtype)])])
    counts = np.array([[1, 0, 1, 1], [0, 0, 0, 1]], dtype=np.int64)
    yield ("sy_reduce_sum_int64",
           model("reduce_sum_int64", [node("ReduceSum", ["m", "axes"], ["y"], keepdims=0)],
                 [("m", I64, [2, 4])], [("y", I64, [2])], [const("axes", np.array([1]))]),
           [([counts], [counts.sum(axis=1)])])
    # Three inputs to Max and one to Min.
    a, b2, c3 = (np.array(v, dtype=np.float32) for v in ([1, 5, 3], [4, 2, 6], [2, 8, 1]))
    yield ("sy_max_three_inputs",
           model("max3", [node("Max", ["a", "b", "c"], ["y"])],
                 [("a", F, [3]), ("b", F, [3]), ("c", F, [3])], [("y", F, [3])]),
           [([a, b2, c3], [np.maximum(np.maximum(a, b2), c3)])])
    # MaxPool padded explicitly: ceil_mode with a leading pad (a partial last window, PyTorch's
    # rule) in 1-D, and a last window that would start in the trailing pad (dropped, as PyTorch,
    # ONNX since 1.16 and ONNX Runtime do; ONNX 1.12's shape inference still counts it).
    def max_pool_1d(x, kernel, stride, before, after, ceil):
        padded = np.concatenate([np.full(x.shape[:-1] + (before,), -np.inf, np.float32), x,
                                 np.full(x.shape[:-1] + (after + kernel,), -np.inf, np.float32)],
                                axis=-1)
        span = x.shape[-1] + before + after - kernel
        out = span // stride + 1 + (1 if ceil and span % stride else 0)
        return np.stack([padded[..., i * stride:i * stride + kernel].max(axis=-1)
                         for i in range(out)], axis=-1)

    row = np.array([[[3, -1, 4, 1, -5, 9, 2, -6]]], dtype=np.float32)
    yield ("sy_maxpool_1d_ceil_mode_with_pads",
           model("maxpool_ceil", [node("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2],
                                       pads=[1, 1], ceil_mode=1)],
                 [("x", F, [1, 1, 8])], [("y", F, [1, 1, 5])]),
           [([row], [max_pool_1d(row, 3, 2, 1, 1, True)])])
    yield ("sy_maxpool_ceil_window_in_trailing_pad_dropped",
           model("maxpool_ceil_pad", [node("MaxPool", ["x"], ["y"], kernel_shape=[2], strides=[2],
                                           pads=[0, 1], ceil_mode=1)],
                 [("x", F, [1, 1, 8])], [("y", F, [1, 1, 4])]),
           [([row], [max_pool_1d(row, 2, 2, 0, 1, False)])])
    # ReduceLogSumExp of rows holding -inf only, +inf, and large finite values.
    rows = np.array([[-np.inf, -np.inf, -np.inf], [1.0, np.inf, 2.0], [100.0, 99.0, -50.0]],
                    dtype=np.float32)
    with np.errstate(all="ignore"):
        big = np.max(rows, axis=1, keepdims=True)
        lse = np.where(np.isfinite(big), np.log(np.sum(np.exp(rows - np.where(
            np.isfinite(big), big, 0)), axis=1, keepdims=True)) + np.where(np.isfinite(big), big, 0),
            big).astype(np.float32)
    yield ("sy_reduce_log_sum_exp_infinite_rows",
           model("lse", [node("ReduceLogSumExp", ["x"], ["y"], axes=[1])],
                 [("x", F, [3, 3])], [("y", F, [3, 1])]),
           [([rows], [lse])])
    # AveragePool, ceil_mode with a partial last window and count_include_pad 1: the divisor
    # counts the declared pads but not the ceil-mode extension beyond them (PyTorch's rule).
    def avg_pool_1d_include_pad(x, kernel, stride, pad):
        length = x.shape[-1]
        span = length + 2 * pad - kernel
        out = span // stride + 1 + (1 if span % stride else 0)
        values = []
        for i in range(out):
            start, end = i * stride - pad, min(i * stride - pad + kernel, length + pad)
            divisor = end - start
            values.append(x[..., max(start, 0):min(end, length)].sum(axis=-1) / divisor)
        return np.stack(values, axis=-1).astype(np.float32)

    yield ("sy_averagepool_1d_ceil_mode_count_include_pad",
           model("avgpool_ceil", [node("AveragePool", ["x"], ["y"], kernel_shape=[3], strides=[2],
                                       pads=[1, 1], ceil_mode=1, count_include_pad=1)],
                 [("x", F, [1, 1, 8])], [("y", F, [1, 1, 5])]),
           [([row], [avg_pool_1d_include_pad(row, 3, 2, 1)])])
    # A reverse GRU with linear_before_reset 0 (composed step by step), against ONNX's own GRU
    # helper run forward over the time-reversed input.
    from onnx.backend.test.case.node.gru import GRU_Helper
    rng = np.random.default_rng(7)
    hidden, width, steps, batch = 3, 4, 5, 2
    gx = rng.standard_normal((steps, batch, width)).astype(np.float32)
    gw = (0.5 * rng.standard_normal((1, 3 * hidden, width))).astype(np.float32)
    gr = (0.5 * rng.standard_normal((1, 3 * hidden, hidden))).astype(np.float32)
    gb = (0.5 * rng.standard_normal((1, 6 * hidden))).astype(np.float32)
    forward, _ = GRU_Helper(X=gx[::-1].copy(), W=gw, R=gr, B=gb, linear_before_reset=0).step()
    yield ("sy_gru_reverse_reset_before",
           model("gru_reverse", [node("GRU", ["x", "w", "r", "b"], ["y"], hidden_size=hidden,
                                      direction="reverse", linear_before_reset=0)],
                 [("x", F, [steps, batch, width])], [("y", F, [steps, 1, batch, hidden])],
                 [const("w", gw), const("r", gr), const("b", gb)]),
           [([gx], [forward[::-1].astype(np.float32).copy()])])
    # Tile with a zero repeat: an empty axis.
    grid = np.arange(6, dtype=np.float32).reshape(2, 3)
    yield ("sy_tile_zero_and_two_repeats",
           model("tile", [node("Tile", ["x", "r"], ["y"])], [("x", F, [2, 3])], [("y", F, [0, 6])],
                 [const("r", np.array([0, 2], dtype=np.int64))]),
           [([grid], [np.tile(grid, (0, 2))])])
    # Dropout in training mode drops at random: refused, not run as the identity.
    yield ("sy_dropout_training_mode_refused",
           model("dropout_training", [node("Dropout", ["x", "ratio", "training"], ["y"])],
                 [("x", F, [3])], [("y", F, [3])],
                 [const("ratio", np.float32(0.5)), const("training", np.bool_(True))]),
           [([a], [a])])
    # GatherND with batch_dims 1, negative indices and whole rows as slices.
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    picks = np.array([[[-1], [0]], [[1], [-3]]], dtype=np.int64)
    yield ("sy_gathernd_batch_dims_negative_indices",
           model("gathernd", [node("GatherND", ["x", "i"], ["y"], batch_dims=1)],
                 [("x", F, [2, 3, 4]), ("i", I64, [2, 2, 1])], [("y", F, [2, 2, 4])]),
           [([cube, picks], [np.stack([cube[g][picks[g, :, 0]] for g in range(2)])])])
    # Pad's constant_value computed in the graph: a graph input (here -inf, copied as it is) and a
    # ReduceMin of an int64 input, with a negative pad cropping.
    grid = np.arange(6, dtype=np.float32).reshape(2, 3)
    yield ("sy_pad_constant_value_input",
           model("pad_value_input", [node("Pad", ["x", "p", "v"], ["y"])],
                 [("x", F, [2, 3]), ("v", F, [])], [("y", F, [3, 6])],
                 [const("p", np.array([0, 1, 1, 2], dtype=np.int64))]),
           [([grid, np.array(-np.inf, dtype=np.float32)],
             [np.pad(grid, [(0, 1), (1, 2)], constant_values=-np.inf)])])
    counts = np.array([[7, 3, 9], [4, 8, 5]], dtype=np.int64)
    yield ("sy_pad_constant_value_computed_int64",
           model("pad_value_computed", [node("ReduceMin", ["x"], ["m"], keepdims=0),
                                        node("Pad", ["x", "p", "m"], ["y"])],
                 [("x", I64, [2, 3])], [("y", I64, [2, 4])],
                 [const("p", np.array([0, -1, 0, 2], dtype=np.int64))]),
           [([counts], [np.pad(counts[:, 1:], [(0, 0), (0, 2)], constant_values=3)])])
    yield from grid_sample_cases(model)
    yield from einsum_cases(model)
    yield from rnn_cases(model, const)
    yield from sequence_lens_cases(model, const)
    yield from function_cases()
    yield from quantize_cases(model, const)
    yield from dynamic_quantize_cases(model, const)
    yield from conv3d_cases(model, const)
    yield from pool3d_cases(model)
    yield from window_cases(model, const)
    # LpNormalization and GlobalLpPool, which ONNX's data leaves out; Hardmax's 2-D form (before 13).
    rng = np.random.default_rng(9)
    block = rng.standard_normal((2, 3, 4)).astype(np.float32)
    yield ("sy_lp_normalization_l1_axis_1",
           model("lpnorm1", [node("LpNormalization", ["x"], ["y"], p=1, axis=1)],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4])]),
           [([block], [block / np.abs(block).sum(axis=1, keepdims=True)])])
    yield ("sy_lp_normalization_l2_default_axis",
           model("lpnorm2", [node("LpNormalization", ["x"], ["y"])],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4])]),
           [([block], [block / np.sqrt((block * block).sum(axis=-1, keepdims=True))])])
    maps = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    for p in (2, 3):
        pooled = (np.abs(maps.astype(np.float64)) ** p).sum(axis=(2, 3), keepdims=True) ** (1 / p)
        yield (f"sy_global_lp_pool_p{p}",
               model(f"globallppool{p}", [node("GlobalLpPool", ["x"], ["y"], p=p)],
                     [("x", F, [2, 3, 4, 5])], [("y", F, [2, 3, 1, 1])]),
               [([maps], [pooled.astype(np.float32)])])
    rows = block.reshape(2, 12)
    hard = np.zeros_like(rows)
    hard[np.arange(2), rows.argmax(axis=1)] = 1
    yield ("sy_opset11_hardmax_rows_from_axis",
           model("hardmax11", [node("Hardmax", ["x"], ["y"])],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4])], opset=11),
           [([block], [hard.reshape(2, 3, 4)])])
    yield from opset_cases(model, const)
    yield from control_flow_cases(model, const)
    yield from detection_cases(model)


# Einsum as exported models write it (attention's products, batched matrices with a broadcast
# ellipsis, an implicit output, three operands, an outer product, a sum over one operand's axis),
# diagonals and a trace; numpy's einsum gives the expected values.
def einsum_cases(model):
    F = TensorProto.FLOAT
    rng = np.random.default_rng(5)
    cases = (
        ("attention_scores", "bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
        ("attention_values", "bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
        ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        ("implicit_output", "ij,jk", [(3, 4), (4, 2)]),
        ("three_operands", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
        ("outer_product", "i,j->ij", [(3,), (4,)]),
        ("sum_one_axis", "ij,j->i", [(3, 4), (4,)]),
        ("transpose_and_sum", "abc->ca", [(2, 3, 4)]),
        ("spaces_and_batch_last", "ik j, jk -> ki", [(2, 3, 4), (4, 3)]),
        ("diagonal", "ii->i", [(3, 3)]),
        ("batch_diagonal_times_vector", "bii,bi->bi", [(2, 4, 4), (2, 4)]),
        ("trace", "ii", [(5, 5)]),
        ("triple_diagonal", "iii->i", [(3, 3, 3)]),
    )
    for name, equation, shapes in cases:
        operands = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        expected = np.asarray(np.einsum(equation.replace(" ", ""), *operands), np.float32)
        names = [f"x{k}" for k in range(len(operands))]
        yield (f"sy_einsum_{name}",
               model(f"einsum_{name}", [helper.make_node("Einsum", names, ["y"],
                                                         equation=equation)],
                     [(n, F, list(o.shape)) for n, o in zip(names, operands)],
                     [("y", F, list(expected.shape))]),
               [(operands, [expected])])


# If, Loop and Scan: a condition that differs between the data sets of one model (each run takes its
# own branch, of its own shape), a while loop whose count depends on the values, with carried
# values, a scan output and the iteration number; a trip count of 0; a trip count from Shape; an
# If inside a Loop's body whose branches read the body's and the graph's values, and a body that
# uses a name of the graph again for its own value.
def rnn_reference(x, w, r, b, h0, activation, reverse):
    """ONNX's RNN for one direction (float64): H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb)."""
    f = {"Tanh": np.tanh, "Relu": lambda v: np.maximum(v, 0.0),
         "Sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v))}[activation]
    hidden = w.shape[0]
    bias = b[:hidden] + b[hidden:] if b is not None else np.zeros(hidden)
    h = h0.astype(np.float64)
    ys = [None] * x.shape[0]
    for t in (reversed(range(x.shape[0])) if reverse else range(x.shape[0])):
        h = f(x[t].astype(np.float64) @ w.T + h @ r.T + bias)
        ys[t] = h
    return np.stack(ys)  # [T, B, H]


def rnn_cases(model, const):
    """ONNX's RNN (what PyTorch's nn.RNN exports): bidirectional with ReLU and an initial state,
    and reverse with Sigmoid and no bias; Y and Y_h from numpy."""
    F = TensorProto.FLOAT
    node = helper.make_node
    rng = np.random.default_rng(11)
    hidden, width, steps, batch = 3, 4, 5, 2
    x = rng.standard_normal((steps, batch, width)).astype(np.float32)
    w = (0.6 * rng.standard_normal((2, hidden, width))).astype(np.float32)
    r = (0.6 * rng.standard_normal((2, hidden, hidden))).astype(np.float32)
    b = (0.5 * rng.standard_normal((2, 2 * hidden))).astype(np.float32)
    h0 = rng.standard_normal((2, batch, hidden)).astype(np.float32)
    ys = [rnn_reference(x, w[d], r[d], b[d], h0[d], "Relu", d == 1) for d in range(2)]
    y = np.stack(ys, axis=1).astype(np.float32)  # [T, 2, B, H]
    y_h = np.stack([ys[0][-1], ys[1][0]]).astype(np.float32)
    yield ("sy_rnn_bidirectional_relu_initial_state",
           model("rnn_bidirectional", [node("RNN", ["x", "w", "r", "b", "", "h0"], ["y", "y_h"],
                                            hidden_size=hidden, direction="bidirectional",
                                            activations=["Relu", "Relu"])],
                 [("x", F, [steps, batch, width]), ("h0", F, [2, batch, hidden])],
                 [("y", F, [steps, 2, batch, hidden]), ("y_h", F, [2, batch, hidden])],
                 [const("w", w), const("r", r), const("b", b)]),
           [([x, h0], [y, y_h])])
    reverse = rnn_reference(x, w[0], r[0], None, np.zeros((batch, hidden)), "Sigmoid", True)
    yield ("sy_rnn_reverse_sigmoid_no_bias",
           model("rnn_reverse", [node("RNN", ["x", "w", "r"], ["y", "y_h"], hidden_size=hidden,
                                      direction="reverse", activations=["Sigmoid"])],
                 [("x", F, [steps, batch, width])],
                 [("y", F, [steps, 1, batch, hidden]), ("y_h", F, [1, batch, hidden])],
                 [const("w", w[:1]), const("r", r[:1])]),
           [([x], [reverse[:, None].astype(np.float32), reverse[:1].astype(np.float32)])])


def sequence_lens_cases(model, const):
    """LSTM and RNN with sequence_lens below the full length: each sequence runs over its own
    steps (a reverse direction from its last one), Y is 0 beyond them and Y_h is the state after
    its last step; expected from ONNX's LSTM helper and rnn_reference run row by row."""
    from onnx.backend.test.case.node.lstm import LSTM_Helper
    F, I32 = TensorProto.FLOAT, TensorProto.INT32
    node = helper.make_node
    rng = np.random.default_rng(13)
    hidden, width, steps, batch = 2, 3, 4, 3
    lens = np.array([4, 1, 3], dtype=np.int32)
    x = rng.standard_normal((steps, batch, width)).astype(np.float32)
    w = (0.6 * rng.standard_normal((2, 4 * hidden, width))).astype(np.float32)
    r = (0.6 * rng.standard_normal((2, 4 * hidden, hidden))).astype(np.float32)
    b = (0.5 * rng.standard_normal((2, 8 * hidden))).astype(np.float32)
    h0 = rng.standard_normal((2, batch, hidden)).astype(np.float32)
    c0 = rng.standard_normal((2, batch, hidden)).astype(np.float32)

    def expected(lens):
        y = np.zeros((steps, 2, batch, hidden), np.float32)
        y_h = np.zeros((2, batch, hidden), np.float32)
        for row, length in enumerate(lens):
            for d in range(2):
                xs = x[:length, row:row + 1]
                if d == 1:
                    xs = xs[::-1].copy()
                ys, last = LSTM_Helper(X=xs, W=w[d:d + 1], R=r[d:d + 1], B=b[d:d + 1],
                                       initial_h=h0[d:d + 1, row:row + 1],
                                       initial_c=c0[d:d + 1, row:row + 1]).step()
                ys = ys[:, 0, 0]
                y[:length, d, row] = ys[::-1] if d == 1 else ys
                y_h[d, row] = last[0, 0]
        return [y, y_h]

    other = np.array([2, 3, 2], dtype=np.int32)  # a second data set: lengths read each run
    yield ("sy_lstm_bidirectional_sequence_lens",
           model("lstm_lens", [node("LSTM", ["x", "w", "r", "b", "lens", "h0", "c0"], ["y", "y_h"],
                                    hidden_size=hidden, direction="bidirectional")],
                 [("x", F, [steps, batch, width]), ("lens", I32, [batch]),
                  ("h0", F, [2, batch, hidden]), ("c0", F, [2, batch, hidden])],
                 [("y", F, [steps, 2, batch, hidden]), ("y_h", F, [2, batch, hidden])],
                 [const("w", w), const("r", r), const("b", b)]),
           [([x, lens, h0, c0], expected(lens)), ([x, other, h0, c0], expected(other))])
    rw, rr = w[:1, :hidden], r[:1, :hidden]
    reverse = np.zeros((steps, 1, batch, hidden), np.float32)
    for row, length in enumerate(lens):
        reverse[:length, 0, row] = rnn_reference(x[:length, row:row + 1], rw[0], rr[0], None,
                                                 np.zeros((1, hidden)), "Tanh", True)[:, 0]
    yield ("sy_rnn_reverse_sequence_lens_constant",
           model("rnn_lens", [node("RNN", ["x", "w", "r", "", "lens"], ["y"], hidden_size=hidden,
                                   direction="reverse")],
                 [("x", F, [steps, batch, width])], [("y", F, [steps, 1, batch, hidden])],
                 [const("w", rw), const("r", rr), const("lens", lens)]),
           [([x], [reverse])])


def control_flow_cases(model, const):
    F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    node = helper.make_node

    def graph(name, nodes, inputs, outputs, initializers=()):
        return helper.make_graph(nodes, name, [helper.make_tensor_value_info(*i) for i in inputs],
                                 [helper.make_tensor_value_info(*o) for o in outputs],
                                 list(initializers))

    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    then_branch = graph("then", [node("Add", ["x", "c"], ["t"])], [], [("t", F, [3])])
    else_branch = graph("else", [node("Concat", ["x", "x"], ["e"], axis=0)], [], [("e", F, [6])])
    yield ("sy_if_branch_per_run",
           model("if_per_run", [node("If", ["cond"], ["y"], then_branch=then_branch,
                                     else_branch=else_branch)],
                 [("cond", B, []), ("x", F, [3])], [("y", F, ["n"])],
                 [const("c", np.float32(10))]),
           [([np.array(True), x], [x + np.float32(10)]),
            ([np.array(False), x], [np.concatenate([x, x])])])

    # a <- 2a + x until sum(a) >= 20 (at most M = 10 times); k <- k + i; each a is scanned.
    body = graph("body", [node("Mul", ["a_in", "two"], ["a2"]),
                          node("Add", ["a2", "x"], ["a_out"]),
                          node("ReduceSum", ["a_out"], ["total"], keepdims=0),
                          node("Less", ["total", "limit"], ["go"]),
                          node("Add", ["k_in", "i"], ["k_out"]),
                          node("Identity", ["a_out"], ["scan"])],
                 [("i", I64, []), ("go_in", B, []), ("a_in", F, [2]), ("k_in", I64, [])],
                 [("go", B, []), ("a_out", F, [2]), ("k_out", I64, []), ("scan", F, [2])],
                 [const("two", np.float32(2))])

    def while_loop(x, trips):
        a, k, scans, i = np.zeros(2, np.float32), np.int64(0), [], 0
        going = True
        while going and i < trips:
            a = (a * 2 + x).astype(np.float32)
            going = bool(a.sum() < 20)
            k, i = k + i, i + 1
            scans.append(a)
        stacked = np.stack(scans) if scans else np.zeros((0, 2), np.float32)
        return [a, np.array(k, np.int64), stacked]

    loop_inputs = [("M", I64, []), ("x", F, [2])]
    loop_outputs = [("a", F, [2]), ("k", I64, []), ("scans", F, ["n", 2])]
    loop = model("while_loop", [node("Loop", ["M", "start", "a0", "k0"], ["a", "k", "scans"],
                                     body=body)],
                 loop_inputs, loop_outputs,
                 [const("start", np.array(True)), const("a0", np.zeros(2, np.float32)),
                  const("k0", np.int64(0)), const("limit", np.float32(20))])
    slow, fast = np.array([0.5, 0.25], np.float32), np.array([3.0, 4.0], np.float32)
    yield ("sy_loop_while_carried_scan", loop,
           [([np.int64(10), slow], while_loop(slow, 10)),
            ([np.int64(10), fast], while_loop(fast, 10)),
            ([np.int64(2), slow], while_loop(slow, 2))])
    yield ("sy_loop_zero_trips", loop, [([np.int64(0), fast], while_loop(fast, 0))])

    # For each row r of x: total <- total + x[r] * (r + 1); an If inside picks Add or Sub by the
    # row's parity and reads the graph's "scale". The body names its own value "total" again.
    parity_then = graph("even", [node("Add", ["total_in", "weighted"], ["total"])], [],
                        [("total", F, [3])])
    parity_else = graph("odd", [node("Mul", ["weighted", "scale"], ["scaled"]),
                                node("Sub", ["total_in", "scaled"], ["odd_total"])], [],
                        [("odd_total", F, [3])])
    rows = graph("rows", [node("Gather", ["x", "r"], ["row"], axis=0),
                          node("Add", ["r", "one"], ["r1"]),
                          node("Cast", ["r1"], ["r1f"], to=F),
                          node("Mul", ["row", "r1f"], ["weighted"]),
                          node("Mod", ["r", "two_i"], ["odd"]),
                          node("Equal", ["odd", "zero_i"], ["even"]),
                          node("If", ["even"], ["total"], then_branch=parity_then,
                               else_branch=parity_else),
                          node("Identity", ["go_in"], ["go"])],
                 [("r", I64, []), ("go_in", B, []), ("total_in", F, [3])],
                 [("go", B, []), ("total", F, [3])],
                 [const("one", np.int64(1)), const("two_i", np.int64(2)),
                  const("zero_i", np.int64(0))])
    rows_model = model("rows_loop", [node("Shape", ["x"], ["shape"]),
                                     node("Gather", ["shape", "zero"], ["count"], axis=0),
                                     node("Loop", ["count", "", "start"], ["total"], body=rows),
                                     node("Add", ["total", "total"], ["y"])],
                       [("x", F, ["rows", 3])], [("y", F, [3])],
                       [const("zero", np.int64(0)), const("start", np.zeros(3, np.float32)),
                        const("scale", np.float32(0.5))])

    def rows_expected(x):
        total = np.zeros(3, np.float32)
        for r in range(x.shape[0]):
            weighted = x[r] * np.float32(r + 1)
            total = total + weighted if r % 2 == 0 else total - weighted * np.float32(0.5)
        return [(total + total).astype(np.float32)]

    rng = np.random.default_rng(9)
    small, tall = (rng.standard_normal(shape).astype(np.float32) for shape in ((2, 3), (5, 3)))
    yield ("sy_loop_rows_if_inside", rows_model,
           [([small], rows_expected(small)), ([tall], rows_expected(tall))])

    # Scan: a running sum over x's axis 1 read in reverse, and a second scan input (a constant)
    # read forward along axis 0; each step's state scanned out along axis 1, and the product of
    # the two slices prepended along axis 0.
    scan_body = graph("scan_body", [node("Add", ["sum_in", "x_t"], ["sum_out"]),
                                    node("Mul", ["x_t", "w_t"], ["prod"]),
                                    node("Identity", ["sum_out"], ["step"])],
                      [("sum_in", F, [2]), ("x_t", F, [2]), ("w_t", F, [2])],
                      [("sum_out", F, [2]), ("step", F, [2]), ("prod", F, [2])])
    w = np.arange(8, dtype=np.float32).reshape(4, 2)
    scan = model("scan_axes_directions",
                 [node("Scan", ["start", "x", "w"], ["total", "steps", "products"],
                       body=scan_body, num_scan_inputs=2, scan_input_axes=[1, 0],
                       scan_input_directions=[1, 0], scan_output_axes=[1, 0],
                       scan_output_directions=[0, 1])],
                 [("x", F, [2, 4])], [("total", F, [2]), ("steps", F, [2, 4]),
                                      ("products", F, [4, 2])],
                 [const("start", np.zeros(2, np.float32)), const("w", w)], opset=16)

    def scan_expected(x):
        total, steps, products = np.zeros(2, np.float32), [], []
        for t in range(4):
            x_t = x[:, 3 - t]
            total = total + x_t
            steps.append(total)
            products.append(x_t * w[t])
        return [total, np.stack(steps, axis=1), np.stack(products[::-1], axis=0)]

    x = rng.standard_normal((2, 4)).astype(np.float32)
    yield ("sy_scan_axes_directions", scan, [([x], scan_expected(x))])
    yield from sequence_cases(model, graph)


# The sequence ops inside models of tensors (ONNX's own sequence cases all take or give
# sequences, which a switchyard model does not): construct, insert at a position and at the back,
# erase, length, a negative position, concatenation and stacking, the three forms of split, and a
# Loop that appends to a carried sequence, as torch.jit.script writes a list.
def sequence_cases(model, graph):
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    node = helper.make_node
    rng = np.random.default_rng(21)
    a, b, c, d = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(4))
    one, minus_two = np.array(1, np.int64), np.array(-2, np.int64)
    yield ("sy_sequence_insert_erase_concat",
           model("sequence_ops", [node("SequenceConstruct", ["a", "b"], ["s0"]),
                                  node("SequenceInsert", ["s0", "c", "one"], ["s1"]),
                                  node("SequenceInsert", ["s1", "d"], ["s2"]),
                                  node("SequenceErase", ["s2", "one"], ["s3"]),
                                  node("SequenceLength", ["s3"], ["n"]),
                                  node("SequenceAt", ["s3", "minus_two"], ["at"]),
                                  node("ConcatFromSequence", ["s3"], ["y"], axis=1)],
                 [("a", F, [2, 3]), ("b", F, [2, 3]), ("c", F, [2, 3]), ("d", F, [2, 3]),
                  ("one", I64, []), ("minus_two", I64, [])],
                 [("y", F, [2, 9]), ("n", I64, []), ("at", F, [2, 3])]),
           [([a, b, c, d, one, minus_two],
             [np.concatenate([a, b, d], axis=1), np.array(3, np.int64), b])])
    x = rng.standard_normal((5, 3)).astype(np.float32)
    yield ("sy_split_to_sequence_forms",
           model("split_forms",
                 [node("SplitToSequence", ["x", "chunk"], ["chunks"], axis=0),
                  node("ConcatFromSequence", ["chunks"], ["same"], axis=0),
                  node("SequenceAt", ["chunks", "minus_one"], ["last"]),
                  node("SplitToSequence", ["x"], ["columns"], axis=1, keepdims=0),
                  node("ConcatFromSequence", ["columns"], ["stacked"], axis=0, new_axis=1),
                  node("SplitToSequence", ["x", "lengths"], ["parts"], axis=1),
                  node("SequenceAt", ["parts", "zero"], ["first"])],
                 [("x", F, [5, 3])],
                 [("same", F, [5, 3]), ("last", F, [1, 3]), ("stacked", F, [3, 5]),
                  ("first", F, [5, 1])],
                 [numpy_helper.from_array(np.array(2, np.int64), "chunk"),
                  numpy_helper.from_array(np.array(-1, np.int64), "minus_one"),
                  numpy_helper.from_array(np.array([1, 2], np.int64), "lengths"),
                  numpy_helper.from_array(np.array(0, np.int64), "zero")]),
           [([x], [x, x[4:5], x.T.copy(), x[:, :1]])])
    # rows <- [x[i] * (i + 1) for i in range(x.shape[0])], stacked on a new axis 1.
    append = graph("append", [node("Gather", ["x", "i"], ["row"], axis=0),
                              node("Add", ["i", "one_i"], ["i1"]),
                              node("Cast", ["i1"], ["i1f"], to=F),
                              node("Mul", ["row", "i1f"], ["scaled"]),
                              node("SequenceInsert", ["rows_in", "scaled"], ["rows_out"]),
                              node("Identity", ["go_in"], ["go"])],
                   [("i", I64, []), ("go_in", TensorProto.BOOL, []), ("rows_in", F, None)],
                   [("go", TensorProto.BOOL, []), ("rows_out", F, None)],
                   [numpy_helper.from_array(np.array(1, np.int64), "one_i")])
    for value in append.input[2:] + append.output[1:]:
        value.type.CopyFrom(helper.make_sequence_type_proto(
            helper.make_tensor_type_proto(F, None)))
    appended = model("append_loop",
                     [node("SequenceEmpty", [], ["empty"], dtype=F),
                      node("Shape", ["x"], ["shape"]),
                      node("Gather", ["shape", "zero"], ["count"], axis=0),
                      node("Loop", ["count", "", "empty"], ["rows"], body=append),
                      node("ConcatFromSequence", ["rows"], ["y"], axis=1, new_axis=1)],
                     [("x", F, ["n", 3])], [("y", F, [3, "n"])],
                     [numpy_helper.from_array(np.array(0, np.int64), "zero")])
    for rows in (2, 4):
        x = rng.standard_normal((rows, 3)).astype(np.float32)
        expected = np.stack([x[i] * np.float32(i + 1) for i in range(rows)], axis=1)
        yield (f"sy_sequence_loop_append_{rows}", appended, [([x], [expected])])


# Flatten of an empty tensor; NonMaxSuppression and RoiAlign as detection models use them and
# beyond ONNX's data: boxes in
# center form with classes and a score floor, ties in score, no score floor; RoiAlign's max mode
# (ONNX Runtime's definition: the largest weighted neighbour), output_half_pixel with regions
# smaller than a pixel, samples outside the map, adaptive and fixed sampling grids, no regions.
def roi_align(x, rois, batch, out_h, out_w, sampling, scale, half_pixel, max_mode):
    _, channels, height, width = x.shape
    out = np.zeros((len(rois), channels, out_h, out_w), np.float32)
    offset = np.float32(0.5 if half_pixel else 0.0)
    for r, (roi, image) in enumerate(zip(rois.astype(np.float32), batch)):
        x1, y1, x2, y2 = roi * np.float32(scale) - offset
        w, h = x2 - x1, y2 - y1
        if not half_pixel:
            w, h = max(w, np.float32(1)), max(h, np.float32(1))
        bin_h, bin_w = h / np.float32(out_h), w / np.float32(out_w)
        grid_h = sampling or max(int(np.ceil(bin_h)), 1)
        grid_w = sampling or max(int(np.ceil(bin_w)), 1)
        for ph in range(out_h):
            for pw in range(out_w):
                values = []
                for iy in range(grid_h):
                    y = y1 + ph * bin_h + (iy + np.float32(0.5)) * bin_h / np.float32(grid_h)
                    for ix in range(grid_w):
                        xs = x1 + pw * bin_w + (ix + np.float32(0.5)) * bin_w / np.float32(grid_w)
                        values.append(bilinear_corners(x[image], y, xs, height, width))
                values = np.stack(values)  # [samples, 4, channels]
                if max_mode:
                    out[r, :, ph, pw] = values.max(axis=1).max(axis=0)
                else:
                    out[r, :, ph, pw] = values.sum(axis=1).mean(axis=0)
    return out


def bilinear_corners(feature, y, x, height, width):
    channels = feature.shape[0]
    if y < -1 or y > height or x < -1 or x > width:
        return np.zeros((4, channels), np.float32)
    y, x = max(y, np.float32(0)), max(x, np.float32(0))
    y0, x0 = int(y), int(x)
    y1, x1 = y0 + 1, x0 + 1
    if y0 >= height - 1:
        y0 = y1 = height - 1
        y = np.float32(y0)
    if x0 >= width - 1:
        x0 = x1 = width - 1
        x = np.float32(x0)
    ly, lx = np.float32(y - y0), np.float32(x - x0)
    hy, hx = np.float32(1) - ly, np.float32(1) - lx
    return np.stack([hy * hx * feature[:, y0, x0], hy * lx * feature[:, y0, x1],
                     ly * hx * feature[:, y1, x0], ly * lx * feature[:, y1, x1]])


def nms(boxes, scores, most, iou, floor, center):
    selected = []
    for n in range(boxes.shape[0]):
        for k in range(scores.shape[1]):
            s = scores[n, k]
            order = [b for b in range(len(s)) if floor is None or s[b] > floor]
            order.sort(key=lambda b: -s[b])
            kept = []
            for b in order:
                if len(kept) == most:
                    break
                box = boxes[n, b]
                if center:
                    box = np.array([box[1] - box[3] / 2, box[0] - box[2] / 2,
                                    box[1] + box[3] / 2, box[0] + box[2] / 2], np.float32)
                box = np.array([min(box[0], box[2]), min(box[1], box[3]),
                                max(box[0], box[2]), max(box[1], box[3])], np.float32)
                if not any(iou_of(box, other) > iou for other in kept):
                    kept.append(box)
                    selected.append([n, k, b])
    return np.array(selected, np.int64).reshape(-1, 3)


def iou_of(a, b):
    h = min(a[2], b[2]) - max(a[0], b[0])
    w = min(a[3], b[3]) - max(a[1], b[1])
    if h <= 0 or w <= 0:
        return 0.0
    inter = h * w
    area_a, area_b = (a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1])
    return inter / (area_a + area_b - inter)


def detection_cases(model):
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    node = helper.make_node
    rng = np.random.default_rng(13)
    # 2 batches, 12 boxes in center form, 3 classes; two boxes share a score.
    centers = rng.uniform(0, 10, (2, 12, 2)).astype(np.float32)
    sizes = rng.uniform(1, 5, (2, 12, 2)).astype(np.float32)
    boxes = np.concatenate([centers, sizes], axis=2)
    scores = rng.uniform(0, 1, (2, 3, 12)).astype(np.float32)
    scores[0, 1, 7] = scores[0, 1, 3]
    for name, inputs, floor in (("center_classes_floor", ["b", "s", "most", "iou", "floor"], 0.3),
                                ("center_no_floor", ["b", "s", "most", "iou"], None)):
        values = [boxes, scores, np.array(4, np.int64), np.array(0.2, np.float32)]
        declared = [("b", F, [2, 12, 4]), ("s", F, [2, 3, 12]), ("most", I64, []),
                    ("iou", F, [])]
        if floor is not None:
            values.append(np.array(floor, np.float32))
            declared.append(("floor", F, []))
        expected = nms(boxes, scores, 4, np.float32(0.2), floor, True)
        yield (f"sy_nonmaxsuppression_{name}",
               model(f"nms_{name}", [node("NonMaxSuppression", inputs, ["y"],
                                          center_point_box=1)],
                     declared, [("y", I64, [None, 3])]),
               [(values, [expected])])

    # Detections filtered down to none: [0, 1, 4] flattened is [0, 4], not [0, 0].
    for axis, shape in ((1, [0, 4]), (2, [0, 4]), (0, [1, 0]), (3, [0, 1])):
        yield (f"sy_flatten_empty_axis_{axis}",
               model(f"flatten_empty_{axis}", [node("Flatten", ["x"], ["y"], axis=axis)],
                     [("x", F, [0, 1, 4])], [("y", F, shape)]),
               [([np.zeros((0, 1, 4), np.float32)], [np.zeros(shape, np.float32)])])

    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    rois = np.array([[0.5, 0.5, 3.5, 4.0], [1.0, 2.0, 1.2, 2.3], [-2.0, -1.0, 7.0, 8.0],
                     [3.0, 1.0, 4.5, 5.5]], np.float32)
    batch = np.array([0, 1, 1, 0], np.int64)
    settings = (("max_half_pixel", 16, "max", "half_pixel", 2, 0),
                ("avg_output_half_pixel_adaptive", 16, "avg", "output_half_pixel", 3, 0),
                ("max_output_half_pixel_sampling_2", 16, "max", "output_half_pixel", 2, 2),
                ("avg_half_pixel_scale", 16, "avg", "half_pixel", 3, 1))
    for name, opset, mode, transform, out, sampling in settings:
        scale = 0.5 if name.endswith("scale") else 1.0
        expected = roi_align(x, rois, batch, out, out, sampling, scale,
                             transform == "half_pixel", mode == "max")
        yield (f"sy_roialign_{name}",
               model(f"roialign_{name}",
                     [node("RoiAlign", ["x", "rois", "batch"], ["y"], mode=mode,
                           coordinate_transformation_mode=transform, output_height=out,
                           output_width=out, sampling_ratio=sampling, spatial_scale=scale)],
                     [("x", F, [2, 3, 6, 5]), ("rois", F, [None, 4]), ("batch", I64, [None])],
                     [("y", F, [None, 3, out, out])], opset=opset),
               [([x, rois, batch], [expected]),
                ([x, np.zeros((0, 4), np.float32), np.zeros(0, np.int64)],
                 [np.zeros((0, 3, out, out), np.float32)])])


# Model-local functions: nested calls, attributes referring to the call's (given, and not given:
# the op's default), a function that imports another opset than the model where its op means the
# same at both; a function that calls itself, and one whose op changed between its opset and the
# model's (Split-11 and Split-13), are refused.
def function_cases():
    F = TensorProto.FLOAT
    node = helper.make_node

    def ref(name, to, kind=onnx.AttributeProto.FLOAT):
        attribute = onnx.AttributeProto(name=name, ref_attr_name=to, type=kind)
        return attribute

    leaky = node("LeakyRelu", ["v"], ["w"])
    leaky.attribute.append(ref("alpha", "slope"))
    act = helper.make_function("local", "Act", ["v"], ["w", "unused"],
                               [leaky, node("Neg", ["v"], ["unused"])],
                               [helper.make_opsetid("", TARGET_OPSET)], ["slope"])
    double = node("Act", ["p"], ["q", "unused_q"], domain="local")
    double.attribute.append(ref("slope", "outer"))
    block = helper.make_function("local", "Block", ["p"], ["r"],
                                 [double, node("Act", ["q"], ["s", "unused_s"], domain="local"),
                                  node("Add", ["q", "s"], ["r"])],
                                 [helper.make_opsetid("", TARGET_OPSET),
                                  helper.make_opsetid("local", 1)], ["outer"])
    opsets = [helper.make_opsetid("", TARGET_OPSET), helper.make_opsetid("local", 1)]

    def with_functions(name, nodes, functions, opset_imports=opsets):
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, [5])],
                                  [helper.make_tensor_value_info("y", F, [5])])
        return helper.make_model(graph, opset_imports=opset_imports, functions=functions)

    x = np.array([-2, -0.5, 0, 1, 3], dtype=np.float32)
    q = np.where(x > 0, x, 0.25 * x)
    s = np.where(q > 0, q, 0.01 * q)  # slope not given: LeakyRelu's default alpha
    yield ("sy_function_nested_calls_and_attribute_refs",
           with_functions("functions", [node("Block", ["x"], ["y"], domain="local", outer=0.25)],
                          [act, block]),
           [([x], [(q + s).astype(np.float32)])])
    loop = helper.make_function("local", "Loop", ["v"], ["w"],
                                [node("Loop", ["v"], ["w"], domain="local")],
                                [helper.make_opsetid("", TARGET_OPSET),
                                 helper.make_opsetid("local", 1)], [])
    yield ("sy_function_calling_itself_refused",
           with_functions("recursive", [node("Loop", ["x"], ["y"], domain="local")], [loop]),
           [([x], [x])])
    rotate = helper.make_function("local", "Rotate", ["v"], ["w"],
                                  [node("Split", ["v"], ["a", "b"], axis=0, split=[2, 3]),
                                   node("Concat", ["b", "a"], ["w"], axis=0)],
                                  [helper.make_opsetid("", 12)], [])
    yield ("sy_function_opset_changes_the_op_refused",
           with_functions("own_opset", [node("Rotate", ["x"], ["y"], domain="local")], [rotate]),
           [([x], [np.concatenate([x[2:], x[:2]])])])
    # A call that names an output "" which the body still reads.
    residual = helper.make_function("local", "Residual", ["v"], ["w", "t"],
                                    [node("Relu", ["v"], ["t"]), node("Add", ["t", "v"], ["w"])],
                                    [helper.make_opsetid("", TARGET_OPSET)], [])
    yield ("sy_function_output_left_out_but_read_inside",
           with_functions("left_out", [node("Residual", ["x"], ["y", ""], domain="local")],
                          [residual]),
           [([x], [np.maximum(x, 0) + x])])
    negate = helper.make_function("local", "Negate", ["v"], ["w"], [node("Neg", ["v"], ["w"])],
                                  [helper.make_opsetid("", 13)], [])
    yield ("sy_function_other_opset_same_op",
           with_functions("same_op", [node("Negate", ["x"], ["y"], domain="local")], [negate]),
           [([x], [-x])])


def quantize(x, scale, zero, low, high):
    """ONNX's QuantizeLinear in numpy: x / scale in f32, ties to even, the zero point, clamped."""
    q = np.round((x.astype(np.float32) / np.float32(scale)).astype(np.float32))
    return np.clip(q + zero, low, high)


# QuantizeLinear and DequantizeLinear: ties to even and saturation, per axis with zero points, per
# block (opset 21), int32 biases, and a small QDQ model (quantized activations and an int8 weight
# per output column around a MatMul), against numpy's fake quantization.
def quantize_cases(model, const):
    F, I8, U8 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8
    node = helper.make_node
    ties = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 300, -300, 7.49, -7.51], dtype=np.float32)
    yield ("sy_quantize_ties_to_even_and_saturation",
           model("quantize_ties", [node("QuantizeLinear", ["x", "s", "z"], ["y"])],
                 [("x", F, [10])], [("y", I8, [10])],
                 [const("s", np.float32(1)), const("z", np.int8(0))]),
           [([ties], [quantize(ties, 1, 0, -128, 127).astype(np.int8)])])
    rng = np.random.default_rng(3)
    image = (4 * rng.standard_normal((2, 3, 4))).astype(np.float32)
    scales = np.array([0.05, 0.1, 0.02], dtype=np.float32)
    zeros = np.array([128, 100, 0], dtype=np.uint8)
    expected = quantize(image, scales[None, :, None], zeros[None, :, None].astype(np.float32),
                        0, 255).astype(np.uint8)
    yield ("sy_quantize_per_axis_uint8",
           model("quantize_axis", [node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)],
                 [("x", F, [2, 3, 4])], [("y", U8, [2, 3, 4])],
                 [const("s", scales), const("z", zeros)]),
           [([image], [expected])])
    levels = rng.integers(-128, 128, (2, 5)).astype(np.int8)
    block_scales = np.array([[0.5, 0.25, 2.0], [1.0, 0.125, 4.0]], dtype=np.float32)
    block_zeros = np.array([[0, 3, -2], [1, 0, 5]], dtype=np.int8)
    picks = np.arange(5) // 2
    dequantized = ((levels.astype(np.float32) - block_zeros[:, picks]) *
                   block_scales[:, picks]).astype(np.float32)
    yield ("sy_opset21_dequantize_blocked",
           model("dequantize_blocked", [node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=1,
                                             block_size=2)],
                 [("x", I8, [2, 5])], [("y", F, [2, 5])],
                 [const("s", block_scales), const("z", block_zeros)], opset=21),
           [([levels], [dequantized])])
    values = (8 * rng.standard_normal((2, 5))).astype(np.float32)
    yield ("sy_opset21_quantize_blocked",
           model("quantize_blocked", [node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1,
                                           block_size=2)],
                 [("x", F, [2, 5])], [("y", I8, [2, 5])],
                 [const("s", block_scales), const("z", block_zeros)], opset=21),
           [([values], [quantize(values, block_scales[:, picks], block_zeros[:, picks],
                                 -128, 127).astype(np.int8)])])
    # A scalar scale with a zero point of shape [1]: one value each.
    small = np.array([-3, 0, 7, 100], dtype=np.int8)
    yield ("sy_dequantize_scalar_scale_zero_point_of_one",
           model("dequantize_one", [node("DequantizeLinear", ["x", "s", "z"], ["y"])],
                 [("x", I8, [4])], [("y", F, [4])],
                 [const("s", np.float32(0.5)), const("z", np.array([2], dtype=np.int8))]),
           [([small], [((small.astype(np.float32) - 2) * 0.5).astype(np.float32)])])
    bias = np.array([-70000, 12, 3 * 2**20], dtype=np.int32)
    yield ("sy_dequantize_int32_bias",
           model("dequantize_int32", [node("DequantizeLinear", ["b", "s"], ["y"])],
                 [("b", TensorProto.INT32, [3])], [("y", F, [3])], [const("s", np.float32(0.001))]),
           [([bias], [(bias.astype(np.float32) * np.float32(0.001)).astype(np.float32)])])
    # x -> Q/DQ (int8, scale 0.05) -> MatMul with DQ(int8 W, a scale per column) -> Q/DQ (uint8,
    # zero point 128).
    x = rng.standard_normal((3, 6)).astype(np.float32)
    w_levels = rng.integers(-127, 128, (6, 4)).astype(np.int8)
    w_scales = np.array([0.01, 0.02, 0.005, 0.04], dtype=np.float32)
    xq = quantize(x, 0.05, 0, -128, 127).astype(np.float32) * np.float32(0.05)
    product = xq @ (w_levels.astype(np.float32) * w_scales)
    y = (quantize(product, 0.02, 128, 0, 255) - 128).astype(np.float32) * np.float32(0.02)
    yield ("sy_qdq_matmul",
           model("qdq_matmul",
                 [node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
                  node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
                  node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=1),
                  node("MatMul", ["xd", "wd"], ["p"]),
                  node("QuantizeLinear", ["p", "ps", "pz"], ["pq"]),
                  node("DequantizeLinear", ["pq", "ps", "pz"], ["y"])],
                 [("x", F, [3, 6])], [("y", F, [3, 4])],
                 [const("xs", np.float32(0.05)), const("xz", np.int8(0)),
                  const("wq", w_levels), const("ws", w_scales),
                  const("wz", np.zeros(4, dtype=np.int8)),
                  const("ps", np.float32(0.02)), const("pz", np.uint8(128))]),
           [([x], [y.astype(np.float32)])])


def dynamic_quantize(x):
    """DynamicQuantizeLinear in float32 step by step as ONNX says (and ONNX Runtime computes)."""
    x = x.astype(np.float32)
    high, low = np.float32(max(0.0, x.max())), np.float32(min(0.0, x.min()))
    scale = np.float32((high - low) / np.float32(255)) if high != low else np.float32(1)
    zero = np.float32(np.clip(np.round(np.float32(-low) / scale), 0, 255))
    y = np.clip(np.round(x / scale) + zero, 0, 255).astype(np.uint8)
    return y, scale, np.uint8(zero)


def dynamic_quantize_cases(model, const):
    """DynamicQuantizeLinear with MatMulInteger as ONNX Runtime's quantize_dynamic writes a Linear
    layer (uint8 activations, int8 weights with a per-column zero point, the int32 product cast to
    float and scaled, then the bias), with 5000 terms (more than the 4096 summed exactly at once)
    and 300; and MatMulInteger alone with A's per-row zero point (which ONNX allows and ONNX
    Runtime refuses: numpy's values only), uint8 by uint8."""
    F, I8, U8, I32 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32
    node = helper.make_node
    rng = np.random.default_rng(23)
    for terms in (300, 5000):
        x = (2 * rng.standard_normal((3, terms)) + 0.5).astype(np.float32)
        w = rng.integers(-128, 128, (terms, 4)).astype(np.int8)
        w_zero = np.array([0, 3, -5, 127], dtype=np.int8)
        w_scale = np.float32(0.01)
        bias = rng.standard_normal(4).astype(np.float32)
        xq, x_scale, x_zero = dynamic_quantize(x)
        acc = (xq.astype(np.int64) - int(x_zero)) @ (w.astype(np.int64) - w_zero.astype(np.int64))
        y = (acc.astype(np.float32) * np.float32(x_scale * w_scale) + bias).astype(np.float32)
        yield (f"sy_dynamic_quantize_matmul_integer_{terms}_terms",
               model("dynamic_quant", [
                   node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
                   node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
                   node("Cast", ["acc"], ["accf"], to=F),
                   node("Mul", ["xs", "ws"], ["s"]),
                   node("Mul", ["accf", "s"], ["scaled"]),
                   node("Add", ["scaled", "b"], ["y"])],
                     [("x", F, [3, terms])], [("y", F, [3, 4]), ("xq", U8, [3, terms])],
                     [const("w", w), const("wz", w_zero), const("ws", w_scale),
                      const("b", bias)], opset=13),
               [([x], [y, xq])])
    a = rng.integers(0, 256, (2, 3, 5)).astype(np.uint8)
    b = rng.integers(0, 256, (5, 2)).astype(np.uint8)
    a_zero = np.array([10, 200, 0], dtype=np.uint8)
    acc = (a.astype(np.int64) - a_zero[:, None]) @ (b.astype(np.int64) - 7)
    yield ("sy_matmul_integer_per_row_zero_point",
           model("matmul_integer", [node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
                 [("a", U8, [2, 3, 5])], [("y", I32, [2, 3, 2])],
                 [const("b", b), const("az", a_zero), const("bz", np.uint8(7))]),
           [([a], [acc.astype(np.int32)])])
    yield from conv_integer_cases(model, const)
    edges = np.array([-2.5, 2.5, 0.1, 1.0, 0.0, 127.5], dtype=np.float32)
    yq, ys, yz = dynamic_quantize(edges)
    yield ("sy_dynamic_quantize_zero_point_ties",
           model("dynamic_quant_ties", [node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
                 [("x", F, [6])], [("y", U8, [6]), ("s", F, []), ("z", U8, [])]),
           [([edges], [yq, np.array(ys, np.float32), np.array(yz, np.uint8)])])


def grid_sample(x, grid, mode, padding, align):
    """GridSample as ONNX Runtime computes it, in float32, one output element at a time (4-D;
    bilinear, nearest or bicubic; zeros, border or reflection). A NaN coordinate counts as far
    outside, and its output element is NaN (switchyard's reading; ONNX Runtime's is undefined)."""
    f = np.float32
    n_, c_, h, w = x.shape
    _, ho, wo, _ = grid.shape
    lo_x, hi_x = (f(0), f(w - 1)) if align else (f(-0.5), f(w - 0.5))
    lo_y, hi_y = (f(0), f(h - 1)) if align else (f(-0.5), f(h - 0.5))

    def denorm(v, size):
        v = (f(v) + f(1)) / f(2) * f(size - 1) if align else ((f(v) + f(1)) * f(size) - f(1)) / f(2)
        return f(-2.0 ** 21) if np.isnan(v) else f(np.clip(v, -2.0 ** 21, 2.0 ** 21))

    def reflect(v, lo, hi):
        rng = f(hi - lo)
        if rng <= 0:
            return lo
        if v < lo:
            d = f(lo - v)
            k = int(np.floor(d / rng))
            r = f(d - f(k) * rng)
            return f(lo + r) if k % 2 == 0 else f(hi - r)
        if v > hi:
            d = f(v - hi)
            k = int(np.floor(d / rng))
            r = f(d - f(k) * rng)
            return f(hi - r) if k % 2 == 0 else f(lo + r)
        return v

    def pixel(plane, r, col):
        if padding == "zeros":
            return plane[r, col] if 0 <= r < h and 0 <= col < w else f(0)
        if padding == "border":
            return plane[min(max(r, 0), h - 1), min(max(col, 0), w - 1)]
        r = int(np.round(reflect(f(r), lo_y, hi_y)))
        col = int(np.round(reflect(f(col), lo_x, hi_x)))
        return plane[min(max(r, 0), h - 1), min(max(col, 0), w - 1)]

    def cubic(t):  # float32 throughout: a and t are, the other operands Python numbers
        a = f(-0.75)
        t1, u, u1 = f(t + 1), f(1 - t), f(2 - t)
        return [f(((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a),
                f(((a + 2) * t - (a + 3)) * t * t + 1),
                f(((a + 2) * u - (a + 3)) * u * u + 1),
                f(((a * u1 - 5 * a) * u1 + 8 * a) * u1 - 4 * a)]

    y = np.zeros((n_, c_, ho, wo), dtype=np.float32)
    for n in range(n_):
        for i in range(ho):
            for j in range(wo):
                gx, gy = denorm(grid[n, i, j, 0], w), denorm(grid[n, i, j, 1], h)
                if mode == "nearest":
                    gx, gy = f(np.round(gx)), f(np.round(gy))
                if padding != "zeros" and mode != "bicubic" and (
                        gx < lo_x or gx > hi_x or gy < lo_y or gy > hi_y):
                    if padding == "border":
                        gx, gy = f(np.clip(gx, 0, w - 1)), f(np.clip(gy, 0, h - 1))
                    else:
                        gx, gy = reflect(gx, lo_x, hi_x), reflect(gy, lo_y, hi_y)
                for ch in range(c_):
                    plane = x[n, ch]
                    if np.isnan(grid[n, i, j]).any():
                        y[n, ch, i, j] = np.nan
                    elif mode == "nearest":
                        y[n, ch, i, j] = pixel(plane, int(gy), int(gx))
                    elif mode == "bilinear":
                        x1, y1 = int(np.floor(gx)), int(np.floor(gy))
                        dx2, dx1 = f(f(x1 + 1) - gx), f(gx - f(x1))
                        dy2, dy1 = f(f(y1 + 1) - gy), f(gy - f(y1))
                        top = f(dx2 * pixel(plane, y1, x1)) + f(dx1 * pixel(plane, y1, x1 + 1))
                        bottom = f(dx2 * pixel(plane, y1 + 1, x1)) + f(dx1 * pixel(plane, y1 + 1,
                                                                                    x1 + 1))
                        y[n, ch, i, j] = f(dy2 * top) + f(dy1 * bottom)
                    else:
                        x0, y0 = int(np.floor(gx)) - 1, int(np.floor(gy)) - 1
                        wx, wy = cubic(f(gx - f(x0) - f(1))), cubic(f(gy - f(y0) - f(1)))
                        rows = []
                        for r in range(4):
                            acc = f(0)
                            for k in range(4):
                                acc = f(acc + f(wx[k] * pixel(plane, y0 + r, x0 + k)))
                            rows.append(acc)
                        acc = f(0)
                        for r in range(4):
                            acc = f(acc + f(wy[r] * rows[r]))
                        y[n, ch, i, j] = acc
    return y


def grid_sample_cases(model):
    """GridSample beyond ONNX's data: grids reaching far outside the input (several reflections),
    nearest's ties, bicubic with align_corners and with border or reflection padding (each tap
    padded, the coordinate kept), a 1e30 and a NaN coordinate (NaN out, as PyTorch; ONNX
    Runtime's result is undefined there)."""
    F = TensorProto.FLOAT
    node = helper.make_node
    rng = np.random.default_rng(31)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    far = rng.uniform(-4.0, 4.0, (2, 3, 6, 2)).astype(np.float32)
    ties = (np.array([-1.0, -0.6, -0.2, 0.2, 0.6, 1.0, 1.4, -1.4], dtype=np.float32)
            .reshape(1, 2, 4, 1).repeat(2, axis=0).repeat(2, axis=3))
    ties[..., 1] = ties[..., 1][:, ::-1]
    for name, grid, mode, padding, align in (
            ("reflection_far_outside_align_corners", far, "bilinear", "reflection", 1),
            ("reflection_far_outside", far, "bilinear", "reflection", 0),
            ("border_far_outside_nearest_ties", ties, "nearest", "border", 0),
            ("reflection_nearest_ties", ties, "nearest", "reflection", 1),
            ("bicubic_align_corners_outside", far / 2, "bicubic", "zeros", 1)):
        y = grid_sample(x, grid, mode, padding, align)
        yield ("sy_gridsample_" + name,
               model("gridsample", [node("GridSample", ["x", "g"], ["y"], mode=mode,
                                         padding_mode=padding, align_corners=align)],
                     [("x", F, list(x.shape)), ("g", F, list(grid.shape))],
                     [("y", F, list(y.shape))], opset=16),
               [([x, grid], [y])])
    odd = far.copy()
    odd[0, 0, 0] = [1e30, 0.0]
    odd[1, 2, 5] = [np.nan, 0.5]
    yield ("sy_gridsample_huge_and_nan_coordinates",
           model("gridsample", [node("GridSample", ["x", "g"], ["y"])],
                 [("x", F, list(x.shape)), ("g", F, list(odd.shape))],
                 [("y", F, [2, 3, 3, 6])], opset=16),
           [([x, odd], [grid_sample(x, odd, "bilinear", "zeros", 0)])])
    for padding, align in (("border", 0), ("reflection", 1)):
        yield (f"sy_gridsample_bicubic_{padding}",
               model("gridsample", [node("GridSample", ["x", "g"], ["y"], mode="bicubic",
                                         padding_mode=padding, align_corners=align)],
                     [("x", F, list(x.shape)), ("g", F, list(far.shape))],
                     [("y", F, [2, 3, 3, 6])], opset=16),
               [([x, far], [grid_sample(x, far, "bicubic", padding, align)])])


def conv_integer(x, w, x_zero, w_zero, strides, pads, dilations, group):
    """ConvInteger in numpy, exactly (int32): a 1-D or 2-D conv3d of the centred operands, the
    padding counting as x's zero point. pads as ONNX writes them (begins, then ends)."""
    spatial = x.ndim - 2
    lift = (slice(None), slice(None)) + (None,) * (3 - spatial)
    xc = (x.astype(np.int64) - np.int64(x_zero))[lift]
    wc = (w.astype(np.int64) - np.asarray(w_zero, np.int64).reshape((-1,) + (1,) * (w.ndim - 1)))
    wc = wc[lift]
    fill = [1] * (3 - spatial)
    pads3 = [0] * (3 - spatial) + list(pads[:spatial]) + [0] * (3 - spatial) + list(pads[spatial:])
    y = conv3d(xc, wc, None, fill + list(strides), pads3, fill + list(dilations), group,
               dtype=np.float64)
    return y.reshape(y.shape[:2] + y.shape[2 + 3 - spatial:]).astype(np.int32)


def conv_integer_cases(model, const):
    """ConvInteger: as ONNX Runtime's quantize_dynamic writes a Conv (DynamicQuantizeLinear's uint8
    activations, uint8 weights with their zero point, the int32 sums cast to float and scaled,
    then the bias); 2 groups of 600 channels by 3x3 taps (5400 terms, more than the 4096 summed
    exactly at once; the sums stay below 2^24, where the int32 result is exact) with stride 2 and
    pads; 1-D int8 with dilations and uneven pads; a per-channel w_zero_point without x's (which
    ONNX allows and ONNX Runtime 1.30 refuses: numpy's values only)."""
    F, I8, U8, I32 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32
    node = helper.make_node
    rng = np.random.default_rng(29)
    x = (1.5 * rng.standard_normal((1, 3, 7, 7)) + 0.3).astype(np.float32)
    w = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
    w_zero, w_scale = np.uint8(131), np.float32(0.02)
    bias = rng.standard_normal(4).astype(np.float32)
    xq, x_scale, x_zero = dynamic_quantize(x)
    acc = conv_integer(xq, w, x_zero, w_zero, [1, 1], [1, 1, 1, 1], [1, 1], 1)
    y = (acc.astype(np.float32) * np.float32(x_scale * w_scale)
         + bias.reshape(1, 4, 1, 1)).astype(np.float32)
    yield ("sy_dynamic_quantize_conv_integer",
           model("dynamic_quant_conv", [
               node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
               node("ConvInteger", ["xq", "w", "xz", "wz"], ["acc"], pads=[1, 1, 1, 1]),
               node("Cast", ["acc"], ["accf"], to=F),
               node("Mul", ["xs", "ws"], ["s"]),
               node("Mul", ["accf", "s"], ["scaled"]),
               node("Add", ["scaled", "b"], ["y"])],
                 [("x", F, [1, 3, 7, 7])], [("y", F, [1, 4, 7, 7])],
                 [const("w", w), const("wz", w_zero), const("ws", w_scale),
                  const("b", bias.reshape(4, 1, 1))], opset=13),
           [([x], [y])])
    x = rng.integers(0, 256, (1, 1200, 5, 5)).astype(np.uint8)
    w = rng.integers(0, 256, (4, 600, 3, 3)).astype(np.uint8)
    acc = conv_integer(x, w, 120, 131, [2, 2], [1, 0, 1, 0], [1, 1], 2)
    yield ("sy_conv_integer_groups_5400_terms",
           model("conv_integer_groups", [
               node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], group=2, strides=[2, 2],
                    pads=[1, 0, 1, 0])],
                 [("x", U8, [1, 1200, 5, 5])], [("y", I32, list(acc.shape))],
                 [const("w", w), const("xz", np.uint8(120)), const("wz", np.uint8(131))]),
           [([x], [acc])])
    x = rng.integers(-128, 128, (2, 3, 11)).astype(np.int8)
    w = rng.integers(-128, 128, (2, 3, 3)).astype(np.int8)
    acc = conv_integer(x, w, -3, 5, [1], [2, 1], [2], 1)
    yield ("sy_conv_integer_1d_dilations_uneven_pads",
           model("conv_integer_1d", [
               node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], dilations=[2], pads=[2, 1])],
                 [("x", I8, [2, 3, 11])], [("y", I32, list(acc.shape))],
                 [const("w", w), const("xz", np.int8(-3)), const("wz", np.int8(5))]),
           [([x], [acc])])
    w_zero = np.array([5, -7], dtype=np.int8)
    acc = conv_integer(x[:, :, :5], w, 0, w_zero, [1], [0, 0], [1], 1)
    yield ("sy_conv_integer_per_channel_zero_point",
           model("conv_integer_per_channel", [node("ConvInteger", ["x", "w", "", "wz"], ["y"])],
                 [("x", I8, [2, 3, 5])], [("y", I32, list(acc.shape))],
                 [const("w", w), const("wz", w_zero)]),
           [([x[:, :, :5]], [acc])])


def conv3d(x, w, b, strides, pads, dilations, group, dtype=np.float32):
    """A direct 3-D convolution in numpy (float64, returned as `dtype`): x [N, C, D, H, W], w [M,
    C / group, kD, kH, kW], pads [d0, h0, w0, d1, h1, w1]."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[k], pads[k + 3]) for k in range(3)])
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    kernel = w.shape[2:]
    out = [(x.shape[2 + k] - (kernel[k] - 1) * dilations[k] - 1) // strides[k] + 1
           for k in range(3)]
    y = np.zeros((n, m) + tuple(out))
    for o in range(m):
        g = o // (m // group)
        for taps in np.ndindex(*kernel):
            start = [taps[k] * dilations[k] for k in range(3)]
            window = x[:, g * cg:(g + 1) * cg,
                       start[0]:start[0] + (out[0] - 1) * strides[0] + 1:strides[0],
                       start[1]:start[1] + (out[1] - 1) * strides[1] + 1:strides[1],
                       start[2]:start[2] + (out[2] - 1) * strides[2] + 1:strides[2]]
            y[:, o] += np.tensordot(window, w[o, :, taps[0], taps[1], taps[2]], axes=([1], [0]))
        if b is not None:
            y[:, o] += b[o]
    return y.astype(dtype)


# Conv over three spatial axes (video models), against a direct numpy convolution: strides with a
# bias, dilation with groups and uneven depth pads, auto_pad SAME_UPPER with a stride.
def conv3d_cases(model, const):
    F = TensorProto.FLOAT
    rng = np.random.default_rng(13)
    cases = (
        ("strides_bias", (1, 3, 4, 6, 6), (4, 3, 3, 3, 3), dict(strides=[1, 2, 2],
                                                                pads=[1, 1, 1, 1, 1, 1]), True),
        ("dilation_groups_uneven_depth_pads", (2, 4, 5, 5, 4), (6, 2, 2, 3, 1),
         dict(dilations=[2, 1, 1], pads=[0, 1, 0, 1, 1, 0], group=2), False),
        ("same_upper_stride", (1, 2, 5, 5, 5), (3, 2, 3, 3, 3),
         dict(strides=[2, 2, 2], auto_pad="SAME_UPPER"), True),
    )
    for name, x_shape, w_shape, attrs, with_bias in cases:
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = (0.3 * rng.standard_normal(w_shape)).astype(np.float32)
        b = rng.standard_normal(w_shape[0]).astype(np.float32) if with_bias else None
        strides = attrs.get("strides", [1, 1, 1])
        dilations = attrs.get("dilations", [1, 1, 1])
        pads = attrs.get("pads", [0] * 6)
        if attrs.get("auto_pad") == "SAME_UPPER":
            pads = [0] * 6
            for k in range(3):
                out = -(-x_shape[2 + k] // strides[k])
                total = max((out - 1) * strides[k] + (w_shape[2 + k] - 1) * dilations[k] + 1 -
                            x_shape[2 + k], 0)
                pads[k], pads[k + 3] = total // 2, total - total // 2
        y = conv3d(x, w, b, strides, pads, dilations, attrs.get("group", 1))
        inputs = ["x", "w"] + (["b"] if with_bias else [])
        initializers = [const("w", w)] + ([const("b", b)] if with_bias else [])
        yield (f"sy_conv3d_{name}",
               model(f"conv3d_{name}", [helper.make_node("Conv", inputs, ["y"], **attrs)],
                     [("x", F, list(x_shape))], [("y", F, list(y.shape))], initializers),
               [([x], [y])])


def pool3d(x, kernel, strides, pads, max_pool, count_include_pad):
    """A direct 3-D max or average pool in numpy, pads [d0, h0, w0, d1, h1, w1], no ceil mode."""
    fill = -np.inf if max_pool else 0.0
    widths = [(0, 0), (0, 0)] + [(pads[k], pads[k + 3]) for k in range(3)]
    padded = np.pad(x.astype(np.float64), widths, constant_values=fill)
    mask = np.pad(np.ones(x.shape), widths)
    out = [(padded.shape[2 + k] - kernel[k]) // strides[k] + 1 for k in range(3)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for d, h, w in np.ndindex(*out):
        window = (slice(None), slice(None)) + tuple(
            slice(i * strides[k], i * strides[k] + kernel[k]) for k, i in enumerate((d, h, w)))
        if max_pool:
            y[:, :, d, h, w] = padded[window].max(axis=(2, 3, 4))
        else:
            count = (np.prod(kernel) if count_include_pad else mask[window].sum(axis=(2, 3, 4)))
            y[:, :, d, h, w] = padded[window].sum(axis=(2, 3, 4)) / count
    return y.astype(np.float32)


# MaxPool and AveragePool over three axes, against direct numpy pools: strides with uneven pads,
# and an average that leaves the pads out.
def pool3d_cases(model):
    F = TensorProto.FLOAT
    rng = np.random.default_rng(17)
    x = rng.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    for op, max_pool, include in (("MaxPool", True, 0), ("AveragePool", False, 0),
                                  ("AveragePool", False, 1)):
        kernel, strides, pads = [2, 3, 3], [2, 2, 1], [1, 1, 0, 0, 1, 1]
        y = pool3d(x, kernel, strides, pads, max_pool, include)
        attrs = dict(kernel_shape=kernel, strides=strides, pads=pads)
        if not max_pool:
            attrs["count_include_pad"] = include
        name = op.lower() + ("" if max_pool else f"_count_include_pad_{include}")
        yield (f"sy_{name}_3d_strides_uneven_pads",
               model(f"{name}_3d", [helper.make_node(op, ["x"], ["y"], **attrs)],
                     [("x", F, list(x.shape))], [("y", F, list(y.shape))]),
               [([x], [y])])


def linear_along(x, axis, out, sources):
    """ONNX's linear resize of one axis: each output blends the two elements around its source
    coordinate, indices clamped to the axis (the reference pads with the edge)."""
    n = x.shape[axis]
    low = np.floor(sources).astype(np.int64)
    ratio = (sources - low).astype(np.float32)
    a = np.take(x, np.clip(low, 0, n - 1), axis=axis)
    b = np.take(x, np.clip(low + 1, 0, n - 1), axis=axis)
    shape = [1] * x.ndim
    shape[axis] = out
    ratio = ratio.reshape(shape)
    return (a * (1 - ratio) + b * ratio).astype(np.float32)


# Cases for the op versions of opsets 7 to 12 (attributes that later became inputs, Softmax's 2-D
# form, Upsample and Resize-10) and 18 to 27 (axes as inputs, num_outputs, wrap, Resize's axes and
# aspect policy, max / min scatter, Gelu, Mish, GroupNormalization), each at its own opset; numpy's
# expected outputs.
def opset_cases(model, const):
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    node = helper.make_node
    rng = np.random.default_rng(11)
    grid = np.arange(12, dtype=np.float32).reshape(3, 4)
    yield ("sy_opset9_slice_attributes",
           model("slice1", [node("Slice", ["x"], ["y"], starts=[1, -3], ends=[3, 100],
                                 axes=[0, 1])],
                 [("x", F, [3, 4])], [("y", F, [2, 3])], opset=9),
           [([grid], [grid[1:3, -3:]])])
    scores = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], dtype=np.float32)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :2]
    yield ("sy_opset9_topk_k_attribute",
           model("topk1", [node("TopK", ["x"], ["v", "i"], k=2, axis=1)],
                 [("x", F, [2, 5])], [("v", F, [2, 2]), ("i", I64, [2, 2])], opset=9),
           [([scores], [np.take_along_axis(scores, order, axis=1), order.astype(np.int64)])])
    row = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32)
    yield ("sy_opset10_pad_attributes_reflect",
           model("pad2_reflect", [node("Pad", ["x"], ["y"], pads=[0, 2, 0, 1], mode="reflect")],
                 [("x", F, [2, 4])], [("y", F, [2, 7])], opset=10),
           [([row], [np.pad(row, ((0, 0), (2, 1)), mode="reflect")])])
    yield ("sy_opset10_pad_attributes_value",
           model("pad2_value", [node("Pad", ["x"], ["y"], pads=[1, 0, 0, 2], value=7.5)],
                 [("x", F, [2, 4])], [("y", F, [3, 6])], opset=10),
           [([row], [np.pad(row, ((1, 0), (0, 2)), constant_values=7.5)])])
    wave = np.array([-3, -1, 0, 0.5, 1.5, 4], dtype=np.float32)
    yield ("sy_opset10_clip_attributes",
           model("clip6", [node("Clip", ["x"], ["y"], min=-1.0, max=2.0)],
                 [("x", F, [6])], [("y", F, [6])], opset=10),
           [([wave], [np.clip(wave, -1, 2)])])
    yield ("sy_opset10_clip_max_attribute_only",
           model("clip6_max", [node("Clip", ["x"], ["y"], max=0.5)],
                 [("x", F, [6])], [("y", F, [6])], opset=10),
           [([wave], [np.minimum(wave, np.float32(0.5))])])
    six = np.arange(6, dtype=np.float32)
    yield ("sy_opset12_split_attribute",
           model("split11", [node("Split", ["x"], ["a", "b", "c"], split=[1, 2, 3])],
                 [("x", F, [6])], [("a", F, [1]), ("b", F, [2]), ("c", F, [3])], opset=12),
           [([six], [six[:1], six[1:3], six[3:]])])
    cube = rng.standard_normal((2, 3, 4)).astype(np.float32)
    flat = cube.reshape(2, 12)
    soft = (np.exp(flat - flat.max(axis=1, keepdims=True)))
    soft = (soft / soft.sum(axis=1, keepdims=True)).reshape(2, 3, 4).astype(np.float32)
    yield ("sy_opset11_softmax_rows_from_axis",
           model("softmax11", [node("Softmax", ["x"], ["y"], axis=1)],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4])], opset=11),
           [([cube], [soft])])
    yield ("sy_opset12_logsoftmax_default_axis_1",
           model("logsoftmax11", [node("LogSoftmax", ["x"], ["y"])],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4])], opset=12),
           [([cube], [np.log(soft).astype(np.float32)])])
    counts = np.array([[1, 0, 1], [0, 2, 1]], dtype=np.float32)
    yield ("sy_opset12_reduce_sum_axes_attribute",
           model("reduce_sum11", [node("ReduceSum", ["x"], ["y"], axes=[0], keepdims=0)],
                 [("x", F, [2, 3])], [("y", F, [3])], opset=12),
           [([counts], [counts.sum(axis=0)])])
    small = np.array([[[[1, 2], [3, 4]]]], dtype=np.float32)
    yield ("sy_opset7_upsample_scales_attribute",
           model("upsample7", [node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 3.0])],
                 [("x", F, [1, 1, 2, 2])], [("y", F, [1, 1, 4, 6])], opset=7),
           [([small], [np.repeat(np.repeat(small, 2, axis=2), 3, axis=3)])])
    image = rng.standard_normal((1, 1, 2, 3)).astype(np.float32)
    up = linear_along(linear_along(image, 2, 4, np.arange(4) / 2.0), 3, 6, np.arange(6) / 2.0)
    yield ("sy_opset9_upsample_linear_asymmetric",
           model("upsample9", [node("Upsample", ["x", "s"], ["y"], mode="linear")],
                 [("x", F, [1, 1, 2, 3])], [("y", F, [1, 1, 4, 6])],
                 [const("s", np.array([1, 1, 2, 2], dtype=np.float32))], opset=9),
           [([image], [up])])
    # Resize-10 resizes as Upsample: asymmetric coordinates, nearest rounding down (ONNX Runtime
    # and PyTorch agree when upscaling; downscaling, where they do not, is refused).
    tall = np.arange(20, dtype=np.float32).reshape(1, 1, 5, 4)
    rows_at = np.floor(np.arange(10) / 2.0).astype(np.int64)
    cols_at = np.floor(np.arange(6) / 1.5).astype(np.int64)
    yield ("sy_opset10_resize_scales_nearest_floor",
           model("resize10", [node("Resize", ["x", "s"], ["y"], mode="nearest")],
                 [("x", F, [1, 1, 5, 4])], [("y", F, [1, 1, 10, 6])],
                 [const("s", np.array([1, 1, 2, 1.5], dtype=np.float32))], opset=10),
           [([tall], [tall[:, :, rows_at][:, :, :, cols_at]])])
    yield ("sy_opset10_resize_nearest_downscale_refused",
           model("resize10_down", [node("Resize", ["x", "s"], ["y"], mode="nearest")],
                 [("x", F, [1, 1, 5, 4])], [("y", F, [1, 1, 3, 4])],
                 [const("s", np.array([1, 1, 0.6, 1], dtype=np.float32))], opset=10),
           [([tall], [tall[:, :, [0, 1, 3]]])])
    # Dropout-7's mask in inference is not defined by ONNX (ONNX Runtime writes zeros); switchyard
    # gives what later versions define, all kept (ones), in the input's type.
    yield ("sy_opset7_dropout_mask_has_the_input_type",
           model("dropout7", [node("Dropout", ["x"], ["y", "mask"], ratio=0.3)],
                 [("x", F, [6])], [("y", F, [6]), ("mask", F, [6])], opset=7),
           [([wave], [wave, np.ones(6, dtype=np.float32)])])
    data = np.zeros((3, 3), dtype=np.float32)
    where = np.array([[1, 0, 2], [0, 2, 1]], dtype=np.int64)
    updates = np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], dtype=np.float32)
    scattered = data.copy()
    np.put_along_axis(scattered, where, updates, axis=0)
    yield ("sy_opset9_scatter",
           model("scatter9", [node("Scatter", ["x", "i", "u"], ["y"], axis=0)],
                 [("x", F, [3, 3]), ("i", I64, [2, 3]), ("u", F, [2, 3])], [("y", F, [3, 3])],
                 opset=9),
           [([data, where, updates], [scattered])])
    # Opsets 18 to 27.
    yield ("sy_opset18_reduce_mean_axes_input",
           model("reduce_mean18", [node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 4])],
                 [const("axes", np.array([1], dtype=np.int64))], opset=18),
           [([cube], [cube.mean(axis=1)])])
    yield ("sy_opset18_reduce_max_negative_axis_input",
           model("reduce_max18", [node("ReduceMax", ["x", "axes"], ["y"])],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 3, 1])],
                 [const("axes", np.array([-1], dtype=np.int64))], opset=18),
           [([cube], [cube.max(axis=-1, keepdims=True)])])
    yield ("sy_opset18_reduce_sum_square_noop_squares",
           model("reduce_ss18", [node("ReduceSumSquare", ["x"], ["y"], noop_with_empty_axes=1)],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4])], opset=18),
           [([cube], [cube * cube])])
    yield ("sy_opset18_reduce_l2_all_axes",
           model("reduce_l2_18", [node("ReduceL2", ["x"], ["y"])],
                 [("x", F, [2, 3, 4])], [("y", F, [1, 1, 1])], opset=18),
           [([cube], [np.sqrt((cube * cube).sum(keepdims=True)).astype(np.float32)])])
    seven = np.arange(7, dtype=np.float32)
    yield ("sy_opset18_split_num_outputs",
           model("split18", [node("Split", ["x"], ["a", "b", "c"], num_outputs=3)],
                 [("x", F, [7])], [("a", F, [3]), ("b", F, [3]), ("c", F, [1])], opset=18),
           [([seven], [seven[:3], seven[3:6], seven[6:]])])
    yield ("sy_opset18_pad_axes_input",
           model("pad18", [node("Pad", ["x", "p", "v", "axes"], ["y"])],
                 [("x", F, [2, 3, 4])], [("y", F, [2, 3, 7])],
                 [const("p", np.array([1, 2], dtype=np.int64)), const("v", np.float32(5)),
                  const("axes", np.array([-1], dtype=np.int64))], opset=18),
           [([cube], [np.pad(cube, ((0, 0), (0, 0), (1, 2)), constant_values=5)])])
    yield ("sy_opset19_pad_wrap",
           model("pad19", [node("Pad", ["x", "p"], ["y"], mode="wrap")],
                 [("x", F, [2, 4])], [("y", F, [2, 7])],
                 [const("p", np.array([0, 2, 0, 1], dtype=np.int64))], opset=19),
           [([row], [np.pad(row, ((0, 0), (2, 1)), mode="wrap")])])
    picture = rng.standard_normal((1, 2, 4, 6)).astype(np.float32)
    half = linear_along(picture, 2, 2, (np.arange(2) + 0.5) / 0.5 - 0.5)
    half = linear_along(half, 3, 9, (np.arange(9) + 0.5) / 1.5 - 0.5)
    yield ("sy_opset18_resize_axes_linear",
           model("resize18_axes", [node("Resize", ["x", "", "s"], ["y"], mode="linear",
                                        axes=[2, 3])],
                 [("x", F, [1, 2, 4, 6])], [("y", F, [1, 2, 2, 9])],
                 [const("s", np.array([0.5, 1.5], dtype=np.float32))], opset=18),
           [([picture], [half])])
    board = np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6)
    scale = min(5 / 4, 5 / 6)
    lengths = [int(scale * 4 + 0.5), int(scale * 6 + 0.5)]

    def nearest_half_pixel(out, n):
        source = (np.arange(out) + 0.5) / scale - 0.5
        rounded = np.where(source == np.floor(source) + 0.5, np.floor(source), np.round(source))
        return np.clip(rounded, 0, n - 1).astype(np.int64)

    kept = board[:, :, nearest_half_pixel(lengths[0], 4)][:, :, :, nearest_half_pixel(lengths[1], 6)]
    yield ("sy_opset18_resize_keep_aspect_not_larger",
           model("resize18_aspect", [node("Resize", ["x", "", "", "sizes"], ["y"],
                                          axes=[2, 3], keep_aspect_ratio_policy="not_larger")],
                 [("x", F, [1, 1, 4, 6])], [("y", F, [1, 1] + lengths)],
                 [const("sizes", np.array([5, 5], dtype=np.int64))], opset=18),
           [([board], [kept])])
    line = rng.standard_normal((1, 1, 1, 5)).astype(np.float32)
    out = 3  # floor(5 * 0.7)
    offset = 5 / 2 * (1 - out / (5 * 0.7))
    yield ("sy_opset19_resize_half_pixel_symmetric",
           model("resize19", [node("Resize", ["x", "", "s"], ["y"], mode="linear",
                                   coordinate_transformation_mode="half_pixel_symmetric")],
                 [("x", F, [1, 1, 1, 5])], [("y", F, [1, 1, 1, out])],
                 [const("s", np.array([1, 1, 1, 0.7], dtype=np.float32))], opset=19),
           [([line], [linear_along(line, 3, out, offset + (np.arange(out) + 0.5) / 0.7 - 0.5)])])
    base = np.array([[1, 2, 3, 4, 5]], dtype=np.float32)
    yield ("sy_opset18_scatter_elements_max",
           model("scatter_max18", [node("ScatterElements", ["x", "i", "u"], ["y"], axis=1,
                                        reduction="max")],
                 [("x", F, [1, 5]), ("i", I64, [1, 3]), ("u", F, [1, 3])], [("y", F, [1, 5])],
                 opset=18),
           [([base, np.array([[1, 1, 3]], dtype=np.int64),
              np.array([[1.1, 2.1, 0.5]], dtype=np.float32)],
             [np.array([[1, 2.1, 3, 4, 5]], dtype=np.float32)])])
    yield ("sy_opset18_scatter_nd_min",
           model("scatter_nd_min18", [node("ScatterND", ["x", "i", "u"], ["y"], reduction="min")],
                 [("x", F, [4]), ("i", I64, [3, 1]), ("u", F, [3])], [("y", F, [4])], opset=18),
           [([np.array([1, 2, 3, 4], dtype=np.float32), np.array([[0], [2], [0]], dtype=np.int64),
              np.array([0.5, 5, -1], dtype=np.float32)],
             [np.array([-1, 2, 3, 4], dtype=np.float32)])])
    span = np.linspace(-6, 6, 25).astype(np.float32)
    erf = np.vectorize(math.erf)
    yield ("sy_opset20_gelu",
           model("gelu20", [node("Gelu", ["x"], ["y"])], [("x", F, [25])], [("y", F, [25])],
                 opset=20),
           [([span], [(0.5 * span * (1 + erf(span / np.sqrt(2)))).astype(np.float32)])])
    cubic = span.astype(np.float64) ** 3
    tanh_gelu = 0.5 * span * (1 + np.tanh(np.sqrt(2 / np.pi) * (span + 0.044715 * cubic)))
    yield ("sy_opset20_gelu_tanh",
           model("gelu20_tanh", [node("Gelu", ["x"], ["y"], approximate="tanh")],
                 [("x", F, [25])], [("y", F, [25])], opset=20),
           [([span], [tanh_gelu.astype(np.float32)])])
    wide = np.linspace(-30, 30, 25).astype(np.float32)
    yield ("sy_opset18_mish",
           model("mish18", [node("Mish", ["x"], ["y"])], [("x", F, [25])], [("y", F, [25])],
                 opset=18),
           [([wide], [(wide * np.tanh(np.logaddexp(0, wide.astype(np.float64))))
                      .astype(np.float32)])])
    groups_in = rng.standard_normal((2, 4, 3)).astype(np.float32)
    grouped = groups_in.reshape(2, 2, 6)
    normed = ((grouped - grouped.mean(axis=2, keepdims=True)) /
              np.sqrt(grouped.var(axis=2, keepdims=True) + 1e-5)).reshape(2, 4, 3)
    per_channel = np.array([0.5, 1.0, 1.5, 2.0], dtype=np.float32)
    shift = np.array([0.1, -0.2, 0.3, 0.0], dtype=np.float32)
    yield ("sy_opset21_group_normalization",
           model("groupnorm21", [node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
                 [("x", F, [2, 4, 3])], [("y", F, [2, 4, 3])],
                 [const("s", per_channel), const("b", shift)], opset=21),
           [([groups_in], [(normed * per_channel[:, None] + shift[:, None]).astype(np.float32)])])
    per_group = np.array([2.0, -1.0], dtype=np.float32)
    group_shift = np.array([0.5, 0.25], dtype=np.float32)
    yield ("sy_opset18_group_normalization_per_group",
           model("groupnorm18", [node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
                 [("x", F, [2, 4, 3])], [("y", F, [2, 4, 3])],
                 [const("s", per_group), const("b", group_shift)], opset=18),
           [([groups_in], [(normed * np.repeat(per_group, 2)[:, None] +
                            np.repeat(group_shift, 2)[:, None]).astype(np.float32)])])
    yield ("sy_opset27_range_and_relu",
           model("opset27", [node("Range", ["a", "b", "d"], ["r"]), node("Relu", ["r"], ["y"])],
                 [("a", F, []), ("b", F, []), ("d", F, [])], [("y", F, [5])], opset=27),
           [([np.float32(-2), np.float32(3), np.float32(1)],
             [np.maximum(np.arange(-2, 3, dtype=np.float32), 0)])])
    # An op that its opset does not have: refused, naming when ONNX added or removed it.
    yield ("sy_opset13_trilu_not_yet_refused",
           model("trilu13", [node("Trilu", ["x"], ["y"])], [("x", F, [3, 4])], [("y", F, [3, 4])],
                 opset=13),
           [([grid], [np.triu(grid)])])
    yield ("sy_opset10_upsample_removed_refused",
           model("upsample10", [node("Upsample", ["x", "s"], ["y"])],
                 [("x", F, [1, 1, 2, 2])], [("y", F, [1, 1, 4, 4])],
                 [const("s", np.array([1, 1, 2, 2], dtype=np.float32))], opset=10),
           [([small], [np.repeat(np.repeat(small, 2, axis=2), 2, axis=3)])])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--ops", default="", help="comma-separated op types; empty: every case")
    args = parser.parse_args()
    wanted = set(filter(None, args.ops.split(",")))

    marker = os.path.join(args.out, ".switchyard-node-suite")
    if os.path.isdir(args.out) and os.listdir(args.out) and not os.path.exists(marker):
        sys.exit(f"node_suite.py: {args.out} holds other files; give an empty or new folder")
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    open(marker, "w").close()
    written = converted = 0
    for case in collect_testcases(None):
        model = case.model
        if wanted and not {node.op_type for node in model.graph.node} <= wanted:
            continue
        folder = os.path.join(args.out, case.name)
        if os.path.exists(folder) or not all_tensors(model):
            continue  # a name generated twice keeps its first case
        opset = default_opset(model)
        if opset is not None and opset < MIN_OPSET:
            try:
                model = version_converter.convert_version(model, TARGET_OPSET)
                converted += 1
            except Exception:  # noqa: BLE001 - kept as written; the importer names the opset
                pass
        os.makedirs(folder)
        onnx.save(model, os.path.join(folder, "model.onnx"))
        with open(os.path.join(folder, "case.txt"), "w") as out:
            out.write(f"{case.rtol} {case.atol} {opset}\n")
        write_data_sets(folder, model, case.data_sets)
        written += 1
    for name, model, data_sets in extra_cases():
        folder = os.path.join(args.out, name)
        os.makedirs(folder)
        opset = default_opset(model)
        # Newer opsets are unknown to this onnx; a refused case is meant to be invalid.
        if opset <= onnx.defs.onnx_opset_version() and not name.endswith("_refused"):
            onnx.checker.check_model(model)
        onnx.save(model, os.path.join(folder, "model.onnx"))
        with open(os.path.join(folder, "case.txt"), "w") as out:
            out.write(f"1e-3 1e-7 {opset}\n")
        write_data_sets(folder, model, data_sets)
        written += 1
    print(f"{written} ONNX node test cases written to {args.out} "
          f"({converted} converted to opset {TARGET_OPSET}; onnx {onnx.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
