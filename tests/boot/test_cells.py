"""NVMEM layouts seen from user space and from a kernel consumer.

- every attached image whose device-tree node has an nvmem-layout container
  gets exactly the cells `nvmem-image cells` predicts from the host image:
  names, sizes, bytes (and modes that follow the device's);
- an image the layout must reject gives no cells, an error line naming the
  device, and a raw device that still reads back the whole image;
- a fixed layout on an MTD partition gives cells with the partition's bytes;
- a network interface whose node points at a layout's MAC cell with an
  index carries that MAC plus the index.
In the reference kernel's session, our kernel is booted with the same images
and overlays and both cell listings must be identical."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import lab

TOOL = lab.TOP / "target" / "release" / "nvmem-image"


def guest_layout(shell, dev):
    """compatible of the device's nvmem-layout container, or None"""
    out = shell.run(f"cat /sys/bus/nvmem/devices/{dev}/of_node/nvmem-layout/compatible 2>/dev/null")[0]
    return out[0].strip("\x00").split("\x00")[0] if out else None


def guest_cells(shell, dev):
    """sysfs cell file -> (size, mode, hex content or None when the read fails)"""
    out = shell.run_check(
        f"cd /sys/bus/nvmem/devices/{dev}/cells 2>/dev/null || exit 0; for c in *; do "
        "[ -e \"$c\" ] || continue; s=$(stat -c %s \"$c\"); m=$(stat -c %a \"$c\"); "
        "if cat \"$c\" >/tmp/cell 2>/dev/null; then h=$(od -An -v -tx1 /tmp/cell | tr -d ' \\n'); "
        "else h=ERR; fi; echo \"$c $s $m ${h:--}\"; done", timeout=120)
    cells = {}
    for line in out:
        name, size, mode, content = line.split(" ")
        cells[name] = (int(size), mode,
                       None if content == "ERR" else ("" if content == "-" else content))
    return cells


def oracle(attachment, layout, index=None):
    """(exit status, cells or error text) of `nvmem-image cells`"""
    src = attachment.file
    if layout == "fixed-layout":
        # fixed-layout cells are declared in the image's description
        src = lab.TOP / "eeprom-images" / (attachment.file.stem + ".toml")
    cmd = [str(TOOL), "cells", str(src), "--layout", layout, "--json"]
    if index is not None:
        cmd += ["--index", str(index)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else r.stderr.strip())


def layout_under_test(shell, attachment, kernel_features):
    dev = lab.find_device(shell, attachment)
    layout = guest_layout(shell, dev)
    if layout is None:
        pytest.skip(f"{attachment.id}: no nvmem-layout container in the device tree")
    if f"layout:{layout}" not in kernel_features:
        pytest.skip(f"{attachment.id}: this kernel has no {layout} layout")
    return dev, layout


def save_listing(request, name, cells):
    logdir = request.config.option.lg_log
    if logdir:
        d = Path(logdir) / "cells"
        d.mkdir(exist_ok=True)
        (d / f"{name}.json").write_text(json.dumps(cells, indent=1, sort_keys=True) + "\n")


def device_mode(shell, dev):
    return shell.run_check(f"stat -c %a /sys/bus/nvmem/devices/{dev}/nvmem")[0]


@pytest.mark.needs("layouts", "sysfs-cells")
def test_layout_cells_match_oracle(shell, attachment, kernel_features, request):
    dev, layout = layout_under_test(shell, attachment, kernel_features)
    status, predicted = oracle(attachment, layout)
    if status != 0:
        pytest.skip(f"{attachment.file.name} is malformed for {layout}: test_rejected_image_keeps_device")
    want = {c["sysfs"]: (c["size"], c["content"]) for c in predicted}
    got = guest_cells(shell, dev)
    save_listing(request, attachment.id.replace(":", "_").replace("/", "_"),
                 {n: [s, c] for n, (s, _, c) in got.items()})
    assert want, f"the oracle predicts no cells for {attachment.file.name} with {layout}"
    assert sorted(got) == sorted(want), f"{dev} ({layout}): cell files differ"
    for name, (size, content) in want.items():
        assert got[name][0] == size, f"{dev}/cells/{name}: size {got[name][0]}, predicted {size}"
        assert got[name][2] == content, f"{dev}/cells/{name}: read {got[name][2]}, predicted {content}"
    # cells are read-only and readable by whoever may read the device
    readable = int(device_mode(shell, dev), 8) & 0o444
    for name, (_, mode, _) in got.items():
        assert int(mode, 8) == readable, f"{dev}/cells/{name}: mode {mode}, device readable {readable:o}"


