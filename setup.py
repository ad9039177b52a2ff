"""pip install . / pip wheel . : the switchyard package with its native parts inside it.

The C++ tree is built by CMake, either here (build-py/, with the tests off: with a warm ccache
nearly every object is a cache hit) or not at all when SWITCHYARD_BUILD_DIR names a tree that is
already built (CI's test stage, tests/packaging). `cmake --install` of that tree into a private
staging prefix then gives every binary its install RPATH, and the package is laid out as a small
prefix of its own:

    switchyard/              the Python files and _native (RPATH $ORIGIN/lib)
    switchyard/lib/          libswitchyard_core.so.X (its SONAME only: wheels hold no symlinks)
    switchyard/lib/switchyard/   the plugins: the core looks for them beside itself
    switchyard/bin/switchyard    the CLI (RPATH $ORIGIN/../lib), run by `python3 -m switchyard`

so the core finds its plugins relative to the installed package, as it does in any prefix
(core/src/runtime/search_path.cpp).

Environment: SWITCHYARD_BUILD_DIR (a built CMake tree to take instead of building build-py/),
SWITCHYARD_CMAKE_ARGS (extra arguments for configuring build-py/), CMAKE_BUILD_PARALLEL_LEVEL.
"""

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(switchyard VERSION ([0-9.]+)", f.read()).group(1)


def log(message):
    print(f"switchyard setup.py: {message}", file=sys.stderr, flush=True)


def built_tree():
    """A CMake build folder holding the core, the plugins, the CLI and the Python module."""
    given = os.environ.get("SWITCHYARD_BUILD_DIR")
    if given:
        build = os.path.abspath(given)
        if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
            sys.exit(f"SWITCHYARD_BUILD_DIR={given} is not a configured CMake build folder")
        log(f"taking the build in {build} as it is (SWITCHYARD_BUILD_DIR)")
        return build
    build = os.path.join(ROOT, "build-py")
    # As tools/lib/setup.sh: ccache hashes paths under the checkout relative to it, and not the
    # build folder, so build-py/ reuses what build/ (or any checkout's build) compiled. The
    # compile commands hold absolute paths (-I/path/to/checkout/...): without these, every object
    # would be compiled again.
    os.environ.setdefault("CCACHE_BASEDIR", ROOT)
    os.environ.setdefault("CCACHE_NOHASHDIR", "true")
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        configure = ["cmake", "-S", ROOT, "-B", build, "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release", "-DSWITCHYARD_BUILD_TESTS=OFF",
                     f"-DPython3_EXECUTABLE={sys.executable}"]
        configure += shlex.split(os.environ.get("SWITCHYARD_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
    subprocess.run(["cmake", "--build", build], check=True)
    return build


def soname(library):
    """The SONAME of a shared library (what the binaries linking it ask the loader for)."""
    dynamic = subprocess.run(["readelf", "-d", library], check=True, capture_output=True,
                             text=True).stdout
    found = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dynamic)
    return found.group(1) if found else os.path.basename(library)


def cache_value(build, name):
    with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
        found = re.search(rf"^{name}:[A-Z]+=(.*)$", f.read(), re.MULTILINE)
    return found.group(1) if found else None


def stage_native_parts(build, package):
    """Installs `build` into a staging prefix and copies its native parts into `package`."""
    libdir = cache_value(build, "CMAKE_INSTALL_LIBDIR") or "lib"
    bindir = cache_value(build, "CMAKE_INSTALL_BINDIR") or "bin"
    with tempfile.TemporaryDirectory(prefix="switchyard-stage-") as prefix:
        subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True,
                       stdout=subprocess.DEVNULL)
        staged = glob.glob(os.path.join(prefix, libdir, "python3*", "*-packages", "switchyard"))
        if len(staged) != 1 or not glob.glob(os.path.join(staged[0], "_native*.so")):
            sys.exit(f"{build} has no Python module (switchyard_python): it needs python3-dev, "
                     "pybind11-dev and libdlpack-dev, and no sanitizer")
        for name in os.listdir(staged[0]):
            shutil.copy2(os.path.join(staged[0], name), os.path.join(package, name))
        os.makedirs(os.path.join(package, libdir), exist_ok=True)
        core = os.path.join(prefix, libdir, "libswitchyard_core.so")
        needed = soname(core)
        shutil.copy2(os.path.realpath(core), os.path.join(package, libdir, needed))
        plugins = os.path.join(package, libdir, "switchyard")
        shutil.rmtree(plugins, ignore_errors=True)
        shutil.copytree(os.path.join(prefix, libdir, "switchyard"), plugins, symlinks=False)
        os.makedirs(os.path.join(package, "bin"), exist_ok=True)
        shutil.copy2(os.path.join(prefix, bindir, "switchyard"),
                     os.path.join(package, "bin", "switchyard"))
    return libdir


class BuildPyWithNative(build_py):
    """build_py, then the CMake build's core library, plugins, CLI and Python module."""

    def run(self):
        super().run()
        package = os.path.join(self.build_lib, "switchyard")
        libdir = stage_native_parts(built_tree(), package)
        log(f"native parts in {package}: _native, {libdir}/, {libdir}/switchyard/, bin/switchyard")


class NativeDistribution(Distribution):
    """A platform wheel (cp3X-cp3X-linux_*): the package holds shared libraries."""

    def has_ext_modules(self):
        return True


# setuptools' own folders: not build/, which is tools/quickstart's CMake build, and beside the
# CMake tree taken, so that a test packaging CI's build does not share them with a `pip install .`.
scratch = os.path.join(os.path.abspath(os.environ.get("SWITCHYARD_BUILD_DIR") or
                                       os.path.join(ROOT, "build-py")), "setuptools")
os.makedirs(scratch, exist_ok=True)
setup(
    version=project_version(),
    packages=["switchyard"],
    package_dir={"switchyard": "python/switchyard"},
    cmdclass={"build_py": BuildPyWithNative},
    distclass=NativeDistribution,
    zip_safe=False,
    options={"build": {"build_base": scratch}, "egg_info": {"egg_base": scratch}},
)
