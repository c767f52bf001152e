#!/usr/bin/env python3
"""Build the raw images described by eeprom-images/*.toml.

Formats handled here:
  blob       fixed-size buffer, fill byte, regions of ASCII or hex bytes
  uboot-env  U-Boot environment, produced by mkenvimage
  flash      partitions (other descriptions) composed at offsets
ONIE TLV and sl28 VPD encoders belong to the Rust image tool (eeprom-images/).

usage: build-image.py DESC.toml OUT.bin
"""
import os
import subprocess
import sys
import tempfile
import tomllib


class DescError(Exception):
    pass


def load(path):
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise DescError(f"{path}: {e}") from e


def region_bytes(path, i, r):
    if ("ascii" in r) == ("hex" in r):
        raise DescError(f"{path}: region[{i}]: give exactly one of 'ascii' or 'hex'")
    if "ascii" in r:
        return r["ascii"].encode("ascii")
    try:
        return bytes.fromhex(r["hex"])
    except ValueError as e:
        raise DescError(f"{path}: region[{i}]: bad hex: {e}") from e


def build_blob(path, d):
    size = d["size"]
    buf = bytearray([d.get("fill", 0xFF)]) * size
    for i, r in enumerate(d.get("region", [])):
        data = region_bytes(path, i, r)
        off = r["offset"]
        if off < 0 or off + len(data) > size:
            raise DescError(f"{path}: region[{i}] at {off:#x}+{len(data)} exceeds size {size:#x}")
        buf[off:off + len(data)] = data
    return bytes(buf)


def build_uboot_env(path, d):
    names = set()
    lines = []
    for k, v in d.get("vars", {}).items():
        if "=" in k or not k:
            raise DescError(f"{path}: bad variable name {k!r}")
        if k in names:
            raise DescError(f"{path}: duplicate variable {k!r}")
        names.add(k)
        lines.append(f"{k}={v}\n")
    with tempfile.TemporaryDirectory() as tmp:
        txt = os.path.join(tmp, "env.txt")
        out = os.path.join(tmp, "env.bin")
        with open(txt, "w") as f:
            f.writelines(lines)
        cmd = ["mkenvimage", "-s", str(d["size"]), "-p", str(d.get("pad", 0xFF)), "-o", out]
        if d.get("redundant"):
            cmd.insert(1, "-r")
        cmd.append(txt)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise DescError(f"{path}: mkenvimage failed: {r.stderr.strip()}")
        with open(out, "rb") as f:
            return f.read()


def build_flash(path, d):
    size = d["size"]
    buf = bytearray([d.get("fill", 0xFF)]) * size
    here = os.path.dirname(path)
    for i, p in enumerate(d.get("partition", [])):
        data = build(os.path.join(here, p["image"] + ".toml"))
        off = p["offset"]
        if "size" in p and len(data) > p["size"]:
            raise DescError(f"{path}: partition[{i}] {p['image']}: {len(data)} bytes exceed {p['size']:#x}")
        if off + len(data) > size:
            raise DescError(f"{path}: partition[{i}] at {off:#x} exceeds size {size:#x}")
        buf[off:off + len(data)] = data
    return bytes(buf)


BUILDERS = {"blob": build_blob, "uboot-env": build_uboot_env, "flash": build_flash}


def build(path):
    d = load(path)
    fmt = d.get("format")
    if fmt not in BUILDERS:
        raise DescError(f"{path}: format {fmt!r} not handled here (choose {', '.join(BUILDERS)})")
    try:
        return BUILDERS[fmt](path, d)
    except KeyError as e:
        raise DescError(f"{path}: missing field {e}") from e


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        data = build(sys.argv[1])
    except DescError as e:
        print(f"build-image: {e}", file=sys.stderr)
        return 1
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
