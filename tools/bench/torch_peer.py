#!/usr/bin/python3
"""PyTorch peer for `switchyard bench`: the same workloads, timed the same way, in PyTorch (CPU).

    /usr/bin/python3 tools/bench/torch_peer.py [--threads 2]
                                               [--what digits,cnn,step,transformer,lstm,text_rnn,
                                                       matmul,add]
                                               [--sequence-mode step|inference] [--seed 0] [--json]

Parts (each timed after a warm-up; medians reported):
  digits  configs/digits-mlp.yaml's run: data/digits.csv.gz, pixels / 16, stratified 80/20 split,
          a 64-256-256-10 ReLU MLP (PyTorch's default init, which is also switchyard's Kaiming
          uniform), cross-entropy, SGD lr 0.05 momentum 0.9, batch 64, 20 epochs of shuffled
          batches. Epoch time covers the training steps only (batch gather, forward, loss,
          backward, update, and the running loss/correct sums that switchyard's trainer also keeps),
          not the test evaluation. Reports the median epoch and the final test accuracy.
  cnn     configs/digits-cnn.yaml's run, timed the same way: the pixels as 1x8x8 images,
          conv3x3(32, pad 1) relu maxpool2 conv3x3(64, pad 1) relu maxpool2 linear(128) relu
          dropout(0.25) linear(10), SGD lr 0.05 momentum 0.9 weight decay 0.0005, batch 64.
  step    one training step of a 784-2048-2048-10 ReLU MLP at batch 256 on synthetic data
          (forward, cross-entropy, backward, SGD momentum update, zero_grad), like
          `switchyard bench step`.
  transformer  `switchyard bench sequence --model transformer`: [32, 64, 469] -> Linear(469, 256)
          -> nn.TransformerEncoder(d_model 256, 4 heads, feed-forward 1024, 2 layers, post-norm,
          relu, dropout 0.1, batch_first) -> mean over time -> Linear(256, 100); one training step
          (forward, cross-entropy, backward, SGD momentum update, zero_grad) on synthetic data, or
          with --sequence-mode inference one batch-1 forward pass in eval mode under
          torch.inference_mode() (PyTorch's fused encoder fast path applies there).
  lstm    the same for [64, 50, 128] -> nn.LSTM(128, 256, 2 layers, batch_first) -> last step
          -> Linear(256, 100).
  text_rnn  the same for the model zoo's text RNN: [128, 50, 2000] -> nn.LSTM(2000, 256,
          batch_first) -> last step -> Linear(256, 2000).
  matmul  torch.matmul of two 1024x1024 f32 matrices into a preallocated output, GFLOP/s.
  add     latency of torch.add on two 16-element f32 tensors (includes the Python call).

  info    nothing timed: the environment report alone (below).

Every run reports the peer's environment as it really is: the BLAS library the process mapped
(read from /proc/self/maps after a matrix product, so it is the one PyTorch's matmul calls, with
OpenBLAS's own view of its threading where it is OpenBLAS), torch.__config__.parallel_info(), and
every thread count (torch's intra- and inter-op threads, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
MKL_NUM_THREADS). tools/bench/compare refuses to compare when that library is the netlib reference
BLAS, which makes PyTorch's float matmul about 10x slower than it is at its best.

Run it with /usr/bin/python3 (Debian's python3-torch); the `python3` first on PATH on the build
machine is a separate interpreter that cannot see it. Thread counts come from the environment
(tools/bench/compare sets OMP_NUM_THREADS and friends to --threads) and torch.set_num_threads.
"""

import argparse
import ctypes
import gzip
import json
import os
import statistics
import sys
import time

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALL_PARTS = ("digits", "cnn", "step", "transformer", "lstm", "text_rnn", "matmul", "add", "info")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    parser.add_argument("--what", default=",".join(ALL_PARTS), help="comma list of " + ",".join(ALL_PARTS))
    parser.add_argument("--seed", type=int, default=0, help="init, split and batch order seed")
    parser.add_argument("--data", default=os.path.join(REPO, "data", "digits.csv.gz"))
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--step-layers", default="784,2048,2048,10")
    parser.add_argument("--step-batch", type=int, default=256)
    parser.add_argument("--step-repetitions", type=int, default=20)
    parser.add_argument("--step-precision", default="f32", choices=("f32", "bf16"),
                        help="bf16: the forward pass under torch.autocast('cpu', bfloat16)")
    parser.add_argument("--sequence-mode", default="step", choices=("step", "inference"),
                        help="transformer and lstm: a training step, or a batch-1 forward pass")
    parser.add_argument("--sequence-batch", type=int, default=0,
                        help="transformer and lstm: sequences per pass (default 32 and 64 for a"
                             " step, 1 for inference)")
    parser.add_argument("--sequence-repetitions", type=int, default=20)
    parser.add_argument("--matmul-size", type=int, default=1024)
    parser.add_argument("--matmul-dtype", default="f32", choices=("f32", "bf16"))
    parser.add_argument("--add-size", type=int, default=16)
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    args.parts = [p for p in args.what.split(",") if p]
    unknown = [p for p in args.parts if p not in ALL_PARTS]
    if unknown:
        parser.error("unknown part(s) %s; expected some of %s" % (unknown, ",".join(ALL_PARTS)))
    return args


