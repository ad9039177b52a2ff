"""The README's first hour works as written: every shell command of its section runs, in order, in
a copy of examples/first-hour beside the build, and prints what the README shows."""

import os
import re
import shutil
import subprocess

SOURCE_DIR = os.environ.get("SWITCHYARD_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
CLI = os.environ.get("SWITCHYARD_CLI", os.path.join(SOURCE_DIR, "build", "bin", "switchyard"))
SECTION = "## Your own data in the first hour"


def first_hour():
    with open(os.path.join(SOURCE_DIR, "README.md")) as readme:
        text = readme.read()
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    return text[start:end]


def blocks(section, language):
    return re.findall(r"^```" + language + r"\n(.*?)^```$", section, flags=re.S | re.M)


def test_the_yaml_shown_is_the_example_file():
    (shown,) = blocks(first_hour(), "yaml")
    with open(os.path.join(SOURCE_DIR, "examples", "first-hour", "flowers.yaml")) as example:
        data = example.read()
    for line in shown.splitlines():
        if not line.startswith("#"):
            assert line in data.splitlines(), line


def test_every_first_hour_command_runs_as_written(tmp_path):
    section = first_hour()
    script = "\n".join(blocks(section, "sh"))
    assert "switchyard run flowers.yaml" in script and "switchyard predict" in script
    # The checkout as the README's reader has it: the build where tools/quickstart put it, and the
    # example folder (copied, so that the runs/ it makes stays out of the source tree).
    build_dir = os.path.dirname(os.path.dirname(os.path.abspath(CLI)))
    os.symlink(build_dir, tmp_path / "build")
    shutil.copytree(os.path.join(SOURCE_DIR, "examples", "first-hour"),
                    tmp_path / "examples" / "first-hour")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHYARD_")}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    # What the README says the run prints, it prints.
    (shown_defaults,) = [b for b in blocks(section, "text") if b.startswith("defaults (not")]
    assert shown_defaults.strip() in output, output
    (shown_predictions,) = [b for b in blocks(section, "text") if b.startswith("id,predicted")]
    header, first_row = shown_predictions.splitlines()[:2]
    assert header in done.stdout
    assert first_row.split(",")[:2] == ["new-1", "setosa"]
    assert "\nnew-1,setosa," in done.stdout
    predictions = tmp_path / "examples" / "first-hour" / "predictions.csv"
    assert predictions.read_text().startswith(header)
    assert (tmp_path / "examples" / "first-hour" / "runs" / "flowers" / "model.ckpt").exists()
    # The Python lines: the classifier's predictions, one per new flower.
    assert re.search(r"\['setosa' 'versicolor'", done.stdout), done.stdout
