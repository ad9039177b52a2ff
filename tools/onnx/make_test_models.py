#!/usr/bin/python3
"""Small PyTorch models exported to ONNX, with reference inputs and outputs, for the ONNX importer's
tests (tests/onnx/models/<name>/).

    /usr/bin/python3 tools/onnx/make_test_models.py [--out DIR] [--only NAME[,NAME]]
    /usr/bin/python3 tools/onnx/make_test_models.py --verify [--out DIR] [--only NAME[,NAME]]

Each model is built in PyTorch with a fixed seed, put in eval mode, and exported with
torch.onnx.export(opset_version=17) with axis 0 of every input and output dynamic ('batch'). Its
folder holds model.onnx and two data sets in the layout of ONNX's own backend test data:
test_data_set_0 (batch 1) and test_data_set_1 (batch 7), each with input_<i>.pb and output_<i>.pb,
serialized onnx.TensorProto values named after the graph's inputs and outputs. The outputs are
PyTorch eager's outputs (float32) for those inputs.

Without --verify the folders are (re)written, every model is checked with
onnx.checker.check_model(full_check=True), and its size, opset and op types are printed.

--verify rebuilds every model with the same seeds and checks, without writing anything, that
  * the committed model.onnx passes onnx.checker (full check) and declares opset 17 (or the
    model's own, OPSETS);
  * every floating-point initializer equals, to 1e-7, the parameter or buffer it is named after,
    or else a tensor the exporter derives from the rebuilt model's parameters (a transposed
    weight, the LSTM/GRU W, R and B packs with ONNX's gate order), and every floating-point
    parameter and buffer is found that way (no re-export: exporter-made names do not matter);
  * PyTorch's outputs for the committed inputs equal the committed outputs within 1e-5.
It exits 1, naming the model and the largest difference, when any of that fails.

Models:
  mlp_gelu              [N,20] -> Linear 32 GELU Linear 32 GELU Linear 5 (exact GELU: Erf)
  cnn                   [N,3,12,12] -> conv3x3 BN ReLU, conv3x3 s2 p2 d2 g2 BN ReLU, MaxPool 2,
                        AvgPool 2 s1, Flatten, Linear 6 (BatchNormalization kept as a node)
  lstm2                 [N,5,6] -> 2-layer bidirectional LSTM(8) -> last step -> Linear 3
  gru                   [N,5,6] -> GRU(8) -> the whole output sequence [N,5,8]
  rnn                   [N,5,6] -> 2-layer bidirectional RNN(7, ReLU) -> RNN(5, tanh, no bias)
                        -> the whole output sequence [N,5,5] (ONNX RNN nodes)
  embedding_lstm        int64 [N,6] -> Embedding(20,8,padding_idx 0) -> LSTM(8) -> mean over
                        time -> Linear 4
  transformer2          [N,6,16] -> 2-layer TransformerEncoder (4 heads, ff 32, gelu,
                        batch_first, post-norm) -> mean over time -> Linear 3
  transformer_mask      the same with src_key_padding_mask (bool [N,6], True = padding) as a
                        second input, and a mean over the unpadded steps
  transformer_opset13   transformer2 exported at opset 13 (LayerNorm decomposed)
  image_ops             [N,3,8,8] -> ReflectionPad, conv, GroupNorm, Hardswish, MaxPool ceil_mode,
                        ConvTranspose, PReLU, bilinear Upsample, ReplicationPad, conv, PixelShuffle,
                        InstanceNorm2d, Hardsigmoid -> [N,2,20,20]
  transformer_opset9    transformer2 (another seed) exported at opset 9 (attribute forms)
  image_ops_opset11     image_ops (another seed) exported at opset 11
  module_functions      [N,8] -> two residual blocks (Linear, LeakyReLU 0.1 / 0.3, LayerNorm)
                        -> Linear 3 -> softmax, exported with export_modules_as_functions: the
                        blocks, LeakyReLU and LayerNorm are model-local functions
  fake_quant_opset13    [N,3,6,6] -> fake-quantized input, conv (weight fake-quantized per
                        channel), ReLU, fake-quantized activations, Linear 5: QuantizeLinear /
                        DequantizeLinear pairs at opset 13 (fake quantization needs 13 per channel)

Run with Debian's /usr/bin/python3 (python3-torch, python3-onnx).
"""

