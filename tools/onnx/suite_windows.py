"""The node suite's cases for what tools/onnx/differential.py found (tools/onnx/node_suite.py
yields them): Conv and ConvTranspose with pads that differ between the sides (tf2onnx writes
SAME padding at stride 2 so) and auto_pad's odd totals, Slice's backward clamping, fused node runs
whose one-element constants raise the result's rank, reductions of no elements, the pools
taken by taps (dilations, 3-D ceil_mode, LpPool) and LayerNormalization's broadcast Scale. Expected values
come from numpy (float64), and tools/onnx/check_ort.py checks them against ONNX Runtime.
"""
import math

import numpy as np
from onnx import TensorProto, helper

F = TensorProto.FLOAT


def conv_nd(x, w, b, strides, pads, dilations, group):
    """A direct convolution over any number of spatial axes (float64); pads [begins..., ends...]."""
    rank = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] +
               [(pads[k], pads[k + rank]) for k in range(rank)])
    m, cg = w.shape[:2]
    kernel = w.shape[2:]
    out = [(x.shape[2 + k] - (kernel[k] - 1) * dilations[k] - 1) // strides[k] + 1
           for k in range(rank)]
    y = np.zeros((x.shape[0], m) + tuple(out))
    for o in range(m):
        g = o // (m // group)
        for taps in np.ndindex(*kernel):
            window = x[(slice(None), slice(g * cg, (g + 1) * cg)) + tuple(
                slice(taps[k] * dilations[k],
                      taps[k] * dilations[k] + (out[k] - 1) * strides[k] + 1, strides[k])
                for k in range(rank))]
            y[:, o] += np.tensordot(window, w[(o, slice(None)) + taps], axes=([1], [0]))
        if b is not None:
            y[:, o] += b[o]
    return y.astype(np.float32)


def conv_transpose_nd(x, w, b, strides, pads, output_padding, group):
    """ConvTranspose (float64): each input element scatters its window, the full result (with
    output_padding at the end) is cropped by pads [begins..., ends...]."""
    rank = x.ndim - 2
    n, c = x.shape[:2]
    cg, mg = c // group, w.shape[1]  # w [C, M / group, k...]
    kernel = w.shape[2:]
    full = [(x.shape[2 + k] - 1) * strides[k] + kernel[k] + output_padding[k]
            for k in range(rank)]
    y = np.zeros((n, mg * group) + tuple(full))
    for ci in range(c):
        g = ci // cg
        for pos in np.ndindex(*x.shape[2:]):
            value = x[(slice(None), ci) + pos].astype(np.float64)
            for taps in np.ndindex(*kernel):
                at = tuple(pos[k] * strides[k] + taps[k] for k in range(rank))
                y[(slice(None), slice(g * mg, (g + 1) * mg)) + at] += \
                    value[:, None] * w[(ci, slice(None)) + taps]
    crop = tuple(slice(pads[k], full[k] - pads[k + rank]) for k in range(rank))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y += b.reshape((-1,) + (1,) * rank)
    return y.astype(np.float32)