# ---- digits-mlp ----------------------------------------------------------------------------------

def load_digits(path):
    """Features [n, 64] as float32 divided by 16 (scale: divide, divisor: 16), labels [n] int64."""
    rows = []
    with gzip.open(path, "rt") as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append([float(v) for v in line.split(",")])
    data = torch.tensor(rows, dtype=torch.float64)
    return (data[:, :-1] / 16.0).float(), data[:, -1].long()


def stratified_split(labels, test_fraction, seed):
    """Indices (train, test) with the same share of each class in the test part (sklearn's
    train_test_split(stratify=...) when scikit-learn is there, otherwise by hand)."""
    n = labels.numel()
    try:
        from sklearn.model_selection import train_test_split

        train, test = train_test_split(list(range(n)), test_size=test_fraction,
                                       stratify=labels.numpy(), random_state=seed)
        return torch.tensor(sorted(train)), torch.tensor(sorted(test))
    except ImportError:
        pass
    generator = torch.Generator().manual_seed(seed)
    total_test = int(-(-test_fraction * n // 1))
    train, test = [], []
    for c in labels.unique().tolist():
        members = (labels == c).nonzero().flatten()
        members = members[torch.randperm(members.numel(), generator=generator)]
        take = round(members.numel() * total_test / n)
        test += members[:take].tolist()
        train += members[take:].tolist()
    return torch.tensor(sorted(train)), torch.tensor(sorted(test))


def mlp(widths):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def train_epoch(model, optimizer, x, y, batch_size, generator):
    """One epoch of shuffled batches; returns its seconds (steps only) and the mean train loss."""
    loss_fn = torch.nn.functional.cross_entropy
    start = time.perf_counter()
    order = torch.randperm(x.shape[0], generator=generator)
    loss_sum = torch.zeros(())
    correct = torch.zeros((), dtype=torch.long)
    for begin in range(0, x.shape[0], batch_size):
        index = order[begin:begin + batch_size]
        features, labels = x[index], y[index]
        logits = model(features)
        loss = loss_fn(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        loss_sum += loss.detach() * labels.numel()
        correct += (logits.detach().argmax(1) == labels).sum()
    mean_loss = loss_sum.item() / x.shape[0]
    return time.perf_counter() - start, mean_loss


def test_accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        result = (model(x).argmax(1) == y).float().mean().item()
    model.train()
    return result


def digits_cnn():
    """configs/digits-cnn.yaml's model."""
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(256, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))


def bench_digits(args, cnn=False):
    x, y = load_digits(args.data)
    if cnn:
        x = x.reshape(-1, 1, 8, 8)
    train_index, test_index = stratified_split(y, 0.2, args.seed)
    x_train, y_train = x[train_index].contiguous(), y[train_index].contiguous()
    x_test, y_test = x[test_index].contiguous(), y[test_index].contiguous()
    torch.manual_seed(args.seed)
    if cnn:
        model = digits_cnn()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=0.0005)
    else:
        model = mlp([x.shape[1], 256, 256, 10])
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(args.seed)
    epoch_seconds, accuracy, loss = [], 0.0, 0.0
    for _ in range(args.epochs):
        seconds, loss = train_epoch(model, optimizer, x_train, y_train, 64, generator)
        epoch_seconds.append(seconds)
        accuracy = test_accuracy(model, x_test, y_test)
    median = statistics.median(epoch_seconds)
    return {"train_samples": x_train.shape[0], "test_samples": x_test.shape[0],
            "epochs": args.epochs, "batch_size": 64,
            "epoch_seconds_median": median, "epoch_seconds_min": min(epoch_seconds),
            "samples_per_second": x_train.shape[0] / median,
            "final_train_loss": loss, "test_accuracy": accuracy}


# ---- 784-2048-2048-10 training step --------------------------------------------------------------

def bench_step(args):
    widths = [int(w) for w in args.step_layers.split(",")]
    torch.manual_seed(args.seed)
    model = mlp(widths)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(args.step_batch, widths[0])
    y = torch.randint(0, widths[-1], (args.step_batch,))

    def forward_loss():
        return torch.nn.functional.cross_entropy(model(x), y)

    def step():
        if args.step_precision == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = forward_loss()
        else:
            loss = forward_loss()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    seconds = []
    for _ in range(args.step_repetitions):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    return {"layers": "-".join(map(str, widths)), "batch": args.step_batch,
            "precision": args.step_precision, "repetitions": len(seconds), "median_ms": median * 1e3, "min_ms": min(seconds) * 1e3,
            "samples_per_second": args.step_batch / median}


# ---- sequence models: Transformer encoder and LSTM classifiers -----------------------------------

# model: (training batch, time steps, input features, LSTM layers, classes)
SEQUENCE_SHAPES = {"transformer": (32, 64, 469, 2, 100), "lstm": (64, 50, 128, 2, 100),
                   "text_rnn": (128, 50, 2000, 1, 2000)}


class TransformerClassifier(torch.nn.Module):
    def __init__(self, features, layers, classes):
        super().__init__()
        nn = torch.nn
        self.proj = nn.Linear(features, 256)
        layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.1,
                                           activation="relu", batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(256, classes)

    def forward(self, x):
        return self.head(self.encoder(self.proj(x)).mean(1))


class LstmClassifier(torch.nn.Module):
    def __init__(self, features, layers, classes):
        super().__init__()
        self.lstm = torch.nn.LSTM(features, 256, num_layers=layers, batch_first=True)
        self.head = torch.nn.Linear(256, classes)

    def forward(self, x):
        return self.head(self.lstm(x)[0][:, -1])


def time_repeated(work, warmup, repetitions):
    for _ in range(warmup):
        work()
    seconds = []
    for _ in range(repetitions):
        start = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - start)
    return seconds


