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

A case written for an opset below 13 (the importer reads 13 to 17) is converted to opset 17 with
onnx.version_converter, which keeps its meaning, so the op's semantics are still tested; one that
does not convert is written as it is (the importer refuses it, naming the opset). A case whose
inputs or outputs are not tensors (sequences, optionals) is left out.

Debian 12's python3-onnx is 1.12, whose generators use numpy aliases that numpy 1.24 removed
(np.float, np.int, np.bool, np.object); they are put back before the generators run. Run with
Debian's /usr/bin/python3.
"""
import argparse
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

MIN_OPSET = 13
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

    def model(name, nodes, inputs, outputs, initializers=()):
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(*i) for i in inputs],
                                  [helper.make_tensor_value_info(*o) for o in outputs],
                                  list(initializers))
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", TARGET_OPSET)])

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
    # rule) in 1-D, and a last window that would start in the trailing pad (refused).
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
    yield ("sy_maxpool_ceil_window_in_trailing_pad_refused",
           model("maxpool_ceil_pad", [node("MaxPool", ["x"], ["y"], kernel_shape=[2], strides=[2],
                                           pads=[0, 1], ceil_mode=1)],
                 [("x", F, [1, 1, 8])], [("y", F, [1, 1, 5])]),
           [([row], [np.zeros((1, 1, 5), np.float32)])])
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
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(folder, "model.onnx"))
        with open(os.path.join(folder, "case.txt"), "w") as out:
            out.write(f"1e-3 1e-7 {TARGET_OPSET}\n")
        write_data_sets(folder, model, data_sets)
        written += 1
    print(f"{written} ONNX node test cases written to {args.out} "
          f"({converted} converted to opset {TARGET_OPSET}; onnx {onnx.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
