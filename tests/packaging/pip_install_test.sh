#!/usr/bin/env bash
# `pip wheel --no-build-isolation .` from the build under test (SWITCHYARD_BUILD_DIR: nothing is
# compiled again), the wheel installed offline into a fresh virtual environment that sees Debian's
# NumPy, then, from a folder outside the checkout and without PYTHONPATH: a training run, a
# prediction from its checkpoint and one from an ONNX file, and `python3 -m switchyard` (the
# CLI inside the package) listing the package's own plugins. Prints the seconds each step took.
#
#   tests/packaging/pip_install_test.sh SOURCE_DIR BUILD_DIR [PYTHON]
set -euo pipefail
source_dir=$(cd "$1" && pwd)
build_dir=$(cd "$2" && pwd)
python=${3:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Nothing of the build tree may leak in: the installed package must stand on its own.
unset PYTHONPATH SWITCHYARD_PLUGIN_PATH
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1
step() { printf 'packaging: %-28s %3d s\n' "$1" $((SECONDS - started)); }

started=$SECONDS
SWITCHYARD_BUILD_DIR=$build_dir "$python" -m pip wheel -q --no-build-isolation --no-deps \
  -w "$work/dist" "$source_dir"
wheel=$(echo "$work"/dist/switchyard-*.whl)
step "wheel built"
# Without ensurepip: Debian's pip, seen through the system site, installs into the venv.
"$python" -m venv --system-site-packages --without-pip "$work/venv"
"$work/venv/bin/python" -m pip install -q "$wheel"  # numpy: Debian's, through the system site
step "installed into a fresh venv"

package=$(cd "$work" && "$work/venv/bin/python" -c 'import os, switchyard; print(os.path.dirname(switchyard.__file__))')
[[ $package == "$work/venv/"* ]] || { echo "switchyard imported from $package"; exit 1; }
# Every binary in the package finds its libraries inside it, never in the build tree.
for binary in "$package"/_native*.so "$package"/bin/switchyard "$package"/lib/switchyard/*.so; do
  if readelf -d "$binary" | grep -E 'R(UN)?PATH' | grep -q -F "$build_dir"; then
    echo "$binary has an RPATH into $build_dir"; exit 1
  fi
done

cd "$work"
"$work/venv/bin/python" - "$source_dir" <<'PYTHON'
import os, subprocess, sys
import numpy, switchyard

source = sys.argv[1]
metrics = switchyard.run({
    "seed": 0, "task": "train",
    "data": {"dataset": os.path.join(source, "data", "iris.csv"), "test_fraction": 0.2,
             "scale": "standard"},
    "optimizer": {"type": "adam", "lr": 0.01},
    "train": {"epochs": 20, "batch_size": 16, "checkpoint": "iris.ckpt", "progress": "none"}})
assert metrics["test_accuracy"] >= 0.8, metrics["test_accuracy"]
rows = numpy.loadtxt(os.path.join(source, "data", "iris.csv"), delimiter=",", skiprows=1)
probabilities = switchyard.Predictor("iris.ckpt").predict(rows[:, :4])
assert probabilities.shape == (150, 3), probabilities.shape
numpy.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)
assert (probabilities.argmax(axis=1) == rows[:, 4]).mean() >= 0.8

onnx = switchyard.Predictor(os.path.join(source, "tests", "onnx", "models", "mlp_gelu",
                                         "model.onnx"))
assert onnx.predict(numpy.zeros((3, onnx.input_width))).shape[0] == 3

cli = [sys.executable, "-m", "switchyard"]
plugins = subprocess.run(cli + ["plugins"], check=True, capture_output=True, text=True).stdout
package = os.path.dirname(switchyard.__file__)
assert os.path.join(package, "lib", "switchyard") in plugins and "reference" in plugins, plugins
devices = subprocess.run(cli + ["devices"], check=True, capture_output=True, text=True).stdout
assert "reference:0" in devices, devices
with open("cli.yaml", "w") as f:
    f.write(f"data: {{dataset: {os.path.join(source, 'data', 'iris.csv')}}}\n"
            "train: {epochs: 2, checkpoint: cli.ckpt, progress: none}\n")
run = subprocess.run(cli + ["run", "cli.yaml"], capture_output=True, text=True)
assert run.returncode == 0 and os.path.isfile("cli.ckpt"), run.stdout + run.stderr
print(f"packaging: iris test accuracy {metrics['test_accuracy']:.3f}; the CLI: {cli}")
PYTHON
step "import, fit, predict, CLI"