@pytest.mark.needs("layouts")
def test_rejected_image_keeps_device(shell, attachment, kernel_features):
    dev, layout = layout_under_test(shell, attachment, kernel_features)
    status, error = oracle(attachment, layout)
    if status == 0:
        pytest.skip(f"{attachment.file.name} is a valid {layout} image")
    assert guest_cells(shell, dev) == {}, f"{dev}: cells from an image the layout must reject ({error})"
    # an error line about this device (or its provider: 6.12 reports from a
    # layout device named after the provider) in the kernel log
    parent = shell.run_check(f"basename $(dirname $(readlink -f /sys/bus/nvmem/devices/{dev}))")[0]
    lines = [line for line in shell.run_check("dmesg", timeout=120)
             if re.search(rf"(^|[ :]){re.escape(dev)}:|(^|[ :]){re.escape(parent)}[: ]", line)]
    assert any(re.search(r"(?i)crc|magic|invalid|mismatch|bad|error|fail", line) for line in lines), \
        f"{dev}: no error in the kernel log for a malformed {layout} image; lines: {lines}"
    # the raw device still reads back the whole image
    data = attachment.file.read_bytes()
    digest, length = lab.guest_digest(shell, f"/sys/bus/nvmem/devices/{dev}/nvmem", 0, len(data))
    assert (digest, length) == (lab.sha256(data), len(data)), f"{dev}: raw content differs from the image"


def flash_partitions(shell, flash):
    """nvmem devices of the chip's partitions: name -> (offset, of_node path)"""
    out = shell.run_check(
        "for m in /sys/class/mtd/mtd*; do [ -e $m/offset ] || continue; n=${m##*/}; "
        "case $n in *ro) continue;; esac; r=$(cd $m/device && pwd -P); "
        "of=; [ -e /sys/bus/nvmem/devices/$n/of_node ] && of=$(cd /sys/bus/nvmem/devices/$n/of_node && pwd -P); "
        "echo \"$n $(cat $m/offset) $r $of\"; done")
    parts = {}
    for line in out:
        fields = line.split()
        if f"/{flash.where}/" in fields[2] + "/" and len(fields) > 3:
            parts[fields[0]] = (int(fields[1]), fields[3])
    return parts


@pytest.mark.needs("layout:fixed-layout", "sysfs-cells")
def test_mtd_partition_fixed_layout(shell, flash):
    image = flash.file.read_bytes()
    checked = 0
    for dev, (offset, of) in flash_partitions(shell, flash).items():
        if guest_layout(shell, dev) != "fixed-layout":
            continue
        regs = shell.run_check(
            f"cd {of}/nvmem-layout && for c in *@*; do echo \"$c $(od -An -tx1 $c/reg | tr -d ' \\n')\"; done")
        want = {}
        for line in regs:
            node, reg = line.split()
            start, size = int(reg[:8], 16), int(reg[8:16], 16)
            want[f"{node.split('@')[0]}@{start:x},0"] = (size, image[offset + start:offset + start + size].hex())
        got = guest_cells(shell, dev)
        assert {n: (s, c) for n, (s, _, c) in got.items()} == want, f"{dev}: partition cells"
        # MTD nvmem devices are root-only: so are their cells
        assert all(mode == "400" for _, mode, _ in got.values()), f"{dev}: cell modes {got}"
        checked += 1
    assert checked, f"{flash.id}: no partition with a fixed-layout container"


def guest_mac_consumers(shell):
    """interfaces whose device node has nvmem-cells: (iface, address, cells hex)"""
    out = shell.run_check(
        "for n in /sys/class/net/*; do [ -e $n/device/of_node/nvmem-cells ] || continue; "
        "echo \"${n##*/} $(cat $n/address) $(od -An -v -tx1 $n/device/of_node/nvmem-cells | tr -d ' \\n')\"; done")
    return [line.split() for line in out]