import argparse
import io
import os
import sys
import warnings

import numpy as np
import onnx
import onnx.checker
import onnx.numpy_helper
import torch
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO, "tests", "onnx", "models")
OPSET = 17
BATCHES = (1, 7)  # test_data_set_0, test_data_set_1
PARAMETER_TOLERANCE = 1e-7
OUTPUT_TOLERANCE = 1e-5

nn = torch.nn


# ---- the models ----------------------------------------------------------------------------------

class LastStepLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.lstm(x)[0][:, -1])


class GruSequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(6, 8, num_layers=1, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0]


class ReluTanhRnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.RNN(6, 7, num_layers=2, nonlinearity="relu", bidirectional=True,
                           batch_first=True)
        self.tanh = nn.RNN(14, 5, bias=False, batch_first=True)

    def forward(self, x):
        return self.tanh(self.relu(x)[0])[0]


class EmbeddingLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(20, 8, padding_idx=0)
        self.lstm = nn.LSTM(8, 8, num_layers=1, batch_first=True)
        self.head = nn.Linear(8, 4)

    def forward(self, tokens):
        return self.head(self.lstm(self.embedding(tokens))[0].mean(1))


class ResidualBlock(nn.Module):
    def __init__(self, width, slope):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = nn.LeakyReLU(slope)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + self.act(self.fc(x)))


class ModuleFunctions(nn.Module):
    """Exported with export_modules_as_functions: each ResidualBlock, LeakyReLU and LayerNorm is a
    model-local function, the blocks calling the other two, their slopes as call attributes."""
    def __init__(self):
        super().__init__()
        self.first = decorrelate(ResidualBlock(8, 0.1))
        self.second = decorrelate(ResidualBlock(8, 0.3))
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return torch.softmax(self.head(self.second(self.first(x))), -1)


class FakeQuantized(nn.Module):
    """Quantization-aware training's fake quantization, which torch.onnx.export writes as
    QuantizeLinear / DequantizeLinear pairs: the input per tensor (int8), the convolution's weight
    per output channel (int8), the activations per tensor (uint8)."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8 * 6 * 6, 5)
        self.register_buffer("weight_scale", torch.linspace(0.005, 0.02, 8))
        self.register_buffer("weight_zero", torch.zeros(8, dtype=torch.int32))

    def forward(self, x):
        x = torch.fake_quantize_per_tensor_affine(x, 0.02, 0, -128, 127)
        w = torch.fake_quantize_per_channel_affine(self.conv.weight, self.weight_scale,
                                                   self.weight_zero, 0, -128, 127)
        y = nn.functional.conv2d(x, w, self.conv.bias, padding=1).relu()
        y = torch.fake_quantize_per_tensor_affine(y, 0.05, 0, 0, 255)
        return self.head(y.flatten(1))


class ControlFlow(nn.Module):
    """torch.jit.script's control flow as torch.onnx.export writes it: a while loop whose count
    depends on the values (Loop with a condition and carried values), an if inside it on the values
    (If whose branches read the loop's values), and a for loop over the rows (Loop with a trip
    count from Shape, carried values indexed by the iteration number)."""
    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(8, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.zeros_like(x)
        steps = 0
        while steps < 6 and bool(h.abs().mean() < 0.4):  # 2 steps at batch 1, 6 at batch 7
            h = torch.tanh(self.cell(x + h))
            if bool(h.sum() > 0) and steps % 2 == 0:  # both branches in both data sets
                h = h * 0.5
            else:
                h = h - 0.25 * x
            steps += 1
        total = torch.zeros_like(h[0])
        for row in range(h.size(0)):
            total = total + h[row] * (row + 1)
        return self.head(h + total) + steps


class Detection(nn.Module):
    """A detection head's post-processing as torchvision.ops exports it (Faster R-CNN's and
    RetinaNet's): boxes and class scores from convolutions, batched_nms per image and class
    (NonMaxSuppression), the kept boxes' features by roi_align (RoiAlign) and their areas
    (ReduceProd). How many boxes are kept depends on the values. Exported at opset 13: torchvision
    0.14 writes RoiAlign without coordinate_transformation_mode, which from opset 16 on means
    half_pixel (aligned=True), not this roi_align's aligned=False; ONNX Runtime and switchyard
    both follow ONNX there."""
    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 8, 3, padding=1)
        self.score = nn.Conv2d(8, 2, 1)
        self.box = nn.Conv2d(8, 4, 1)
        ys, xs = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
        centers = torch.stack([xs.flatten(), ys.flatten()], 1) + 0.5
        self.register_buffer("anchors", torch.cat([centers - 1.5, centers + 1.5], 1))

    def forward(self, x):
        f = torch.relu(self.features(x))
        n = f.shape[0]
        scores = torch.sigmoid(self.score(f)).flatten(2).transpose(1, 2)      # [N, 64, 2]
        deltas = self.box(f).flatten(2).transpose(1, 2)                        # [N, 64, 4]
        boxes = (self.anchors + deltas).reshape(-1, 4)
        best, label = scores.reshape(-1, 2).max(1)
        image = torch.arange(n)[:, None].expand(n, 64).reshape(-1)
        keep = torchvision.ops.batched_nms(boxes, best, label + 2 * image, 0.3)[:40]
        rois = torch.cat([image[keep, None].to(boxes.dtype), boxes[keep]], 1)
        pooled = torchvision.ops.roi_align(f, rois, output_size=3, spatial_scale=1.0,
                                           sampling_ratio=2)
        area = (boxes[keep, 2:] - boxes[keep, :2]).prod(1)
        return pooled.mean((2, 3)), best[keep] * area


def build_detection():
    torch.manual_seed(15)
    return decorrelate(Detection())


class ScriptedLists(nn.Module):
    """torch.jit.script's lists as torch.onnx.export writes them: a list appended in a loop over
    the rows (SequenceEmpty, SequenceInsert in a Loop), torch.stack of it and torch.cat of
    torch.split's parts (ConcatFromSequence, SplitToSequence)."""
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)

    def forward(self, x):
        rows = []
        for i in range(x.size(0)):
            rows.append(torch.tanh(self.proj(x[i])) * float(i + 1))
        parts = torch.split(x, 2, dim=1)
        return torch.stack(rows, 0) + torch.cat([p * 2.0 for p in parts], 1)


