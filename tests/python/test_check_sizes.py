"""tools/check-sizes (issue 28): a file in core/src over 800 lines and a function over 100 lines
are refused, naming them; a '// Long:' reason above a long function, classes and namespaces of
any length, and declarations pass."""

import os
import subprocess
import sys

from conftest import SOURCE_DIR

SCRIPT = os.path.join(SOURCE_DIR, "tools", "check-sizes")


def _check(tmp_path, text, name="layer/file.cpp"):
    path = tmp_path / "core" / "src" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return subprocess.run([sys.executable, SCRIPT, str(tmp_path)], capture_output=True, text=True)


def _function(name, lines, indent=""):
    body = "".join(f"{indent}  x += {k};\n" for k in range(lines - 3))
    return f"{indent}int {name}(int x) {{\n{body}{indent}  return x;\n{indent}}}\n"


def test_a_long_function_is_refused_with_its_line(tmp_path):
    text = '#include <cstdio>\n\nnamespace a {\nnamespace {\n' + _function("f", 102) + '}\n}\n'
    result = _check(tmp_path, text)
    assert result.returncode == 1
    assert "core/src/layer/file.cpp:5: a function of 102 lines" in result.stdout


def test_a_long_method_in_a_class_is_refused(tmp_path):
    text = "class A {\n public:\n" + _function("g", 120, "  ") + "};\n"
    result = _check(tmp_path, text)
    assert result.returncode == 1
    assert "core/src/layer/file.cpp:3: a function of 120 lines" in result.stdout


def test_a_reason_classes_and_short_functions_pass(tmp_path):
    text = ("// The table.\n// Long: one line an entry.\n" + _function("table", 150) +
            "struct S {\n" + "".join(f"  int m{k};\n" for k in range(150)) + "};\n" +
            _function("h", 100) + "int declared(int x);\n")
    result = _check(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_a_long_file_is_refused(tmp_path):
    result = _check(tmp_path, "int v;\n" * 801, "layer/long.h")
    assert result.returncode == 1
    assert "core/src/layer/long.h: 801 lines, more than 800" in result.stdout


def test_the_tree_passes():
    result = subprocess.run([sys.executable, SCRIPT, SOURCE_DIR], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
