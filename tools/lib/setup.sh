# Shared by tools/quickstart and tools/test: install what is missing, configure, build.
# Sourced, not run. Idempotent and quiet when nothing is missing.

SWITCHYARD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Debian packages the build and the test suite need. python3-torch (the benchmark peer) is large
# and installed only by tools/bench/compare; python3-sklearn is the peer the per-class metrics are
# checked against (tests/cli/class_metrics_test.cpp), so CI runs that comparison too. pybind11,
# NumPy, pytest, Dask (python3-distributed) and DLPack build and test the Python package (python/);
# scikit-learn and pandas, its estimators (switchyard.Classifier, tests/python/test_estimators.py).
# Open MPI builds the MPI communicator and runs tests/distributed under mpirun; without it the
# core, the CLI and tools/quickstart still build and run (one process), and those tests are not
# registered. ONNX import and export (core/src/formats) build on Debian's protobuf and the onnx.proto
# classes of libonnx-dev; python3-onnx's checker validates our exports in tests/onnx.
# pip, setuptools, wheel and venv: `pip install --no-build-isolation .` (setup.py), which
# tests/packaging (ctest label packaging) runs offline into a fresh virtual environment.
# tools/fuzz (CI's fuzz stage): clang and its sanitizer and libFuzzer runtimes
# (libclang_rt.fuzzer, asan, ubsan), which clang only recommends and --no-install-recommends skips.
SWITCHYARD_FUZZ_PACKAGES=(clang libclang-rt-14-dev)
# The benchmark peers (tools/bench/compare and tools/bench/zoo install them when missing, about
# 700 MB, which is why the quickstart does not): PyTorch with the OpenMP OpenBLAS, torchvision's
# architectures and ONNX for the zoo's exports, scikit-learn for compare's split. ONNX Runtime is
# the npm package onnxruntime-node, installed by the zoo with npm into build/zoo/node; npm comes
# with a NodeSource nodejs, so Debian's npm package is only installed where no npm is found.
SWITCHYARD_PEER_PACKAGES=(python3-torch python3-torchvision python3-onnx python3-sklearn
  libopenblas0-openmp)
sy_ensure_npm() { command -v npm >/dev/null || sy_ensure_packages npm; }
SWITCHYARD_PACKAGES=(
  cmake ninja-build g++ ccache pkg-config zlib1g-dev clang-format
  libboost-dev libboost-program-options-dev libyaml-cpp-dev nlohmann-json3-dev catch2
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  libvulkan-dev glslc spirv-tools mesa-vulkan-drivers vulkan-validationlayers
  python3-sklearn python3-pandas
  pybind11-dev python3-dev python3-numpy python3-pytest python3-distributed libdlpack-dev
  openmpi-bin libopenmpi-dev
  libonnx-dev libprotobuf-dev python3-onnx
  python3-pip python3-setuptools python3-wheel python3-venv
)

# ccache: paths under the checkout are hashed relative to it, and the build folder is not hashed
# into the sanitizer build's debug information, so that a fresh clone at another path (CI's) reuses
# what an earlier build of the same sources compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$SWITCHYARD_ROOT}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}

sy_log() { printf 'switchyard: %s\n' "$*" >&2; }

sy_as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    sy_log "need root to run: $*"; return 1; fi
}

# Installs the packages of the list (and any given as arguments) that are not installed yet.
sy_ensure_packages() {
  local missing=() p
  for p in "${SWITCHYARD_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  sy_log "installing missing Debian packages: ${missing[*]}"
  sy_as_root apt-get update -qq
  sy_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# sy_configure_and_build BUILD_DIR [extra cmake args...]
# Quiet on success; on a failure prints the end of the build log. SY_BUILD_TARGETS (a
# space-separated list) builds only those targets instead of everything.
sy_configure_and_build() {
  local build_dir=$1
  shift
  local generator_args=()
  [[ -f $build_dir/build.ninja ]] || generator_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
  cmake "${generator_args[@]}" -S "$SWITCHYARD_ROOT" -B "$build_dir" "$@" >"$build_dir.configure.log" 2>&1 || {
    cat "$build_dir.configure.log" >&2
    return 1
  }
  # Plugins that cannot be built here were announced at configure time; repeat them.
  if [[ -s $build_dir/skipped-plugins.txt ]]; then
    sed 's/^/switchyard: plugin skipped: /' "$build_dir/skipped-plugins.txt" >&2
  fi
  local rc=0
  local targets=()
  read -r -a targets <<<"${SY_BUILD_TARGETS:-}"
  ninja -C "$build_dir" -j "$(nproc)" "${targets[@]}" >"$build_dir.build.log" 2>&1 || rc=$?
  if ((rc != 0)); then
    grep -E -A12 'FAILED|error:' "$build_dir.build.log" | head -n 120 >&2
    sy_log "build failed; the whole log is $build_dir.build.log"
    return "$rc"
  fi
}