def same_pads(in_shape, kernel, strides, lower):
    """auto_pad SAME_UPPER / SAME_LOWER for a Conv: the odd one at the end / at the start."""
    begins, ends = [], []
    for size, k, s in zip(in_shape, kernel, strides):
        total = max((-(-size // s) - 1) * s + k - size, 0)
        begin = total - total // 2 if lower else total // 2
        begins.append(begin)
        ends.append(total - begin)
    return begins + ends


def window_cases(model, const):
    rng = np.random.default_rng(29)
    convs = (
        # name, x, w, attributes: tf2onnx's SAME at stride 2, uneven 1-D and 3-D pads, odd totals
        ("uneven_pads_2d", (1, 2, 6, 5), (3, 2, 3, 3), dict(strides=[2, 2], pads=[0, 0, 1, 1])),
        ("uneven_pads_1d", (2, 3, 7), (2, 3, 3), dict(pads=[2, 0])),
        ("uneven_pads_3d", (1, 1, 3, 5, 4), (2, 1, 2, 3, 2), dict(pads=[1, 0, 2, 0, 1, 0],
                                                                strides=[1, 2, 1])),
        ("same_upper_odd_total", (1, 2, 6, 6), (2, 2, 3, 3), dict(strides=[2, 2],
                                                                auto_pad="SAME_UPPER")),
        ("same_lower_odd_total", (1, 2, 6, 7), (2, 2, 3, 2), dict(strides=[2, 2],
                                                                auto_pad="SAME_LOWER")),
    )
    for name, x_shape, w_shape, attrs in convs:
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = (0.5 * rng.standard_normal(w_shape)).astype(np.float32)
        b = rng.standard_normal(w_shape[0]).astype(np.float32)
        rank = len(x_shape) - 2
        strides = attrs.get("strides", [1] * rank)
        pads = attrs.get("pads")
        if "auto_pad" in attrs:
            pads = same_pads(x_shape[2:], w_shape[2:], strides, attrs["auto_pad"] == "SAME_LOWER")
        y = conv_nd(x, w, b, strides, pads, [1] * rank, 1)
        yield (f"sy_conv_{name}",
               model(f"conv_{name}", [helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)],
                     [("x", F, list(x_shape))], [("y", F, list(y.shape))],
                     [const("w", w), const("b", b)]),
               [([x], [y])])
    transposed = (
        ("uneven_pads", (1, 2, 3, 4), (2, 3, 3, 3), dict(strides=[2, 2], pads=[0, 1, 1, 0])),
        ("uneven_pads_output_padding_1d", (2, 2, 4), (2, 1, 3),
         dict(strides=[3], pads=[2, 0], output_padding=[1])),
        ("same_upper", (1, 1, 3, 3), (1, 2, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
        ("same_lower_groups", (1, 2, 3, 2), (2, 1, 3, 3),
         dict(strides=[2, 3], auto_pad="SAME_LOWER", group=2)),
        # SAME where the full output is shorter than in * stride (a kernel below the stride):
        # ONNX says in * stride, ONNX Runtime gives the full output. Refused.
        ("same_kernel_below_stride_refused", (1, 1, 3), (1, 1, 2),
         dict(strides=[3], auto_pad="SAME_UPPER")),
        # output_shape sets the pads (those given are ignored): a total of 3 crops 2 at the start
        # and 1 at the end; a longer output than the full one ends in zeros (plus the bias).
        ("output_shape_ignores_pads", (1, 1, 4), (1, 2, 3),
         dict(strides=[2], pads=[1, 1], output_shape=[6])),
        ("output_shape_beyond_the_full_output", (1, 1, 2, 4), (1, 1, 3, 3),
         dict(strides=[2, 2], output_shape=[6, 10])),
        ("output_shape_same_upper", (1, 1, 4), (1, 1, 3),
         dict(strides=[2], output_shape=[8], auto_pad="SAME_UPPER")),
    )
    for name, x_shape, w_shape, attrs in transposed:
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = (0.5 * rng.standard_normal(w_shape)).astype(np.float32)
        group = attrs.get("group", 1)
        b = rng.standard_normal(w_shape[1] * group).astype(np.float32)
        rank = len(x_shape) - 2
        strides = attrs.get("strides", [1] * rank)
        output_padding = attrs.get("output_padding", [0] * rank)
        pads = attrs.get("pads", [0] * 2 * rank)
        extend = [0] * rank
        if "auto_pad" in attrs or "output_shape" in attrs:
            # The pads from the output's length (in * stride for SAME): an odd total crops the
            # odd one at the end for SAME_UPPER, at the start otherwise; a negative total is 0
            # with zeros after the full output.
            wants = attrs.get("output_shape", [x_shape[2 + k] * strides[k] for k in range(rank)])
            totals = [(x_shape[2 + k] - 1) * strides[k] + w_shape[2 + k] + output_padding[k] -
                      wants[k] for k in range(rank)]
            extend = [max(0, -t) for t in totals]
            totals = [max(0, t) for t in totals]
            upper = attrs.get("auto_pad") == "SAME_UPPER"
            begins = [t // 2 if upper else t - t // 2 for t in totals]
            pads = begins + [t - bgn for t, bgn in zip(totals, begins)]
        y = conv_transpose_nd(x, w, None, strides, pads, output_padding, group)
        y = np.pad(y, [(0, 0), (0, 0)] + [(0, e) for e in extend])
        y = (y + b.reshape((-1,) + (1,) * rank)).astype(np.float32)
        yield (f"sy_convtranspose_{name}",
               model(f"convtranspose_{name}",
                     [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)],
                     [("x", F, list(x_shape))], [("y", F, list(y.shape))],
                     [const("w", w), const("b", b)]),
               [([x], [y])])
    yield from slice_cases(model, const)
    yield from lifted_rank_cases(model, const)
    yield from empty_reduction_cases(model, const)
    yield from tapped_pool_cases(model)
    yield from layer_norm_cases(model, const)


def layer_norm_cases(model, const):
    """LayerNormalization whose Scale and B broadcast to X without the normalized shape (ONNX's
    function body multiplies and adds them), with the Mean and InvStdDev outputs."""
    rng = np.random.default_rng(37)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale = rng.standard_normal((1, 4)).astype(np.float32)
    bias = rng.standard_normal((3, 1)).astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=(1, 2), keepdims=True)
    inv = 1.0 / np.sqrt(((x64 - mean) ** 2).mean(axis=(1, 2), keepdims=True) + 1e-3)
    y = (x64 - mean) * inv * scale + bias
    yield ("sy_layernorm_scale_and_bias_broadcast",
           model("layernorm_broadcast",
                 [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "m", "inv"],
                                   axis=1, epsilon=1e-3)],
                 [("x", F, [2, 3, 4])],
                 [("y", F, [2, 3, 4]), ("m", F, [2, 1, 1]), ("inv", F, [2, 1, 1])],
                 [const("s", scale), const("b", bias)]),
           [([x], [y.astype(np.float32), mean.astype(np.float32), inv.astype(np.float32)])])


def pool_nd(x, kind, kernel, strides, dilations, pads, ceil=False, include_pad=False, p=2):
    """MaxPool / AveragePool / LpPool over any number of spatial axes (float64), window by window:
    taps at j * stride - begin + t * dilation; padding never wins a maximum and adds nothing to a
    sum; an average divides by the taps on the input (and, with include_pad, on the declared pads).
    ceil_mode adds a last partial window only where it starts before the trailing pad."""
    rank = x.ndim - 2
    outs = []
    for k in range(rank):
        span = (kernel[k] - 1) * dilations[k] + 1
        room = x.shape[2 + k] + pads[k] + pads[k + rank] - span
        out = room // strides[k] + 1
        if ceil and room % strides[k] and out * strides[k] < x.shape[2 + k] + pads[k]:
            out += 1
        outs.append(out)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for j in np.ndindex(*outs):
        values, counted = [], 0
        for t in np.ndindex(*kernel):
            at = [j[k] * strides[k] - pads[k] + t[k] * dilations[k] for k in range(rank)]
            inside = all(0 <= at[k] < x.shape[2 + k] for k in range(rank))
            on_pads = all(-pads[k] <= at[k] < x.shape[2 + k] + pads[k + rank] for k in range(rank))
            counted += 1 if inside or (include_pad and on_pads) else 0
            if inside:
                values.append(x[(slice(None), slice(None)) + tuple(at)].astype(np.float64))
        stack = np.stack(values)
        if kind == "MaxPool":
            y[(slice(None), slice(None)) + j] = stack.max(axis=0)
        elif kind == "AveragePool":
            y[(slice(None), slice(None)) + j] = stack.sum(axis=0) / counted
        else:
            y[(slice(None), slice(None)) + j] = (np.abs(stack) ** p).sum(axis=0) ** (1.0 / p)
    return y.astype(np.float32)


def tapped_pool_cases(model):
    """Pools that the 2-D pool ops do not say, run one axis at a time by the kernel's taps:
    dilations (MaxPool since opset 10, AveragePool since 19), ceil_mode over three axes, and
    LpPool (p 3 with pads and strides; opset 18 adds ceil_mode and dilations)."""
    rng = np.random.default_rng(31)
    pools = (
        # name, op, x, attributes, opset
        ("maxpool_2d_dilations_ceil_pads", "MaxPool", (1, 2, 7, 8),
         dict(kernel_shape=[2, 3], dilations=[2, 1], strides=[1, 2], pads=[1, 0, 0, 1],
              ceil_mode=1), 17),
        # ONNX pads SAME for the dilated window (5 outputs here), ONNX Runtime for the undilated
        # one (3): refused, naming both.
        ("maxpool_1d_dilations_same_upper_refused", "MaxPool", (2, 1, 9),
         dict(kernel_shape=[3], dilations=[3], strides=[2], auto_pad="SAME_UPPER"), 17),
        ("averagepool_1d_dilations_exclude_pad", "AveragePool", (1, 3, 8),
         dict(kernel_shape=[3], dilations=[2], pads=[2, 1]), 19),
        ("averagepool_2d_dilations_include_pad", "AveragePool", (1, 1, 6, 5),
         dict(kernel_shape=[2, 2], dilations=[2, 3], pads=[1, 1, 0, 1], count_include_pad=1), 19),
        ("maxpool_3d_ceil_mode", "MaxPool", (1, 2, 3, 5, 4),
         dict(kernel_shape=[2, 2, 3], strides=[2, 2, 2], ceil_mode=1), 17),
        ("averagepool_3d_ceil_mode_include_pad", "AveragePool", (1, 1, 4, 3, 5),
         dict(kernel_shape=[3, 2, 2], strides=[2, 2, 2], pads=[1, 0, 0, 1, 0, 1], ceil_mode=1,
              count_include_pad=1), 17),
        ("lppool_2d_p3_pads_strides", "LpPool", (1, 2, 5, 6),
         dict(kernel_shape=[2, 3], strides=[2, 1], pads=[1, 0, 1, 1], p=3), 17),
        ("lppool_1d_default_p", "LpPool", (2, 3, 7), dict(kernel_shape=[3], strides=[2]), 17),
        ("lppool_3d_ceil_dilations", "LpPool", (1, 1, 3, 4, 5),
         dict(kernel_shape=[2, 2, 2], dilations=[1, 2, 1], strides=[2, 1, 2], ceil_mode=1), 18),
    )
    for name, op, x_shape, attrs, opset in pools:
        x = rng.standard_normal(x_shape).astype(np.float32)
        rank = len(x_shape) - 2
        kernel = attrs["kernel_shape"]
        strides = attrs.get("strides", [1] * rank)
        dilations = attrs.get("dilations", [1] * rank)
        pads = attrs.get("pads", [0] * 2 * rank)
        if "auto_pad" in attrs:
            spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
            pads = same_pads(x_shape[2:], spans, strides, attrs["auto_pad"] == "SAME_LOWER")
        y = pool_nd(x, op, kernel, strides, dilations, pads, attrs.get("ceil_mode", 0) == 1,
                    attrs.get("count_include_pad", 0) == 1, attrs.get("p", 2))
        yield (f"sy_{name}",
               model(name, [helper.make_node(op, ["x"], ["y"], **attrs)],
                     [("x", F, list(x_shape))], [("y", F, list(y.shape))], opset=opset),
               [([x], [y])])
    # A kernel of 2^20 taps on a dilated pool (an op a tap) is refused before anything runs.
    x = rng.standard_normal((1, 1, 5)).astype(np.float32)
    yield ("sy_maxpool_dilated_kernel_beyond_taps_refused",
           model("maxpool_taps", [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1 << 20],
                                                   dilations=[2], pads=[1 << 20, 1 << 20])],
                 [("x", F, [1, 1, 5])], [("y", F, [1, 1, 5])]),
           [([x], [x])])