def build_scripted_lists():
    return torch.jit.script(decorrelate(ScriptedLists()))


def build_control_flow():
    return torch.jit.script(ControlFlow())


def decorrelate(module):
    """Fresh, independent values for every parameter of `module` (from torch's seeded global
    generator). nn.TransformerEncoder deep-copies one layer, so its layers start out identical, and
    LayerNorm (1, 0) and the attention biases (0) are trivial: the exporter would then merge the
    equal initializers (Identity nodes) and a test could not tell the layers or biases apart."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.1 * torch.randn_like(p))
    return module


def small_encoder():
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0,
                                       activation="gelu", batch_first=True)
    return decorrelate(nn.TransformerEncoder(layer, num_layers=2))


class SmallTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = small_encoder()
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


class MaskedTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = small_encoder()
        self.head = nn.Linear(16, 3)

    def forward(self, x, src_key_padding_mask):
        hidden = self.encoder(x, src_key_padding_mask=src_key_padding_mask)
        keep = (~src_key_padding_mask).unsqueeze(-1).to(hidden.dtype)
        return self.head((hidden * keep).sum(1) / keep.sum(1))


def build_mlp_gelu():
    return nn.Sequential(nn.Linear(20, 32), nn.GELU(), nn.Linear(32, 32), nn.GELU(),
                         nn.Linear(32, 5))


def build_cnn():
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=1, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 8, 3, stride=2, padding=2, dilation=2, groups=2), nn.BatchNorm2d(8),
        nn.ReLU(), nn.MaxPool2d(2),            # [N,8,6,6] -> [N,8,3,3]
        nn.AvgPool2d(2, stride=1),             # -> [N,8,2,2]
        nn.Flatten(), nn.Linear(32, 6))
    # Non-trivial BatchNorm state, set from a seeded generator rather than by training passes so
    # that it is bit-for-bit the same on every machine (--verify compares it to 1e-7).
    generator = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for module in model:
            if isinstance(module, nn.BatchNorm2d):
                c = module.num_features
                module.weight.copy_(0.5 + torch.rand(c, generator=generator))
                module.bias.copy_(0.2 * torch.randn(c, generator=generator))
                module.running_mean.copy_(0.3 * torch.randn(c, generator=generator))
                module.running_var.copy_(0.5 + torch.rand(c, generator=generator))
                module.num_batches_tracked.fill_(10)
    return model


def build_image_ops():
    """The image ops a generator or segmentation network exports (docs/onnx.md): reflection and
    replication padding, GroupNorm (InstanceNormalization), HardSwish and HardSigmoid, a ceil-mode
    max pool with padding, a transposed convolution, PReLU, bilinear upsampling, PixelShuffle
    (DepthToSpace) and InstanceNorm2d."""
    model = nn.Sequential(
        nn.ReflectionPad2d(1), nn.Conv2d(3, 8, 3), nn.GroupNorm(2, 8), nn.Hardswish(),  # [N,8,8,8]
        nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),                          # -> 5x5
        nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), nn.PReLU(4),                # -> 10x10
        nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),             # -> 20x20
        nn.ReplicationPad2d((1, 0, 0, 1)), nn.Conv2d(4, 8, 3, stride=2),              # -> 10x10
        nn.PixelShuffle(2), nn.InstanceNorm2d(2, affine=True), nn.Hardsigmoid())       # [N,2,20,20]
    return decorrelate(model)


def float_inputs(shape):
    def make(batch, generator):
        return [torch.randn((batch,) + shape, generator=generator)]
    return make


def token_inputs(batch, generator):
    tokens = torch.randint(1, 20, (batch, 6), generator=generator)
    tokens[0, -1] = 0                         # the padding token appears in every data set
    if batch > 2:
        tokens[2, -2:] = 0
    return [tokens]


def masked_sequence_inputs(batch, generator):
    x = torch.randn(batch, 6, 16, generator=generator)
    mask = torch.zeros(batch, 6, dtype=torch.bool)
    mask[0::2, -2:] = True                   # rows 0, 2, 4, 6: the last two steps are padding
    return [x, mask]


# name: (seed, builder, input names, output names, inputs(batch, generator), export training mode)
# cnn keeps TrainingMode.PRESERVE (the model is in eval mode all the same) so that the exporter's
# eval peephole does not fold the BatchNorms into the convolutions: BatchNormalization stays a node.
MODELS = {
    "mlp_gelu": (1, build_mlp_gelu, ["input"], ["output"], float_inputs((20,)), None),
    "cnn": (2, build_cnn, ["input"], ["output"], float_inputs((3, 12, 12)),
            torch.onnx.TrainingMode.PRESERVE),
    "lstm2": (3, LastStepLstm, ["input"], ["output"], float_inputs((5, 6)), None),
    "gru": (4, GruSequence, ["input"], ["output"], float_inputs((5, 6)), None),
    "rnn": (17, ReluTanhRnn, ["input"], ["output"], float_inputs((5, 6)), None),
    "embedding_lstm": (5, EmbeddingLstm, ["input"], ["output"], token_inputs, None),
    "transformer2": (6, SmallTransformer, ["input"], ["output"], float_inputs((6, 16)), None),
    "transformer_mask": (7, MaskedTransformer, ["input", "src_key_padding_mask"], ["output"],
                         masked_sequence_inputs, None),
    "transformer_opset13": (8, SmallTransformer, ["input"], ["output"], float_inputs((6, 16)), None),
    "image_ops": (9, build_image_ops, ["input"], ["output"], float_inputs((3, 8, 8)), None),
    "transformer_opset9": (10, SmallTransformer, ["input"], ["output"], float_inputs((6, 16)),
                           None),
    "image_ops_opset11": (11, build_image_ops, ["input"], ["output"], float_inputs((3, 8, 8)),
                          None),
    "module_functions": (12, ModuleFunctions, ["input"], ["output"], float_inputs((8,)), None),
    "fake_quant_opset13": (13, FakeQuantized, ["input"], ["output"], float_inputs((3, 6, 6)),
                           None),
    "control_flow": (14, build_control_flow, ["input"], ["output"], float_inputs((8,)), None),
    "scripted_lists": (16, build_scripted_lists, ["input"], ["output"], float_inputs((6,)), None),
    "detection_opset13": (15, build_detection, ["input"], ["features", "weighted"],
                  float_inputs((3, 8, 8)), None),
}
# Further torch.onnx.export arguments by model.
EXPORT_KWARGS = {
    "module_functions": {"export_modules_as_functions": {ResidualBlock, nn.LeakyReLU,
                                                         nn.LayerNorm}},
}
# Models exported at another opset than OPSET: at 13 LayerNorm is decomposed (ReduceMean, Sub,
# Pow, Sqrt, Div) and Split takes its sizes as an input; at 9 Split takes them as an attribute
# (Split-2), Softmax is Softmax-1 and Squeeze / Unsqueeze take attributes; at 11 the bilinear
# upsampling is Resize-11 and the pads Pad-11 inputs.
OPSETS = {"transformer_opset13": 13, "transformer_opset9": 9, "image_ops_opset11": 11,
          "fake_quant_opset13": 13, "detection_opset13": 13}


def build(name):
    seed, builder = MODELS[name][0], MODELS[name][1]
    torch.manual_seed(seed)
    model = builder()
    model.eval()
    return model


def make_inputs(name, batch):
    seed, make = MODELS[name][0], MODELS[name][4]
    generator = torch.Generator().manual_seed(1000 * seed + batch)
    return make(batch, generator)


def export_bytes(name, model):
    """The ONNX export of `model` as bytes. Autograd stays on (no no_grad/inference_mode): with it
    off, torch 1.13's TransformerEncoder takes its fused fast path, which cannot be exported."""
    _, _, input_names, output_names, _, training = MODELS[name]
    example = tuple(make_inputs(name, 2))
    axes = {n: {0: "batch"} for n in input_names + output_names}
    buffer = io.BytesIO()
    kwargs = {} if training is None else {"training": training}
    kwargs.update(EXPORT_KWARGS.get(name, {}))
    with warnings.catch_warnings():
        # torch 1.13 warns about missing shape inference for prim::Constant, initial RNN states
        # and constant folding under TrainingMode.PRESERVE: all expected here.
        warnings.simplefilter("ignore", UserWarning)
        torch.onnx.export(model, example, buffer, input_names=input_names,
                          output_names=output_names, opset_version=OPSETS.get(name, OPSET),
                          dynamic_axes=axes,
                          do_constant_folding=True, **kwargs)
    return buffer.getvalue()