def bench_sequence(args, model_name):
    """One training step, or one inference pass, of the model `switchyard bench sequence --model
    model_name` builds, timed like bench_step."""
    training_batch, steps, features, layers, classes = SEQUENCE_SHAPES[model_name]
    inference = args.sequence_mode == "inference"
    batch = args.sequence_batch or (1 if inference else training_batch)
    torch.manual_seed(args.seed)
    model = (TransformerClassifier if model_name == "transformer" else LstmClassifier)(
        features, layers, classes)
    x = torch.randn(batch, steps, features)
    if inference:
        model.eval()

        def work():
            with torch.inference_mode():
                model(x)
    else:
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        y = torch.randint(0, classes, (batch,))

        def work():
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    seconds = time_repeated(work, 3, args.sequence_repetitions)
    median = statistics.median(seconds)
    return {"model": model_name, "mode": args.sequence_mode, "batch": batch,
            "sequence_length": steps, "parameters": sum(p.numel() for p in model.parameters()),
            "repetitions": len(seconds), "median_ms": median * 1e3, "min_ms": min(seconds) * 1e3,
            "samples_per_second": batch / median}


# ---- matmul and add ------------------------------------------------------------------------------

def bench_matmul(args):
    n = args.matmul_size
    dtype = torch.float32 if args.matmul_dtype == "f32" else torch.bfloat16
    generator = torch.Generator().manual_seed(args.seed)
    a = (torch.rand(n, n, generator=generator) * 2 - 1).to(dtype)
    b = (torch.rand(n, n, generator=generator) * 2 - 1).to(dtype)
    c = torch.empty(n, n, dtype=dtype)
    for _ in range(3):
        torch.matmul(a, b, out=c)
    seconds = []
    for _ in range(20):
        start = time.perf_counter()
        torch.matmul(a, b, out=c)
        seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    return {"m": n, "n": n, "k": n, "dtype": args.matmul_dtype, "median_ms": median * 1e3,
            "gflops": 2.0 * n * n * n / median / 1e9}


def bench_add(args):
    """Median per-call latency: calls are timed in groups of 100 (a clock read costs about as much
    as the call), and the median over 200 groups is taken."""
    a = torch.rand(args.add_size)
    b = torch.rand(args.add_size)
    group, groups = 100, 200
    for _ in range(1000):
        torch.add(a, b)
    per_call = []
    for _ in range(groups):
        start = time.perf_counter()
        for _ in range(group):
            torch.add(a, b)
        per_call.append((time.perf_counter() - start) / group)
    return {"size": args.add_size, "median_microseconds": statistics.median(per_call) * 1e6,
            "min_microseconds": min(per_call) * 1e6}


# ---- the environment the peer really ran in ------------------------------------------------------

BLAS_NAME_PARTS = ("blas", "lapack", "mkl_rt", "libmkl", "blis")