def slice_cases(model, const):
    x = np.arange(21, dtype=np.float32).reshape(3, 7)

    def sliced(name, starts, ends, axes, steps, y):
        return (f"sy_slice_{name}",
                model(f"slice_{name}", [helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])],
                      [("x", F, [3, 7])], [("y", F, list(y.shape))],
                      [const("s", np.array(starts, np.int64)), const("e", np.array(ends, np.int64)),
                       const("a", np.array(axes, np.int64)), const("t", np.array(steps, np.int64))]),
                [([x], [y])])
    # A backward start before the first element is clamped to it (ONNX's rule, ONNX Runtime's
    # answer; numpy's x[-9::-2] would take nothing): column 0 only.
    yield sliced("backward_start_before_first", [-9], [-(2**63)], [1], [-2], x[:, :1])
    # Backward to the start with INT64_MIN, and a start past the end clamped to the last.
    yield sliced("backward_to_start", [9, 1], [-(2**63), -(2**63)], [1, 0], [-3, -1],
                 x[1::-1, 6::-3])
    # INT64_MAX as a backward end: ONNX's clamping takes nothing, ONNX Runtime slices to the start.
    yield sliced("backward_int64_max_end_refused", [5], [2**63 - 1], [1], [-1],
                 np.zeros((3, 0), np.float32))