def eager_outputs(model, inputs):
    """PyTorch's outputs with autograd on: the same (unfused) computation the export traced. Under
    no_grad/inference_mode torch 1.13's TransformerEncoder would take its fused fast path instead,
    which with a padding mask even drops the padded steps from its output (nested tensors)."""
    with torch.enable_grad():
        result = model(*inputs)
    result = result if isinstance(result, (tuple, list)) else (result,)
    return [r.detach().numpy().astype(np.float32) for r in result]


def tensor_proto(array, name):
    return onnx.numpy_helper.from_array(np.ascontiguousarray(array), name)


def write_model(name, out):
    model = build(name)
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    data = export_bytes(name, model)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(data)
    _, _, input_names, output_names, _, _ = MODELS[name]
    for index, batch in enumerate(BATCHES):
        data_set = os.path.join(folder, "test_data_set_%d" % index)
        os.makedirs(data_set, exist_ok=True)
        inputs = make_inputs(name, batch)
        outputs = eager_outputs(model, inputs)
        for i, (n, value) in enumerate(zip(input_names, inputs)):
            with open(os.path.join(data_set, "input_%d.pb" % i), "wb") as f:
                f.write(tensor_proto(value.numpy(), n).SerializeToString())
        for i, (n, value) in enumerate(zip(output_names, outputs)):
            with open(os.path.join(data_set, "output_%d.pb" % i), "wb") as f:
                f.write(tensor_proto(value, n).SerializeToString())


