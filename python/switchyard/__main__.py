"""python3 -m switchyard ARGS: the switchyard CLI, as `switchyard ARGS`.

The C++ CLI is executed where it is found: inside the package (bin/switchyard, as `pip install .`
puts it), beside a build tree's package (build/python -> build/bin) or an installed one
(<prefix>/lib/python3.X/dist-packages -> <prefix>/bin). Without it, only devices, doctor and
version run, in this process (probing in-process, see docs/embedding.md)."""

import argparse
import json
import os
import sys

import switchyard


def _print_devices(listing):
    for d in listing:
        if d["type"] in ("none", "plugin folder"):
            print(f"  {d['id']}: no devices ({d['reason']})")
            continue
        mark = "* " if d["selected"] else "  "
        state = "usable" if d["usable"] else "unusable"
        print(f"{mark}{d['id']}  {d['name']}  [{d['type']}]  {state}")
        if d["settings"]:
            print(f"      settings: {d['settings']}")
        if d["reason"]:
            print(f"      reason: {d['reason']}")


def _print_doctor(report):
    for p in report["plugins"]:
        print(f"[{p['status']}] {p['name']} {p['version']}  ({p['path']})")
        if p["reason"]:
            print(f"    reason: {p['reason']}\n    hint: {p['hint']}")
    for d in report["devices"]:
        print(f"    {d['id']}  {d['name']}  [{d['type']}]  "
              f"smoke test: {'passed' if d['usable'] else 'FAILED'}")
        if not d["usable"]:
            print(f"      reason: {d['reason']}\n      hint: {d['hint']}")
    print(f"selection: {report['selected'] or 'nothing usable'}")


def cli_path():
    """The switchyard CLI binary that belongs to this package, or None."""
    package = os.path.dirname(os.path.abspath(__file__))
    for relative in ("bin", "../../bin", "../../../../bin"):
        candidate = os.path.normpath(os.path.join(package, relative, "switchyard"))
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def main(argv=None):
    binary = cli_path()
    if binary is not None:
        # The process becomes the CLI: its exit code, its output and its signals are the CLI's.
        sys.stdout.flush()
        os.execv(binary, ["switchyard"] + list(sys.argv[1:] if argv is None else argv))
    return in_process(argv)


def in_process(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m switchyard")
    parser.add_argument("command", choices=["devices", "doctor", "version"])
    parser.add_argument("--config", help="YAML file")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    try:
        if args.command == "version":
            print(switchyard.__version__)
            return 0
        if args.command == "devices":
            listing = switchyard.devices(args.config)
            print(json.dumps(listing, indent=2)) if args.json else _print_devices(listing)
            return 0
        report = switchyard.doctor(args.config)
        print(json.dumps(report, indent=2)) if args.json else _print_doctor(report)
        return report["exit_code"]
    except switchyard.Error as error:
        print(f"switchyard: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