def mapped_blas_libraries():
    """Real paths of the BLAS-like shared libraries this process has mapped."""
    found = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) < 6:
                continue
            path = fields[5].strip()
            name = os.path.basename(path)
            if name.startswith("lib") and ".so" in name and any(p in name for p in BLAS_NAME_PARTS):
                real = os.path.realpath(path)
                if real not in found:
                    found.append(real)
    return found


def blas_kind(path):
    """A short name for the BLAS build at `path` (Debian's folder names tell them apart)."""
    if "openblas-openmp" in path:
        return "openblas-openmp"
    if "openblas-pthread" in path:
        return "openblas-pthread"
    if "openblas-serial" in path:
        return "openblas-serial"
    if "/blas/" in path or "/lapack/" in path:
        return "netlib-reference"
    if "mkl" in path:
        return "mkl"
    if "blis" in path:
        return "blis"
    return "other"


def openblas_view(path):
    """OpenBLAS's own account of its threading, where the library is OpenBLAS."""
    try:
        library = ctypes.CDLL(path)
        library.openblas_get_config.restype = ctypes.c_char_p
        library.openblas_get_corename.restype = ctypes.c_char_p
        parallel = {0: "sequential", 1: "pthreads", 2: "openmp"}.get(
            library.openblas_get_parallel(), "unknown")
        return {"config": library.openblas_get_config().decode(), "parallel": parallel,
                "corename": library.openblas_get_corename().decode(),
                "coretype_variable": os.environ.get("OPENBLAS_CORETYPE"),
                "threads": library.openblas_get_num_threads()}
    except (OSError, AttributeError):
        return None


def environment_report():
    """The BLAS the process mapped after a float matmul, and every thread count that applies."""
    torch.matmul(torch.ones(64, 64), torch.ones(64, 64))  # the BLAS is loaded and used by now
    libraries = mapped_blas_libraries()
    blas = [path for path in libraries if "lapack" not in os.path.basename(path)]
    primary = blas[0] if blas else None
    report = {"blas_library": primary, "blas_kind": blas_kind(primary) if primary else "none",
              "mapped_blas_libraries": libraries,
              "openblas": openblas_view(primary) if primary else None,
              "torch_threads": torch.get_num_threads(),
              "torch_interop_threads": torch.get_num_interop_threads(),
              "environment": {name: os.environ.get(name) for name in THREAD_VARIABLES},
              "parallel_info": torch.__config__.parallel_info(),
              "blas_info": torch.__config__.show()}
    return report


def main(argv):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    result = {"peer": "pytorch", "torch_version": torch.__version__,
              "threads": torch.get_num_threads(), "environment": environment_report()}
    runners = {"digits": bench_digits, "cnn": lambda a: bench_digits(a, cnn=True),
               "step": bench_step, "transformer": lambda a: bench_sequence(a, "transformer"),
               "lstm": lambda a: bench_sequence(a, "lstm"),
               "text_rnn": lambda a: bench_sequence(a, "text_rnn"), "matmul": bench_matmul,
               "add": bench_add, "info": lambda a: {}}
    for part in args.parts:
        result[part] = runners[part](args)
    if args.json:
        print(json.dumps(result))
        return 0
    env = result["environment"]
    print("PyTorch %s, %d threads, BLAS %s (%s)" % (result["torch_version"], result["threads"],
                                                   env["blas_kind"], env["blas_library"]))
    if "digits" in result:
        d = result["digits"]
        print("digits-mlp: median epoch %.2f ms (%d steps), test accuracy %.4f"
              % (d["epoch_seconds_median"] * 1e3, -(-d["train_samples"] // 64), d["test_accuracy"]))
    if "cnn" in result:
        d = result["cnn"]
        print("digits-cnn: median epoch %.2f ms (%d steps), test accuracy %.4f"
              % (d["epoch_seconds_median"] * 1e3, -(-d["train_samples"] // 64), d["test_accuracy"]))
    if "step" in result:
        s = result["step"]
        print("step %s batch %d: median %.2f ms, %.0f samples/s"
              % (s["layers"], s["batch"], s["median_ms"], s["samples_per_second"]))
    for name in ("transformer", "lstm", "text_rnn"):
        if name in result:
            s = result[name]
            print("%s %s batch %d: median %.2f ms, %.0f samples/s"
                  % (name, s["mode"], s["batch"], s["median_ms"], s["samples_per_second"]))
    if "matmul" in result:
        m = result["matmul"]
        print("matmul %d^3 %s: median %.3f ms, %.1f GFLOP/s"
              % (m["m"], m["dtype"], m["median_ms"], m["gflops"]))
    if "add" in result:
        print("add of %d f32: median %.3f us per call" % (result["add"]["size"],
                                                          result["add"]["median_microseconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