# ---- reading back and checking -------------------------------------------------------------------

def read_tensor(path):
    proto = onnx.TensorProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(proto)


def read_data_set(folder):
    def numbered(prefix):
        values, i = [], 0
        while os.path.exists(os.path.join(folder, "%s_%d.pb" % (prefix, i))):
            values.append(read_tensor(os.path.join(folder, "%s_%d.pb" % (prefix, i))))
            i += 1
        return values
    return numbered("input"), numbered("output")


def op_types(graph):
    types = set()
    for node in graph.node:
        types.add(node.op_type)
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                types |= op_types(attribute.g)
    return types


def opset_of(model):
    return {o.domain or "ai.onnx": o.version for o in model.opset_import}


def folder_size(folder):
    total = 0
    for root, _, files in os.walk(folder):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def max_difference(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        return float(np.count_nonzero(a != b))
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def rnn_gate_blocks(weight, order):
    """`weight` (gates stacked on axis 0 in PyTorch's order) with its gate blocks put in `order`."""
    blocks = np.split(weight, len(order), axis=0)
    return np.concatenate([blocks[i] for i in order], axis=0)


def derived_parameters(model):
    """(label, array, state-dict keys) for the tensors the exporter derives from parameters: every
    2-D parameter transposed (a Linear's weight as MatMul's right operand), every 1-D one as
    [C, 1] and [C, 1, 1] (GroupNorm's affine and PReLU's slope), and the W, R and B
    inputs of ONNX's LSTM, GRU and RNN, per layer, both directions stacked (PyTorch's gates i f g o
    become ONNX's i o f c; r z n become z r h; B is Wb then Rb)."""
    found = []
    for key, value in model.state_dict().items():
        if value.is_floating_point() and value.dim() == 2:
            found.append((key + " transposed", value.detach().numpy().T, {key}))
        if value.is_floating_point() and value.dim() == 1:  # per channel: GroupNorm's, PReLU's
            for shape in ((-1, 1), (-1, 1, 1)):
                found.append((key + " as %s" % (shape,), value.detach().numpy().reshape(shape),
                              {key}))
    for prefix, module in model.named_modules():
        if not isinstance(module, (nn.LSTM, nn.GRU, nn.RNN)):
            continue
        order = ((0, 3, 1, 2) if isinstance(module, nn.LSTM) else
                 (1, 0, 2) if isinstance(module, nn.GRU) else (0,))
        directions = ("", "_reverse") if module.bidirectional else ("",)
        for layer in range(module.num_layers):
            packs = {"W": [], "R": [], "B": []}
            keys = set()
            for suffix in directions:
                kinds = ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if module.bias else ())
                names = ["%s_l%d%s" % (kind, layer, suffix) for kind in kinds]
                keys |= {"%s.%s" % (prefix, n) if prefix else n for n in names}
                tensors = [getattr(module, n).detach().numpy() for n in names]
                packs["W"].append(rnn_gate_blocks(tensors[0], order))
                packs["R"].append(rnn_gate_blocks(tensors[1], order))
                if module.bias:
                    packs["B"].append(np.concatenate([rnn_gate_blocks(tensors[2], order),
                                                      rnn_gate_blocks(tensors[3], order)]))
            for kind, pack in packs.items():
                if not pack:
                    continue
                found.append(("%s layer %d %s" % (prefix or type(module).__name__, layer, kind),
                              np.stack(pack), keys))
    return found


