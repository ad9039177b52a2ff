"""python3 -m switchyard devices | doctor [--config FILE] [--json]: the CLI's commands from Python
(probing in this process)."""

import argparse
import json
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


def main(argv=None):
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
