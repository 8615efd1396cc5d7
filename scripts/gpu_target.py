#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The target description (configs/targets/<name>.json) of the GPU a device call got, for
`portbench tune --target NAME --gpu CARD`: a record is made for the card it was measured on, so
an H100 lent where an H200 was asked for tunes for h100 and cannot replace the H200's choices.

    scripts/gpu_target.py "NVIDIA H200"              -> "h200<TAB>NVIDIA H200"
    scripts/gpu_target.py --target h200 "<any name>" -> that description's name and card

Exit 1, one line, when no description names the card (or --target names no description)."""
import argparse
import json
import sys
from pathlib import Path

TARGETS = Path(__file__).resolve().parents[1] / "configs" / "targets"


def is_gpu(name: str, card: str) -> bool:
    """As `portbench tune --gpu` decides: that name, or it and further words."""
    return bool(card) and (name == card or name.startswith(card + " "))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("gpu", help="the device's name (nvidia-smi --query-gpu=name)")
    p.add_argument("--target", help="this description, whatever the device")
    p.add_argument("--dir", default=str(TARGETS), help="folder of the target descriptions")
    args = p.parse_args()
    found = []
    for f in sorted(Path(args.dir).glob("*.json")):
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
            found.append((doc["name"], doc["gpu"]))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"gpu_target: {f}: no \"name\" and \"gpu\" ({e})", file=sys.stderr)
            return 1
    for name, card in found:
        if (name == args.target) if args.target else is_gpu(args.gpu, card):
            print(f"{name}\t{card}")
            return 0
    what = f"--target {args.target}" if args.target else f"the GPU {args.gpu!r}"
    print(f"gpu_target: {args.dir}: no target description for {what}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
