"""NVMEM layouts: for every attached image whose device-tree node has an
nvmem-layout container, the cells in sysfs are exactly the ones
`nvmem-image cells` predicts from the host image: names, sizes, bytes."""
import json
import subprocess

import pytest

import lab

TOOL = lab.TOP / "target" / "release" / "nvmem-image"


def guest_layout(shell, dev):
    """compatible of the device's nvmem-layout container, or None"""
    out = shell.run(f"cat /sys/bus/nvmem/devices/{dev}/of_node/nvmem-layout/compatible 2>/dev/null")[0]
    return out[0].strip("\x00").split("\x00")[0] if out else None


def guest_cells(shell, dev):
    """sysfs cell file -> (size, hex content or None when the read fails)"""
    out = shell.run_check(
        f"cd /sys/bus/nvmem/devices/{dev}/cells 2>/dev/null || exit 0; for c in *; do "
        "[ -e \"$c\" ] || continue; s=$(stat -c %s \"$c\"); "
        "if cat \"$c\" >/tmp/cell 2>/dev/null; then h=$(od -An -v -tx1 /tmp/cell | tr -d ' \\n'); "
        "else h=ERR; fi; echo \"$c $s ${h:--}\"; done", timeout=120)
    cells = {}
    for line in out:
        name, size, content = line.split(" ")
        cells[name] = (int(size), None if content == "ERR" else ("" if content == "-" else content))
    return cells


def predicted(attachment, layout):
    # fixed-layout cells are declared in the image's description
    src = attachment.file
    if layout == "fixed-layout":
        src = lab.TOP / "eeprom-images" / (attachment.file.stem + ".toml")
    r = subprocess.run([str(TOOL), "cells", str(src), "--layout", layout, "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"nvmem-image cells failed: {r.stderr}"
    return json.loads(r.stdout)


@pytest.mark.needs("layouts")
def test_layout_cells_match_oracle(shell, attachment):
    dev = lab.find_device(shell, attachment)
    layout = guest_layout(shell, dev)
    if layout is None:
        pytest.skip(f"{attachment.id}: no nvmem-layout container in the device tree")
    want = {c["sysfs"]: (c["size"], c["content"]) for c in predicted(attachment, layout)}
    got = guest_cells(shell, dev)
    assert want, f"the oracle predicts no cells for {attachment.file.name} with {layout}"
    assert sorted(got) == sorted(want), f"{dev} ({layout}): cell files differ"
    for name, (size, content) in want.items():
        assert got[name][0] == size, f"{dev}/cells/{name}: size {got[name][0]}, predicted {size}"
        assert got[name][1] == content, f"{dev}/cells/{name}: read {got[name][1]}, predicted {content}"