def lifted_rank_cases(model, const):
    rng = np.random.default_rng(31)
    node = helper.make_node
    # Erf-based GELU whose constants are [1, 1, 1]: the unfused nodes broadcast x [4] up to
    # [1, 1, 4], and the fused gelu must give that shape too.
    x = rng.standard_normal(4).astype(np.float32)
    erf = np.vectorize(math.erf)
    gelu = (0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2))))
    yield ("sy_gelu_constants_raise_the_rank",
           model("gelu_lifted", [node("Div", ["x", "root2"], ["d"]), node("Erf", ["d"], ["e"]),
                                 node("Add", ["e", "one"], ["a"]), node("Mul", ["x", "a"], ["m"]),
                                 node("Mul", ["m", "half"], ["y"])],
                 [("x", F, [4])], [("y", F, [1, 1, 4])],
                 [const("root2", np.full([1, 1, 1], np.sqrt(2), np.float32)),
                  const("one", np.full([1], 1.0, np.float32)),
                  const("half", np.full([1, 1], 0.5, np.float32))]),
           [([x], [gelu.reshape(1, 1, 4).astype(np.float32)])])
    # Attention over q [3, 2], k^T [2, 4], v [4, 2] whose scale is a [1, 1, 1] constant: the
    # result is [1, 3, 2].
    q = rng.standard_normal((3, 2)).astype(np.float32)
    k_t = rng.standard_normal((2, 4)).astype(np.float32)
    v = rng.standard_normal((4, 2)).astype(np.float32)
    scores = (q.astype(np.float64) @ k_t) * 0.5
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    yield ("sy_attention_scale_raises_the_rank",
           model("attention_lifted", [node("MatMul", ["q", "k_t"], ["s"]),
                                      node("Mul", ["s", "c"], ["scaled"]),
                                      node("Softmax", ["scaled"], ["p"], axis=-1),
                                      node("MatMul", ["p", "v"], ["y"])],
                 [("q", F, [3, 2]), ("k_t", F, [2, 4]), ("v", F, [4, 2])],
                 [("y", F, [1, 3, 2])], [const("c", np.full([1, 1, 1], 0.5, np.float32))]),
           [([q, k_t, v], [(p @ v).reshape(1, 3, 2).astype(np.float32)])])
    # MatMul + Add of a vector [K] (fused into linear): [K] @ [K, N] + [N] is [N].
    w = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    xv = rng.standard_normal(3).astype(np.float32)
    yield ("sy_matmul_add_of_a_vector",
           model("linear_vector", [node("MatMul", ["x", "w"], ["p"]), node("Add", ["p", "b"], ["y"])],
                 [("x", F, [3])], [("y", F, [5])], [const("w", w), const("b", b)]),
           [([xv], [(xv.astype(np.float64) @ w + b).astype(np.float32)])])
    # Gemm with a constant B and a one-element C of [1], at 2 rows (onednn's dot-product path for
    # a few rows read C at a stride of 1, past its one element).
    a = rng.standard_normal((2, 4)).astype(np.float32)
    bt = rng.standard_normal((5, 4)).astype(np.float32)
    yield ("sy_gemm_one_element_bias",
           model("gemm_one_bias", [node("Gemm", ["a", "b", "c"], ["y"], transB=1)],
                 [("a", F, [2, 4])], [("y", F, [2, 5])],
                 [const("b", bt), const("c", np.array([0.75], np.float32))]),
           [([a], [(a.astype(np.float64) @ bt.T + 0.75).astype(np.float32)])])
    # A node that no output needs is not run (as ONNX Runtime prunes it): this MaxPool's window
    # is wider than its input and would be refused.
    xd = rng.standard_normal((1, 1, 4, 2)).astype(np.float32)
    yield ("sy_dead_node_is_not_run",
           model("dead_node", [node("MaxPool", ["x"], ["unused"], kernel_shape=[2, 3]),
                               node("Relu", ["x"], ["y"])],
                 [("x", F, [1, 1, 4, 2])], [("y", F, [1, 1, 4, 2])]),
           [([xd], [np.maximum(xd, 0)])])
    # A product over K = 0 is zeros, with a shared matrix ([2, 3, 0] @ [0, 4]).
    yield ("sy_matmul_empty_inner_axis",
           model("matmul_empty_k", [node("MatMul", ["x", "w"], ["y"])],
                 [("x", F, [2, 3, 0])], [("y", F, [2, 3, 4])],
                 [const("w", np.zeros((0, 4), np.float32))]),
           [([np.zeros((2, 3, 0), np.float32)], [np.zeros((2, 3, 4), np.float32)])])