def check_initializers(committed, model):
    """Every floating-point initializer of the committed graph must equal (to 1e-7) the parameter or
    buffer it is named after, or else one of the tensors derived from the rebuilt model's
    parameters; and every floating-point parameter and buffer must be found that way."""
    problems = []
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()
             if v.is_floating_point()}
    derived = derived_parameters(model)
    initializers = {t.name: onnx.numpy_helper.to_array(t) for t in committed.graph.initializer}
    # The exporter merges equal initializers and names the copies with Identity nodes.
    named = dict(initializers)
    for node in committed.graph.node:
        if node.op_type == "Identity" and node.input[0] in initializers:
            named[node.output[0]] = initializers[node.input[0]]
    covered = set()
    worst = 0.0
    for tensor_name, value in named.items():
        if not np.issubdtype(value.dtype, np.floating):
            continue  # index and shape constants: not parameters
        if tensor_name in state:
            difference = max_difference(value, state[tensor_name])
            worst = max(worst, difference)
            if difference <= PARAMETER_TOLERANCE:
                covered.add(tensor_name)
            else:
                problems.append("initializer %s differs from the rebuilt model's parameter by %g"
                                " (max allowed %g)" % (tensor_name, difference,
                                                      PARAMETER_TOLERANCE))
            continue
        same_shape = [d for d in derived if d[1].shape == value.shape]
        best = min(same_shape, key=lambda d: max_difference(value, d[1]), default=None)
        difference = max_difference(value, best[1]) if best else float("inf")
        worst = max(worst, difference)
        if difference <= PARAMETER_TOLERANCE:
            covered |= best[2]
        else:
            problems.append("initializer %s %s matches no parameter of the rebuilt model (closest:"
                            " %s, max difference %g)" % (tensor_name, list(value.shape),
                                                         best[0] if best else "none", difference))
    missing = sorted(set(state) - covered)
    if missing:
        problems.append("parameters not found in the graph: %s" % ", ".join(missing))
    if problems:
        problems.append("max initializer difference: %g (max allowed %g)"
                        % (worst, PARAMETER_TOLERANCE))
    return problems


