#!/usr/bin/env python3
"""Hostile images on a board: every description in eeprom-images/hostile/
(a well-formed image plus named defects, its `[layout]` and `expect`; see
eeprom-images/README.md) attached as a RAM-backed EEPROM of exactly the
image's size, with the nvmem-layout node the description asks for.

  hostile.py dtso ADDRESS [OUT] [--base DTB]
                                  the device-tree overlay: one nvmem-rmem
                                  node per description, labelled with its
                                  name (the image QEMU loads there), from
                                  ADDRESS on, each on a 4 KiB boundary; reg
                                  takes the address and size cells of the
                                  base tree DTB's reserved-memory (else its
                                  root), 2 and 2 without a base
  hostile.py list                 name, layout, expected outcome, size

A board attaches them where its board.conf sets HOSTILE_RMEM (or
HOSTILE_RMEM_<KERNEL>) to the first address: scripts/build-dtb.sh applies
the overlay after the board's own, tests/lab.py promises each image its
layout (tests/boot/test_cells.py then holds the kernel to `nvmem-image
cells`: no cells and an error naming the device for a rejected image).
"""
import functools
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
DIR = TOP / "eeprom-images" / "hostile"
TOOL = TOP / "target" / "release" / "nvmem-image"
ALIGN = 0x1000
# address and size cells of reg where no base tree says otherwise
DEFAULT_CELLS = (2, 2)


class HostileError(Exception):
    """A hostile description that cannot be attached."""


def descriptions():
    return sorted(DIR.glob("*.toml"))


_built = []


def tool():
    """the nvmem-image binary, built (or brought up to date) once first"""
    if _built:
        return TOOL
    r = subprocess.run([str(TOP / "scripts" / "cargo.sh"), "build", "-q", "--release", "-p", "nvmem-image"],
                       capture_output=True, text=True)
    if r.returncode:
        raise HostileError(f"building nvmem-image failed:\n{r.stderr.strip()[-2000:]}")
    _built.append(True)
    return TOOL


def _run(*args):
    r = subprocess.run([str(tool()), *map(str, args)], capture_output=True, text=True)
    if r.returncode:
        raise HostileError(r.stderr.strip() or f"nvmem-image {args[0]} failed")
    return r.stdout


def meta(path):
    """(layout compatible, expected outcome) of a description"""
    with open(path, "rb") as f:
        d = tomllib.load(f)
    layout = d.get("layout", {}).get("compatible")
    if not layout or d.get("expect") not in ("rejected", "cells"):
        raise HostileError(f"{path}: a hostile description needs [layout] compatible and "
                           "expect = \"rejected\" or \"cells\"")
    return layout, d["expect"]


def image_size(path):
    """the size of the image a description builds (its device's size)"""
    with tempfile.NamedTemporaryFile(suffix=".bin") as img:
        _run("build", path, "-o", img.name)
        size = Path(img.name).stat().st_size
    if size == 0:
        raise HostileError(f"{path}: an empty image cannot be attached")
    return size


def cells_of(base):
    """(#address-cells, #size-cells) the overlay's reserved-memory node
    must keep in the flattened tree `base`: those of its reserved-memory
    node if it has one (the overlay merges into it), else the root's"""
    import libfdt
    try:
        with open(base, "rb") as f:
            fdt = libfdt.Fdt(f.read())
    except libfdt.FdtException as e:
        raise HostileError(f"{base}: no flattened device tree ({e})") from None
    quiet = [libfdt.NOTFOUND]
    node = fdt.path_offset("/reserved-memory", quiet)
    if node < 0:
        node = 0
    cells = []
    for name, default in (("#address-cells", 2), ("#size-cells", 1)):
        prop = fdt.getprop(node, name, quiet)
        cells.append(default if isinstance(prop, int) else prop.as_uint32())
    if not all(n in (1, 2) for n in cells):
        raise HostileError(f"{base}: {fdt.get_path(node)}: address/size cells {cells}, "
                           "only 1 or 2 are supported")
    return tuple(cells)


def _reg(value, cells, what, node):
    if value >> (32 * cells):
        raise HostileError(f"{node}: {what} {value:#x} does not fit in {cells} cell(s)")
    return " ".join(f"{(value >> (32 * i)) & 0xffffffff:#x}" for i in reversed(range(cells)))


@functools.lru_cache(maxsize=4)
def overlay(address, cells=DEFAULT_CELLS):
    """DTS text of the overlay attaching every hostile image from `address`,
    reg in `cells` (address and size cells of the reserved-memory node)"""
    nodes = []
    at = address
    for path in descriptions():
        size = image_size(path)
        node = _run("layout-node", path, "--indent", "3")
        reg = f"{_reg(at, cells[0], 'address', path.stem)} {_reg(size, cells[1], 'size', path.stem)}"
        nodes.append(f"\t\t/* {path.relative_to(TOP)} */\n"
                     f"\t\thostile_{path.stem.replace('-', '_')}: eeprom@{at:x} {{\n"
                     f"\t\t\tcompatible = \"nvmem-rmem\";\n"
                     f"\t\t\tlabel = \"{path.stem}\";\n"
                     f"\t\t\treg = <{reg}>;\n\n{node}\t\t}};\n")
        at += (size + ALIGN - 1) // ALIGN * ALIGN
    return ("// SPDX-License-Identifier: GPL-2.0\n"
            "/* Generated by scripts/hostile.py from eeprom-images/hostile/: do not edit. */\n"
            "/dts-v1/;\n/plugin/;\n\n&{/} {\n\treserved-memory {\n"
            f"\t\t#address-cells = <{cells[0]}>;\n\t\t#size-cells = <{cells[1]}>;\n\t\tranges;\n\n"
            + "\n".join(nodes) + "\t};\n};\n")


def main(argv):
    try:
        cells = DEFAULT_CELLS
        if argv[:1] == ["dtso"] and "--base" in argv[:-1]:
            at = argv.index("--base")
            cells = cells_of(argv[at + 1])
            argv = argv[:at] + argv[at + 2:]
        if len(argv) in (2, 3) and argv[0] == "dtso":
            text = overlay(int(argv[1], 0), cells)
            if len(argv) == 3:
                Path(argv[2]).write_text(text)
            else:
                sys.stdout.write(text)
            return 0
        if argv == ["list"]:
            for path in descriptions():
                layout, expect = meta(path)
                size = image_size(path)
                print(f"{path.stem:40} {layout:28} {expect:9} {size}")
            return 0
    except (HostileError, ValueError, OSError) as e:
        print(f"hostile.py: {e}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