def empty_reduction_cases(model, const):
    """Reductions over an axis of length 0 with a non-empty result: ONNX's values for an empty set
    (opset 18's text): 0 for the sums, 1 for the product, -inf for the maximum, LogSum and
    LogSumExp, +inf for the minimum, on every backend (vulkan refused to bind the empty input)."""
    x = np.zeros((2, 0, 3), np.float32)
    identities = (("ReduceSum", 0.0), ("ReduceSumSquare", 0.0), ("ReduceL1", 0.0),
                  ("ReduceL2", 0.0), ("ReduceProd", 1.0), ("ReduceMax", -np.inf),
                  ("ReduceMin", np.inf), ("ReduceLogSum", -np.inf), ("ReduceLogSumExp", -np.inf))
    nodes, outputs, expected = [], [], []
    for op, value in identities:
        inputs = ["x", "axes"] if op == "ReduceSum" else ["x"]
        attrs = {} if op == "ReduceSum" else {"axes": [1]}
        nodes.append(helper.make_node(op, inputs, [op.lower()], keepdims=1, **attrs))
        outputs.append((op.lower(), F, [2, 1, 3]))
        expected.append(np.full((2, 1, 3), value, np.float32))
    yield ("sy_reduce_empty_extent",
           model("reduce_empty", nodes, [("x", F, [2, 0, 3])], outputs,
                 [const("axes", np.array([1], np.int64))]),
           [([x], expected)])
    # The mean of no elements is 0 / 0: NaN, as numpy and PyTorch give (ONNX leaves it undefined;
    # ONNX Runtime gives NaN here, 0 where every axis is reduced).
    yield ("sy_reduce_mean_empty_extent_is_nan",
           model("reduce_mean_empty", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1])],
                 [("x", F, [2, 0, 3])], [("y", F, [2, 1, 3])]),
           [([x], [np.full((2, 1, 3), np.nan, np.float32)])])