def check(name, out):
    """Problems with the committed folder of `name`, as strings (empty: all good)."""
    problems = []
    folder = os.path.join(out, name)
    committed = onnx.load(os.path.join(folder, "model.onnx"))
    try:
        onnx.checker.check_model(committed, full_check=True)
    except Exception as error:  # noqa: BLE001 - any checker failure is reported as such
        problems.append("onnx.checker: %s" % error)
    if opset_of(committed).get("ai.onnx") != OPSETS.get(name, OPSET):
        problems.append("opset %s, expected %d" % (opset_of(committed), OPSETS.get(name, OPSET)))

    model = build(name)
    problems += check_initializers(committed, model)

    for index, batch in enumerate(BATCHES):
        data_set = os.path.join(folder, "test_data_set_%d" % index)
        inputs, outputs = read_data_set(data_set)
        if not inputs or not outputs:
            problems.append("%s: no inputs or outputs" % data_set)
            continue
        if inputs[0].shape[0] != batch:
            problems.append("%s: batch %d, expected %d" % (data_set, inputs[0].shape[0], batch))
        fresh = eager_outputs(model, [torch.from_numpy(np.array(v)) for v in inputs])
        if len(fresh) != len(outputs):
            problems.append("%s: %d outputs, PyTorch gives %d" % (data_set, len(outputs),
                                                                  len(fresh)))
            continue
        for i, (got, expected) in enumerate(zip(outputs, fresh)):
            difference = max_difference(got, expected)
            if not difference <= OUTPUT_TOLERANCE:
                problems.append("%s output_%d differs from PyTorch's by %g (max allowed %g)"
                                % (data_set, i, difference, OUTPUT_TOLERANCE))
    return problems


def describe(name, out):
    folder = os.path.join(out, name)
    model = onnx.load(os.path.join(folder, "model.onnx"))
    onnx.checker.check_model(model, full_check=True)
    print("%-17s model.onnx %7d B, folder %7d B, opset %s" % (
        name, os.path.getsize(os.path.join(folder, "model.onnx")), folder_size(folder),
        opset_of(model)))
    print("%-17s ops: %s" % ("", " ".join(sorted(op_types(model.graph)))))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verify", action="store_true",
                        help="check the committed folders against PyTorch instead of writing")
    parser.add_argument("--out", default=DEFAULT_OUT, help="default tests/onnx/models")
    parser.add_argument("--only", default="", help="comma list of " + ",".join(MODELS))
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error("unknown model(s) %s; expected some of %s" % (unknown, ",".join(MODELS)))
    torch.set_num_threads(1)  # the same reduction order everywhere

    if not args.verify:
        for name in names:
            write_model(name, args.out)
            describe(name, args.out)
        return 0

    failed = False
    for name in names:
        if not os.path.exists(os.path.join(args.out, name, "model.onnx")):
            print("%s: FAIL: %s missing" % (name, os.path.join(args.out, name, "model.onnx")))
            failed = True
            continue
        problems = check(name, args.out)
        for problem in problems:
            print("%s: FAIL: %s" % (name, problem))
        if not problems:
            print("%s: ok" % name)
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
