#!/usr/bin/python3
"""Writes the PyTorch reference outputs that tests/nn/torch_equality_test.cpp compares with.

    tests/nn/make_torch_reference.py [OUT_DIR]      (default: tests/nn/torch_reference)

For each case below, PyTorch initialises a module (its own default initialisation, a fixed seed),
runs it forward on random inputs, and back-propagates a random gradient of every output. One
safetensors file per case holds, all as f32 (masks and indices as i64):

    param/<name>          the module's state_dict (parameters and buffers), PyTorch's names
    input/<name>          the inputs
    output/<name>         what the module returned (and, for BatchNorm, the running statistics
                          after the forward pass)
    grad_output/<name>    the gradient fed back for each differentiable output
    grad/input/<name>     d(sum(output * grad_output)) / d input, for float inputs
    grad/param/<name>     the same for each parameter

The metadata's "case" entry says which module and options made the file. The C++ test builds the
same module with switchyard, loads param/ with load_state_dict (strict), and compares on every
backend. Run it again (with python3-torch installed) after changing a case; commit the files. The
test also calls this script itself where torch is installed and compares with fresh outputs.
"""

import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def write_safetensors(path, tensors, metadata):
    header = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name, tensor in tensors.items():
        t = tensor.detach().contiguous()
        if t.dtype in (torch.float32, torch.float64):
            data = t.to(torch.float32).numpy().tobytes()
            dtype = "F32"
        else:
            data = t.to(torch.int64).numpy().tobytes()
            dtype = "I64"
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def run_case(module, inputs, forward, extra_outputs=None):
    """inputs: name -> tensor (float ones get requires_grad). forward(module, inputs) returns a
    dict name -> output tensor. Returns the tensors to save."""
    saved = {}
    for name, value in module.state_dict().items():
        saved["param/" + name] = value.clone()
    for name, value in inputs.items():
        if value.is_floating_point():
            value.requires_grad_(True)
        saved["input/" + name] = value.detach().clone()
    outputs = forward(module, inputs)
    total = 0
    generator = torch.Generator().manual_seed(1234)
    for name, value in outputs.items():
        saved["output/" + name] = value.detach().clone()
        if value.requires_grad:
            grad = torch.randn(value.shape, generator=generator)
            saved["grad_output/" + name] = grad
            total = total + (value * grad).sum()
    total.backward()
    for name, value in inputs.items():
        if value.is_floating_point():
            saved["grad/input/" + name] = value.grad.clone()
    for name, value in module.named_parameters():
        saved["grad/param/" + name] = value.grad.clone()
    for name, value in (extra_outputs(module) if extra_outputs else {}).items():
        saved["output/" + name] = value.detach().clone()
    return saved


def lstm_case():
    torch.manual_seed(1)
    module = torch.nn.LSTM(5, 4, num_layers=2, batch_first=True, bidirectional=True)
    inputs = {"x": torch.randn(3, 6, 5), "h0": torch.randn(4, 3, 4), "c0": torch.randn(4, 3, 4)}

    def forward(m, i):
        y, (h, c) = m(i["x"], (i["h0"], i["c0"]))
        return {"y": y, "h_n": h, "c_n": c}

    return run_case(module, inputs, forward)


def gru_case():
    torch.manual_seed(2)
    module = torch.nn.GRU(5, 4, num_layers=2, batch_first=False)
    inputs = {"x": torch.randn(6, 3, 5), "h0": torch.randn(2, 3, 4)}

    def forward(m, i):
        y, h = m(i["x"], i["h0"])
        return {"y": y, "h_n": h}

    return run_case(module, inputs, forward)


def padding_mask():
    mask = torch.zeros(3, 6, dtype=torch.int64)
    mask[1, 4:] = 1  # the second sequence has 4 steps, the third 2
    mask[2, 2:] = 1
    return mask


def transformer_case(norm_first, activation, seed):
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                             activation=activation, batch_first=True,
                                             norm_first=norm_first)
    module = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    inputs = {"x": torch.randn(3, 6, 8), "key_padding_mask": padding_mask()}

    def forward(m, i):
        return {"y": m(i["x"], src_key_padding_mask=i["key_padding_mask"].bool())}

    return run_case(module, inputs, forward)


def attention_case():
    torch.manual_seed(5)
    module = torch.nn.MultiheadAttention(8, 2, batch_first=False)
    inputs = {"query": torch.randn(6, 3, 8), "key_padding_mask": padding_mask()}

    def forward(m, i):
        q = i["query"]
        causal = torch.nn.Transformer.generate_square_subsequent_mask(6)
        out, weights = m(q, q, q, key_padding_mask=i["key_padding_mask"].bool(),
                         attn_mask=causal, need_weights=True)
        return {"y": out, "weights": weights}

    return run_case(module, inputs, forward)


def batch_norm_case(dims, seed):
    torch.manual_seed(seed)
    module = torch.nn.BatchNorm1d(3) if dims == 1 else torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
    shape = (4, 3, 5) if dims == 1 else (2, 3, 4, 4)
    inputs = {"x": torch.randn(shape) * 2 + 1, "x_eval": torch.randn(shape)}

    def forward(m, i):
        m.train()
        y = m(i["x"])
        m.eval()
        y_eval = m(i["x_eval"])
        return {"y": y, "y_eval": y_eval}

    def after(m):
        return {"running_mean": m.running_mean, "running_var": m.running_var}

    return run_case(module, inputs, forward, after)


def embedding_case():
    torch.manual_seed(6)
    module = torch.nn.Embedding(7, 4, padding_idx=0)
    inputs = {"indices": torch.tensor([[1, 0, 3, 3, 6], [0, 2, 5, 1, 0], [4, 4, 0, 6, 2]])}

    def forward(m, i):
        return {"y": m(i["indices"])}

    return run_case(module, inputs, forward)


CASES = {
    "lstm_bidirectional_2layer": (lstm_case, "LSTM(5, 4, num_layers=2, batch_first=True, "
                                             "bidirectional=True) with h0, c0"),
    "gru_2layer": (gru_case, "GRU(5, 4, num_layers=2) time-major with h0"),
    "transformer_post_norm_relu": (lambda: transformer_case(False, "relu", 3),
                                   "TransformerEncoder(layer(8, 2, 16, dropout 0, relu, "
                                   "batch_first), 2) with a key padding mask"),
    "transformer_pre_norm_gelu": (lambda: transformer_case(True, "gelu", 4),
                                  "the same with norm_first=True and gelu"),
    "attention_causal": (attention_case, "MultiheadAttention(8, 2) time-major, causal float "
                                         "attn_mask and key padding mask, head-averaged weights"),
    "batch_norm_1d": (lambda: batch_norm_case(1, 7), "BatchNorm1d(3) train step then eval"),
    "batch_norm_2d": (lambda: batch_norm_case(2, 8), "BatchNorm2d(3) train step then eval"),
    "embedding_padding": (embedding_case, "Embedding(7, 4, padding_idx=0)"),
}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "torch_reference")
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for name, (make, description) in CASES.items():
        tensors = make()
        write_safetensors(os.path.join(out_dir, name + ".safetensors"), tensors,
                          {"case": description, "torch": torch.__version__})
        print("wrote", name, len(tensors), "tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
