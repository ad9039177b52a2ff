#!/usr/bin/python3
"""Reads a safetensors file that switchyard wrote, the way other tools do, for the interop test.

    safetensors_peer.py header WEIGHTS
        With the standard library only: prints one line per tensor, "name dtype shape sum",
        and the metadata as "meta key=value" lines.
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
    header, body = read(path)
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        assert entry["dtype"] == "F32", entry
        values = struct.unpack("<%df" % ((end - begin) // 4), body[begin:end])
        print("%s %s %s %.6f" % (name, entry["dtype"], entry["shape"], sum(values)))
    for key, value in sorted(header.get("__metadata__", {}).items()):
        print("meta %s=%s" % (key, value))
    return 0


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
    model = digits_mlp(torch)
    if export:
        torch.manual_seed(7)
        model = digits_mlp(torch)
        write(weights, model.state_dict())
        if not os.path.exists(predictions_csv):
            return 0
    else:
        header, body = read(weights)
        state = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            begin, end = entry["data_offsets"]
            state[name] = torch.frombuffer(bytearray(body[begin:end]),
                                           dtype=torch.float32).reshape(entry["shape"])
        model.load_state_dict(state, strict=True)
    with open(input_csv) as f:
        rows = [[float(v) for v in line] for line in csv.reader(f) if line]
    x = torch.tensor([row[:-1] for row in rows]) / 16.0
    with torch.no_grad():
        probabilities = torch.softmax(model(x), dim=1)
    with open(predictions_csv) as f:
        ours = [[float(v) for v in row[3:]] for row in list(csv.reader(f))[1:]]
    assert len(ours) == len(rows), (len(ours), len(rows))
    diff = (probabilities - torch.tensor(ours)).abs().max().item()
    print("max_abs_diff %.3g" % diff)
    return 0


def main(argv):
    if len(argv) == 2 and argv[0] == "header":
        return header_command(argv[1])
    if len(argv) == 4 and argv[0] == "torch":
        return torch_command(*argv[1:])
    if len(argv) == 4 and argv[0] == "torch-export":
        return torch_command(*argv[1:], export=True)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
