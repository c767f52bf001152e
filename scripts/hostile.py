#!/usr/bin/env python3
"""Hostile images on a board: every description in eeprom-images/hostile/
(a well-formed image plus named defects, its `[layout]` and `expect`; see
eeprom-images/README.md) attached as a RAM-backed EEPROM of exactly the
image's size, with the nvmem-layout node the description asks for.

  hostile.py dtso ADDRESS [OUT] [--base DTB] [--board BOARD --kernel KERNEL]
                                  the device-tree overlay: one nvmem-rmem
                                  node per description, labelled with its
                                  name (the image QEMU loads there), from
                                  ADDRESS on, each on a 4 KiB boundary; reg
                                  takes the address and size cells of the
                                  base tree DTB's reserved-memory (else its
                                  root), 2 and 2 without a base; with a
                                  board and kernel, only the descriptions
                                  whose layout that kernel builds
                                  (LAYOUT_OPTIONS, the board's config
                                  fragments)
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


# The kernel options that build the layout of a compatible (any of them);
# the core's fixed layout needs none. A compatible missing here is an
# error: a new layout must say which option brings it.
LAYOUT_OPTIONS = {
    "fixed-layout": (),
    "onie,tlv-layout": ("CONFIG_NVMEM_LAYOUT_ONIE_TLV",),
    "kontron,sl28-vpd": ("CONFIG_NVMEM_LAYOUT_SL28_VPD", "CONFIG_NVMEM_LAYOUT_SL28_VPD_RUST"),
    "u-boot,env": ("CONFIG_NVMEM_LAYOUT_U_BOOT_ENV",),
    "u-boot,env-redundant-bool": ("CONFIG_NVMEM_LAYOUT_U_BOOT_ENV",),
    "u-boot,env-redundant-count": ("CONFIG_NVMEM_LAYOUT_U_BOOT_ENV",),
    "nvmem-lab,ipmi-fru": ("CONFIG_NVMEM_LAYOUT_IPMI_FRU",),
}


class HostileError(Exception):
    """A hostile description that cannot be attached."""


def built(compatible, options):
    """whether a kernel configured with `options` (option -> 'y', 'm', ...)
    has the layout of `compatible`"""
    if compatible not in LAYOUT_OPTIONS:
        raise HostileError(f"no kernel option known for layout {compatible} (hostile.py LAYOUT_OPTIONS)")
    needed = LAYOUT_OPTIONS[compatible]
    return not needed or any(options.get(o) in ("y", "m") for o in needed)


def descriptions(options=None):
    """every hostile description; with `options` (a kernel's config), only
    those whose layout that kernel has"""
    found = sorted(DIR.glob("*.toml"))
    if options is None:
        return found
    return [d for d in found if built(meta(d)[0], options)]


def board_options(board, kernel):
    """the config options a board's fragments ask for on `kernel`"""
    sys.path.insert(0, str(TOP / "tests"))
    import lab  # noqa: E402  (tests/lab.py, which imports this module)
    return lab.fragment_options(board, kernel)


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
def overlay(address, cells=DEFAULT_CELLS, options=None, paths=None):
    """DTS text of the overlay attaching every hostile image from `address`
    (with `options`, a kernel's config as sorted (option, value) pairs, the
    images whose layout it has; or the descriptions `paths`, a tuple), reg
    in `cells` (address and size cells of the reserved-memory node)"""
    nodes = []
    at = address
    if paths is None:
        paths = descriptions(None if options is None else dict(options))
    for path in paths:
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
            "/* Generated by scripts/hostile.py from eeprom-images/: do not edit. */\n"
            "/dts-v1/;\n/plugin/;\n\n&{/} {\n\treserved-memory {\n"
            f"\t\t#address-cells = <{cells[0]}>;\n\t\t#size-cells = <{cells[1]}>;\n\t\tranges;\n\n"
            + "\n".join(nodes) + "\t};\n};\n")


def main(argv):
    try:
        cells = DEFAULT_CELLS
        opts = {}
        for flag in ("--base", "--board", "--kernel"):
            if argv[:1] == ["dtso"] and flag in argv[:-1]:
                at = argv.index(flag)
                opts[flag] = argv[at + 1]
                argv = argv[:at] + argv[at + 2:]
        if "--base" in opts:
            cells = cells_of(opts["--base"])
        options = None
        if ("--board" in opts) != ("--kernel" in opts):
            raise HostileError("--board and --kernel go together")
        if "--board" in opts:
            options = tuple(sorted(board_options(opts["--board"], opts["--kernel"]).items()))
        if len(argv) in (2, 3) and argv[0] == "dtso":
            text = overlay(int(argv[1], 0), cells, options)
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