def node_with_phandle(shell, phandle):
    out = shell.run_check(
        "cd /proc/device-tree && find . -name phandle | while read p; do "
        f"[ \"$(od -An -tx1 $p | tr -d ' \\n')\" = {phandle:08x} ] && echo ${{p%/phandle}}; done; true")
    assert len(out) == 1, f"phandle {phandle:#x}: nodes {out}"
    return "/" + out[0].lstrip("./")


@pytest.mark.needs("layouts")
def test_interface_mac_from_layout_cell(shell, request):
    """A MAC consumer (nvmem-cells = <&cell index>) carries the layout's
    MAC plus the index: checked through `ip link` and sysfs."""
    consumers = guest_mac_consumers(shell)
    if not consumers:
        pytest.skip("no network interface takes its MAC from an nvmem cell on this board")
    attachments = [a for a in lab.attachments(request.config.option.lg_env) if a.kind != "mtd"]
    for iface, address, cells in consumers:
        phandle, index = int(cells[:8], 16), int(cells[8:16] or "0", 16)
        cell_node = node_with_phandle(shell, phandle)
        container = cell_node.rsplit("/", 1)[0]
        assert container.endswith("/nvmem-layout"), f"{iface}: cell {cell_node} is not in a layout"
        provider = container.rsplit("/", 1)[0]
        hits = []
        for a in attachments:
            dev = lab.find_device(shell, a)
            of = shell.run(f"cd /sys/bus/nvmem/devices/{dev}/of_node 2>/dev/null && pwd -P")[0]
            if of and of[0].endswith(provider.replace("/proc/device-tree", "")):
                hits.append((a, dev))
        assert len(hits) == 1, f"{iface}: provider {provider} among the attachments: {hits}"
        a, dev = hits[0]
        layout = guest_layout(shell, dev)
        status, predicted = oracle(a, layout, index)
        assert status == 0, f"{a.file.name}: {predicted}"
        mac = [c for c in predicted if c["name"] == cell_node.rsplit("/", 1)[1]]
        assert mac and mac[0]["indexed"], f"no indexed MAC cell {cell_node} predicted for {a.file.name}"
        want = ":".join(re.findall("..", mac[0]["indexed"]))
        assert address == want, f"{iface}: address {address}, expected {want} (cell + {index})"
        link = " ".join(shell.run_check(f"ip link show {iface}"))
        assert f"link/ether {want}" in link, f"ip link show {iface}: {link}"


def all_cells(shell, attachments, kernel_features):
    """attachment id -> {cell file: [size, content]} for every attachment
    whose layout this kernel has (None for one without layout)"""
    listing = {}
    for a in attachments:
        dev = lab.find_device(shell, a)
        layout = guest_layout(shell, dev)
        if layout is None or f"layout:{layout}" not in kernel_features:
            continue
        listing[a.id] = {n: [s, c] for n, (s, _, c) in guest_cells(shell, dev).items()}
    return listing


@pytest.mark.needs("layouts", "sysfs-cells")
def test_differential_against_ours(shell, request, kernel_under_test):
    """Run on the reference kernel: our kernel, booted with the same images
    and overlays, lists the same cells with the same bytes for every layout
    both kernels have."""
    from conftest import KERNEL_FEATURES

    if kernel_under_test != "ref":
        pytest.skip("compares the reference kernel with ours: runs in the reference session")
    env = request.config.option.lg_env
    out = Path(os.environ["LG_OUT"]).parent / "ours"
    if not (out / "board.dtb").exists():
        pytest.skip(f"no board built for our kernel in {out}")
    both = KERNEL_FEATURES["ours"] & KERNEL_FEATURES["ref"]
    attachments = lab.attachments(env)
    ref = all_cells(shell, attachments, both)
    with lab.variant(env, out=out) as sh:
        ours = all_cells(sh, attachments, both)
    logdir = request.config.option.lg_log
    if logdir:
        (Path(logdir) / "cells-differential.json").write_text(
            json.dumps({"ref": ref, "ours": ours}, indent=1, sort_keys=True) + "\n")
    assert ref, "no layout both kernels have on this board"
    assert sorted(ours) == sorted(ref), "not the same devices with layouts"
    for aid in ref:
        assert ours[aid] == ref[aid], f"{aid}: ours {ours[aid]} != ref {ref[aid]}"
