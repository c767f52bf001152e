#!/usr/bin/env python3
"""cells.py BOARD KERNEL [LOG] [--json] [--max-cells N]: a booted board's nvmem
devices and cells as people read them.

The listing is what the guest's nvmem-list payload printed on the console
(LOG, default the last `make run` of that board and kernel). The images the
board attaches (its labgrid environment, tests/lab.py) are matched to their
nvmem devices as the boot tests match them, and `nvmem-image view` decodes
every cell in its layout's terms (one decoder: the host tool's).
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))
import lab  # noqa: E402


def listing_of(log):
    """the lines between the nvmem-list payload's markers"""
    text = lab.payload_output(Path(log).read_text(errors="replace"))
    m = re.search(r"^=== NVLAB-BEGIN nvmem-list ===\n(.*?)^=== NVLAB-END nvmem-list", text,
                  re.S | re.M)
    if not m:
        raise SystemExit(f"cells: no nvmem-list output in {log} (run 'make run BOARD=… KERNEL=…' first)")
    return m.group(1)


def attached(listing, board):
    """device -> image name, for the images the board attaches"""
    devs, parts = {}, set()
    for line in listing.splitlines():
        f = line.split("\t")
        if f[0] == "device" and len(f) >= 8:
            devs[f[1]] = (f[6], "" if f[4] == "-" else f[4])
            if f[7] == "yes":
                parts.add(f[1])
    if not devs:
        return {}
    out = {}
    for a in lab.attachments(TOP / "tests" / "env" / f"{board}.yaml"):
        try:
            dev = lab.find_device(None, a, devs, mtd_partitions=parts)
        except AssertionError:
            continue  # not found: the listing shows the device without a name
        out[dev] = a.file.stem
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("board")
    ap.add_argument("kernel")
    ap.add_argument("log", nargs="?")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--max-cells", type=int, default=0)
    args = ap.parse_args()
    out = TOP / "build" / args.board / args.kernel
    log = args.log or out / "console-run.log"
    os.environ.setdefault("LG_OUT", str(out))
    os.environ.setdefault("LG_IMAGES", str(TOP / "build" / "images"))
    listing = listing_of(log)
    tool = TOP / "target" / "release" / "nvmem-image"
    if not tool.exists():
        raise SystemExit(f"cells: {tool} missing: run 'make setup' first")
    cmd = [str(tool), "view", "-"]
    cmd += [f"--attached={d}={i}" for d, i in sorted(attached(listing, args.board).items())]
    cmd += ["--json"] if args.json else ["--max-cells", str(args.max_cells)]
    return subprocess.run(cmd, input=listing, text=True).returncode


if __name__ == "__main__":
    sys.exit(main())
