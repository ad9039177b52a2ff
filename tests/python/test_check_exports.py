"""tools/check-exports (issue 28): libswitchyard_core exports the public API only. An internal of
the core, a symbol of another library and a C function the headers do not declare are refused and
named; public classes (with their vtables and thunks), functions and the C API pass."""

import os
import subprocess
import sys

from conftest import SOURCE_DIR

SCRIPT = os.path.join(SOURCE_DIR, "tools", "check-exports")

HEADER = """// A public header. switchyard::Hidden is only named in this comment.
#pragma once
namespace switchyard {
class Tensor { public: virtual ~Tensor(); };
Tensor relu(const Tensor& x);
}
extern "C" int switchyard_runtime_create(void);
"""

PUBLIC = [
    "0000000000001000 A SWITCHYARD_C_1",
    "0000000000001010 T switchyard_runtime_create@@SWITCHYARD_C_1",
    # switchyard::relu(switchyard::Tensor const&), Tensor's destructor, vtable and a thunk
    "0000000000001020 T _ZN10switchyard4reluERKNS_6TensorE@@SWITCHYARD_CXX_0",
    "0000000000001030 T _ZN10switchyard6TensorD1Ev@@SWITCHYARD_CXX_0",
    "0000000000001040 V _ZTVN10switchyard6TensorE@@SWITCHYARD_CXX_0",
    "0000000000001050 W _ZThn8_N10switchyard6TensorD1Ev@@SWITCHYARD_CXX_0",
    # std::vector<unsigned char> switchyard::relu<std::vector<unsigned char>>(): demangled, a
    # template function starts with its return type; mangled, with its own name
    "0000000000001060 W _ZN10switchyard4reluISt6vectorIhSaIhEEEET_v@@SWITCHYARD_CXX_0",
]


def _check(tmp_path, symbols):
    headers = tmp_path / "include"
    headers.mkdir(exist_ok=True)
    (headers / "api.h").write_text(HEADER)
    listing = tmp_path / "symbols.txt"
    listing.write_text("\n".join(symbols) + "\n")
    return subprocess.run([sys.executable, SCRIPT, "--headers", str(headers), "--symbols",
                           str(listing)], capture_output=True, text=True)


def test_the_public_api_passes(tmp_path):
    result = _check(tmp_path, PUBLIC)
    assert result.returncode == 0, result.stdout
    assert "6 exported symbols" in result.stdout


def test_an_internal_of_the_core_is_refused_by_name(tmp_path):
    result = _check(tmp_path, PUBLIC + [
        "0000000000002000 T _ZN10switchyard6detail15read_file_bytesEPKc@@SWITCHYARD_CXX_0",
        "0000000000002010 V _ZTIN10switchyard6HiddenE@@SWITCHYARD_CXX_0",
    ])
    assert result.returncode == 1
    assert "switchyard::detail is not in the public headers: 1" in result.stdout
    assert "switchyard::Hidden is not in the public headers: 1" in result.stdout  # comments don't count
    assert "switchyard::detail::read_file_bytes(char const*)" in result.stdout  # shown demangled


def test_another_librarys_symbol_and_an_undeclared_c_function_are_refused(tmp_path):
    result = _check(tmp_path, PUBLIC + [
        "0000000000003000 T _ZN4YAML4NodeC1Ev",
        # switchyard::Tensor* std::uninitialized_copy<switchyard::Tensor*, switchyard::Tensor*>(...):
        # a standard-library instantiation whose demangled name starts with "switchyard::"
        "0000000000003010 W _ZSt18uninitialized_copyIPN10switchyard6TensorES2_ET0_T_S4_S3_@@SWITCHYARD_CXX_0",
        "0000000000003020 T switchyard_internal_helper@@SWITCHYARD_C_1",
    ])
    assert result.returncode == 1
    assert "another library's symbol leaked through the version script): 2" in result.stdout
    assert "YAML::Node::Node()" in result.stdout
    assert "a C function the public headers do not declare: 1" in result.stdout
