#!/usr/bin/env python3
"""real_dtb.py ENV.yaml OUT.dtb: the device tree a real board boots
(tests/env/real/): the board's own DTS from our patched 6.1 tree
(build/src/linux-6.1), compiled as the kernel build compiles it (cpp with
the tree's DT includes, then dtc), with the environment's overlay applied
by fdtoverlay. Both come from the environment's target options `base_dts`
(a path in the kernel tree) and `overlay` (a path in this repository), so
the environment is the one description of the real board. fdtoverlay
fails when a fragment's target is not in the board's tree."""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

TOP = Path(__file__).resolve().parent.parent
TREE = Path(os.environ.get("NVLAB_BUILD", TOP / "build")) / "src" / "linux-6.1"


def options(env_path):
    from labgrid import Environment
    # the image paths' templates need LG_OUT, whatever its value
    with mock.patch.dict(os.environ, LG_OUT=os.environ.get("LG_OUT", "")):
        config = Environment(str(env_path)).config
    base = config.get_target_option("main", "base_dts", None)
    overlay = config.get_target_option("main", "overlay", None)
    if not base or not overlay:
        raise ValueError(f"{env_path}: target option base_dts or overlay missing")
    return base, overlay


def build(env_path, out, tree=TREE):
    base, overlay = options(env_path)
    dts = tree / base
    if not dts.is_file():
        raise FileNotFoundError(f"{dts}: no such DTS in the kernel tree (make kernel unpacks it)")
    arch_dts = dts.parents[0]
    while arch_dts.name != "dts":
        arch_dts = arch_dts.parent
    with tempfile.TemporaryDirectory(prefix="nvlab-real-dtb-") as tmp:
        pre, base_dtb, dtbo = (Path(tmp) / n for n in ("base.dts", "base.dtb", "overlay.dtbo"))
        cpp = ["cpp", "-nostdinc", "-undef", "-D__DTS__", "-x", "assembler-with-cpp",
               "-I", str(arch_dts), "-I", str(dts.parent), "-I", str(tree / "include"),
               "-I", str(tree / "scripts/dtc/include-prefixes"), "-o", str(pre), str(dts)]
        for cmd in (cpp,
                    ["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(base_dtb), str(pre)],
                    ["dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", str(dtbo), str(TOP / overlay)],
                    ["fdtoverlay", "-i", str(base_dtb), "-o", str(out), str(dtbo)]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError(f"{env_path}: {cmd[0]} failed: {(r.stderr or r.stdout).strip()}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("env")
    ap.add_argument("out")
    args = ap.parse_args()
    try:
        build(args.env, args.out)
    except (ValueError, OSError, RuntimeError) as e:
        sys.exit(f"real_dtb: {e}")
    print(f"{args.out}: {options(args.env)[0]} + {options(args.env)[1]}")


if __name__ == "__main__":
    main()
