#!/usr/bin/python3
"""Reads a safetensors file that switchyard wrote, the way other tools do, for the interop test.

    safetensors_peer.py header WEIGHTS
        With the standard library only: prints one line per tensor, "name dtype shape",
        and the metadata as "meta key=value" lines.
    safetensors_peer.py forward WEIGHTS INPUT.csv PREDICTIONS.csv
        With the standard library only: evaluates the MLP below from WEIGHTS in plain Python
        and prints the largest absolute difference from PREDICTIONS.csv as "max_abs_diff X".
    safetensors_peer.py torch WEIGHTS INPUT.csv PREDICTIONS.csv
        Loads WEIGHTS into torch.nn.Sequential(Linear(64, 256), ReLU, Linear(256, 256), ReLU,
        Linear(256, 10)) with load_state_dict(strict=True), computes the class probabilities of
        INPUT.csv's rows (pixels / 16, as configs/digits-mlp.yaml scales them) and prints the
        largest absolute difference from switchyard's PREDICTIONS.csv as "max_abs_diff X".
    safetensors_peer.py torch-export WEIGHTS INPUT.csv PREDICTIONS.csv
        The other way: a freshly initialised PyTorch model of that shape (seed 7) is written to
        WEIGHTS with the format's layout, then compared like `torch` with the PREDICTIONS.csv
        that switchyard made from WEIGHTS (the caller runs switchyard in between; see the test).
        Without PREDICTIONS.csv existing yet, only writes WEIGHTS.
    The torch commands exit 3 when torch cannot be imported, so the caller can skip.
"""

import csv
import json
import math
import os
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size].decode("utf-8"))
    return header, data[8 + size:]


def header_command(path):
    header, _ = read(path)
    for name, entry in header.items():
        if name != "__metadata__":
            print("%s %s %s" % (name, entry["dtype"], entry["shape"]))
    for key, value in sorted(header.get("__metadata__", {}).items()):
        print("meta %s=%s" % (key, value))
    return 0


def floats(header, body):
    """name -> (shape, flat list of floats), with the standard library only."""
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = (entry["shape"], list(struct.unpack("<%df" % ((end - begin) // 4),
                                                            body[begin:end])))
    return tensors


def inputs(input_csv):
    """The rows' pixels divided by 16, as configs/digits-mlp.yaml scales them."""
    with open(input_csv) as f:
        return [[float(v) / 16.0 for v in row[:-1]] for row in csv.reader(f) if row]


def compare(probabilities, predictions_csv):
    """Prints the largest absolute difference from switchyard's PREDICTIONS.csv."""
    with open(predictions_csv) as f:
        rows = list(csv.reader(f))
    # The per-class probabilities are the columns named p_<class>.
    columns = [i for i, name in enumerate(rows[0]) if name.startswith("p_")]
    ours = [[float(row[i]) for i in columns] for row in rows[1:]]
    assert len(ours) == len(probabilities), (len(ours), len(probabilities))
    diff = max(abs(a - b) for mine, theirs in zip(probabilities, ours)
               for a, b in zip(mine, theirs))
    print("max_abs_diff %.3g" % diff)
    return 0


def forward_command(weights, input_csv, predictions_csv):
    """The 64-256-256-10 ReLU MLP evaluated in plain Python (double precision): an independent
    check of names, layouts and values that needs no torch."""
    tensors = floats(*read(weights))
    probabilities = []
    for x in inputs(input_csv):
        for layer in ("0", "2", "4"):
            (rows, cols), w = tensors[layer + ".weight"]
            b = tensors[layer + ".bias"][1]
            assert cols == len(x), (layer, cols, len(x))
            x = [b[r] + sum(w[r * cols + c] * x[c] for c in range(cols)) for r in range(rows)]
            if layer != "4":
                x = [max(v, 0.0) for v in x]
        top = max(x)
        exps = [math.exp(v - top) for v in x]
        probabilities.append([e / sum(exps) for e in exps])
    return compare(probabilities, predictions_csv)


def digits_mlp(torch):
    nn = torch.nn
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def write(path, state):
    """The format as the safetensors library writes it: sorted names, F32, padded header."""
    header, offset, chunks = {}, 0, []
    for name in sorted(state):
        data = state[name].detach().contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(state[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        chunks.append(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def torch_command(weights, input_csv, predictions_csv, export=False):
    try:
        import torch
    except ImportError:
        print("torch is not installed")
        return 3
    if export:
        torch.manual_seed(7)
        model = digits_mlp(torch)
        write(weights, model.state_dict())
        if not os.path.exists(predictions_csv):
            return 0
    else:
        model = digits_mlp(torch)
        state = {name: torch.tensor(values).reshape(shape)
                 for name, (shape, values) in floats(*read(weights)).items()}
        model.load_state_dict(state, strict=True)
    with torch.no_grad():
        probabilities = torch.softmax(model(torch.tensor(inputs(input_csv))), dim=1)
    return compare(probabilities.tolist(), predictions_csv)


def main(argv):
    if len(argv) == 2 and argv[0] == "header":
        return header_command(argv[1])
    if len(argv) == 4 and argv[0] == "forward":
        return forward_command(*argv[1:])
    if len(argv) == 4 and argv[0] == "torch":
        return torch_command(*argv[1:])
    if len(argv) == 4 and argv[0] == "torch-export":
        return torch_command(*argv[1:], export=True)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
