"""tools/check-test-skips (issue 28): a WARN-and-return in tests/ is refused; skip_backend,
skip_test and a WARN that does not end the test are not."""

import os
import subprocess
import sys

from conftest import SOURCE_DIR

SCRIPT = os.path.join(SOURCE_DIR, "tools", "check-test-skips")


def _check(tmp_path, text):
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "case_test.cpp").write_text(text)
    return subprocess.run([sys.executable, SCRIPT, str(tmp_path)], capture_output=True, text=True)


def test_a_warn_then_return_is_refused_with_its_line(tmp_path):
    result = _check(tmp_path, 'TEST_CASE("x") {\n  if (a) {\n    WARN("skipped: no " << b);\n'
                              '    // a comment\n    return;\n  }\n}\n')
    assert result.returncode == 1
    assert "tests/case_test.cpp:3: WARN then return" in result.stdout


def test_skips_through_the_helpers_and_plain_warnings_pass(tmp_path):
    result = _check(tmp_path, 'TEST_CASE("x") {\n  if (a) {\n    skip_test("root");\n    return;\n'
                              '  }\n  WARN("figure " << f);\n  CHECK(f > 0);\n}\n'
                              'int g() {\n  WARN("value");\n  return 3;\n}\n')
    assert result.returncode == 0, result.stdout


def test_the_tree_has_no_silent_early_return():
    result = subprocess.run([sys.executable, SCRIPT, SOURCE_DIR], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
