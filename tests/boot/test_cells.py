"""NVMEM layouts seen from user space and from a kernel consumer, held to
what the board promises in qemu-boards/<board>/board.conf (LAYOUTS,
MAC_CELLS and their per-kernel _OURS/_REF variants; tests/lab.py
board_promises()). A promise not kept fails; what a board does not promise
on a kernel is declared absent there, not skipped at run time.

- every promised layout: the image's attachment is found, its device-tree
  node has an nvmem-layout of the promised compatible, and the kernel gives
  exactly the cells `nvmem-image cells` predicts from the bytes read back
  from the device, not from the host's image file, so that the check means
  the same on a real board whose EEPROMs hold whatever they hold (names,
  sizes, bytes, modes that follow the device's; tests/boot/test_boot.py
  holds a device the host attached to its image byte for byte) — for an
  MTD partition, its bytes under the fixed layout's cells; an image
  the layout must reject gives no cells, an error line naming the device,
  and a raw device that still reads back the whole image;
- an attachment without a promise has no cells;
- every promised MAC: the interface exists, its node points at the promised
  layout cell with the promised index, and it carries that MAC plus the
  index; no interface takes its MAC from a cell without a promise.
In the reference kernel's session, our kernel is booted with the same images
and overlays and both cell listings must be identical for every layout both
kernels are promised."""
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

import lab

TOOL = lab.TOP / "target" / "release" / "nvmem-image"


def guest_layout(shell, dev):
    """compatible of the device's nvmem-layout container, or None; for a
    device of 6.1's MTD u-boot-env driver, the compatible of its own node"""
    for node in ("of_node/nvmem-layout", "of_node"):
        out = shell.run(f"cat /sys/bus/nvmem/devices/{dev}/{node}/compatible 2>/dev/null")[0]
        first = out[0].strip("\x00").split("\x00")[0] if out else None
        if node == "of_node/nvmem-layout" or (first or "").startswith("u-boot,env"):
            if first:
                return first
    return None


def guest_cells(shell, dev):
    """sysfs cell file -> (size, mode, hex content or None when the read fails)"""
    return lab.nvmem_cells(shell, dev)[dev]


def oracle(attachment, layout, data, index=None, extra=()):
    """(exit status, cells or error text) of `nvmem-image cells` on `data`,
    the bytes read back from the device (a fixed layout's cells declared
    by the attachment's description), `extra` options added"""
    with tempfile.NamedTemporaryFile(prefix=f"{attachment.file.stem}-", suffix=".bin") as f:
        f.write(data)
        f.flush()
        if layout == "fixed-layout":
            desc = lab.description_path(attachment.file.stem)
            cmd = [str(TOOL), "cells", str(desc), "--bytes", f.name]
        else:
            cmd = [str(TOOL), "cells", f.name]
        cmd += ["--layout", layout, "--json", *extra]
        if index is not None:
            cmd += ["--index", str(index)]
        r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else r.stderr.strip())


def save_listing(request, name, dev, cells):
    """the cells read of a promise's device, in the session's log directory
    (scripts/lava.py holds a LAVA run of the same build to them)"""
    logdir = request.config.option.lg_log
    if logdir:
        d = Path(logdir) / "cells"
        d.mkdir(exist_ok=True)
        (d / f"{name}.json").write_text(json.dumps({"device": dev, "cells": cells},
                                                   indent=1, sort_keys=True) + "\n")


def device_mode(shell, dev):
    return shell.run_check(f"stat -c %a /sys/bus/nvmem/devices/{dev}/nvmem")[0]


# ---- the board's promises ----

def pytest_generate_tests(metafunc):
    """One test per promise of the board under test on the kernel under test
    (qemu-boards/<board>/board.conf). A board that promises nothing of a
    kind gets no test of that kind: that is its declaration."""
    for name, kind in (("layout_promise", "layouts"), ("mac_promise", "macs")):
        if name in metafunc.fixturenames:
            promises = lab.session_promises(metafunc.config)
            found = getattr(promises, kind)
            metafunc.parametrize(name, found, ids=[p.id for p in found])


@pytest.fixture(scope="module")
def promises(pytestconfig):
    return lab.session_promises(pytestconfig)


def attachment_of(request, image):
    """the one attachment of the board's QEMU environment with this image"""
    found = [a for a in lab.attachments(lab.board_env(request.config)) if a.file.stem == image]
    assert len(found) == 1, (f"board.conf promises image {image}: attached "
                             f"{len(found)} times in {lab.board_env(request.config)}")
    return found[0]


def dt_path(shell, sysfs_node):
    """device-tree path ('/a/b@1') of a sysfs of_node link, or None"""
    out = shell.run(f"cd {sysfs_node} 2>/dev/null && pwd -P")[0]
    if not out:
        return None
    return "/" + re.sub(r"^/sys/firmware/devicetree/base/?", "", out[0])


def flash_partitions(shell, flash):
    """nvmem devices of the chip's partitions: mtd name -> (nvmem device,
    offset, size)"""
    out = shell.run_check(
        "for m in /sys/class/mtd/mtd*; do [ -e $m/offset ] || continue; n=${m##*/}; "
        "case $n in *ro) continue;; esac; [ -e /sys/bus/nvmem/devices/$n ] || continue; "
        "echo \"$n $(cat $m/offset) $(cat $m/size) $(cd $m/device && pwd -P) $(cat $m/name)\"; done")
    parts = {}
    for line in out:
        dev, offset, size, real, name = line.split(" ", 4)
        if f"/{flash.where}/" in real + "/":
            assert name not in parts, f"{flash.id}: two partitions named {name}"
            parts[name] = (dev, int(offset), int(size))
    return parts


def promised_device(shell, request, promise):
    """(attachment, nvmem device, offset of its bytes in the image, size)"""
    a = attachment_of(request, promise.image)
    if not promise.partition:
        return a, lab.find_device(shell, a), 0, a.file.stat().st_size if a.attached else None
    assert a.kind == "mtd", f"{promise.id}: a partition of {a.id}, which is no flash"
    parts = flash_partitions(shell, a)
    assert promise.partition in parts, f"{promise.id}: no partition {promise.partition} (partitions: {sorted(parts)})"
    dev, offset, size = parts[promise.partition]
    # a partition compatible with u-boot,env: its cells are on the nvmem
    # device of 6.1's MTD u-boot-env driver, which has the partition's node
    node = shell.run(f"cd /sys/class/mtd/{dev}/of_node 2>/dev/null && pwd -P")[0]
    if node:
        owners = [d for d, (_, of) in lab.nvmem_devices(shell).items() if of == node[0] and d != dev]
        if owners and shell.run(f"test -e /sys/bus/nvmem/devices/{dev}/of_node")[2] != 0:
            assert len(owners) == 1, f"{promise.id}: nvmem devices {owners} share the partition's node"
            dev = owners[0]
    return a, dev, offset, size


def env_geometry(shell, dev):
    """the oracle's options for the U-Boot environment properties of the
    device's nvmem-layout node (env-size, env-redundant-offset)"""
    opts = []
    for prop in ("env-size", "env-redundant-offset"):
        # the layout node's, or the node's own (6.1's MTD u-boot-env driver)
        out = shell.run(f"cd /sys/bus/nvmem/devices/{dev}/of_node && "
                        f"od -An -tx1 nvmem-layout/{prop} 2>/dev/null || od -An -tx1 {prop} 2>/dev/null")[0]
        if out:
            opts += [f"--{prop}", str(int("".join(out).replace(" ", ""), 16))]
    return opts


def device_bytes(shell, dev):
    """the bytes of the nvmem device, read back in the guest: what the
    oracle decodes (on a real board, whatever its EEPROM holds; where the
    host attached the image, tests/boot/test_boot.py holds the device to
    it byte for byte)"""
    return lab.guest_read(shell, f"/sys/bus/nvmem/devices/{dev}/nvmem")


def predicted_cells(shell, promise, a, dev, data, index=None):
    """(status, cells or error text): the oracle on the device's bytes
    `data`; a fixed layout on a partition from the cells of the device
    tree's container"""
    extra = env_geometry(shell, dev) if promise.compatible.startswith("u-boot,env") else []
    if promise.partition and promise.compatible == "fixed-layout":
        regs = shell.run_check(
            f"cd /sys/bus/nvmem/devices/{dev}/of_node/nvmem-layout && for c in *@*; do "
            "echo \"$c $(od -An -tx1 $c/reg | tr -d ' \\n')\"; done")
        cells = []
        for line in regs:
            node, reg = line.split()
            start, length = int(reg[:8], 16), int(reg[8:16], 16)
            cells.append({"sysfs": f"{node.split('@')[0]}@{start:x},0", "size": length,
                          "content": data[start:start + length].hex()})
        return 0, cells
    return oracle(a, promise.compatible, data, index, extra=extra)


# the cells of each promise as read on the session's boot
_session_listings = {}


def test_layout_promise_kept(shell, layout_promise, request):
    """The promised attachment has the promised layout and exactly its
    cells, or, for an image the layout must reject, none and an error."""
    p = layout_promise
    a, dev, offset, size = promised_device(shell, request, p)
    layout = guest_layout(shell, dev)
    assert layout == p.compatible, (f"{p.id}: {dev}'s device-tree node has nvmem-layout "
                                    f"{layout or 'none'}, board.conf promises {p.compatible}")
    data = device_bytes(shell, dev)
    status, predicted = predicted_cells(shell, p, a, dev, data)
    got = guest_cells(shell, dev)
    _session_listings[p.target] = {n: [s, c] for n, (s, _, c) in got.items()}
    save_listing(request, p.target.replace("/", "_"), dev, _session_listings[p.target])
    if status != 0:
        # where the host attached the image, the raw device must still
        # read back all of it; on a real board, what was read
        attached = a.attached and a.file.read_bytes()[offset:offset + size]
        expect_rejected(shell, p, attached or data, dev, got, predicted,
                        request.config.getoption("--nvlab-kernel"))
        return
    want = {c["sysfs"]: (c["size"], c["content"]) for c in predicted}
    assert want, f"{p.id}: the oracle predicts no cells"
    assert sorted(got) == sorted(want), f"{dev} ({p.id}): cell files differ"
    for name, (cell_size, content) in want.items():
        assert got[name][0] == cell_size, f"{dev}/cells/{name}: size {got[name][0]}, predicted {cell_size}"
        assert got[name][2] == content, f"{dev}/cells/{name}: read {got[name][2]}, predicted {content}"
    # a fixed cell the layout leaves out (bits that do not fit, a mac-base
    # cell of another length): the kernel says which and why
    left_out = []
    if request.config.getoption("--nvlab-kernel") == "ours" and p.compatible == "fixed-layout":
        nodes = shell.run(f"cd /sys/bus/nvmem/devices/{dev}/of_node/nvmem-layout 2>/dev/null && "
                          "for c in *@*; do [ -e $c/reg ] && echo $c; done")[0]
        kept = {name.split("@")[0] for name in want}
        left_out = [n for n in nodes if n.split("@")[0] not in kept]
        lines = [line for line in lab.dmesg(shell) if re.search(rf"(^|[ :]){re.escape(dev)}:", line)]
        for node in left_out:
            assert any(f"/{node}:" in line and "cell left out" in line for line in lines), \
                f"{dev}: cell {node} left out without a kernel line saying why; lines: {lines}"
    # an environment with an ethaddr that gets no cell: the kernel says why
    if (request.config.getoption("--nvlab-kernel") == "ours" and p.compatible.startswith("u-boot,env")
            and re.search(rb"\0ethaddr=", data) and not any(n.startswith("ethaddr@") for n in want)):
        lines = [line for line in lab.dmesg(shell) if re.search(rf"(^|[ :]){re.escape(dev)}:", line)]
        assert any("ethaddr" in line and "not a MAC address" in line for line in lines), \
            f"{dev}: no ethaddr cell, and no kernel line saying why; lines: {lines}"
    print(f"\nnvlab: outcome: {p.id}: {len(want)} cell(s) as predicted"
          + (f", {len(left_out)} left out, each with a kernel line" if left_out else ""))
    # cells are read-only and readable by whoever may read the device (MTD
    # nvmem devices are root-only: so are their cells)
    readable = int(device_mode(shell, dev), 8) & 0o444
    for name, (_, mode, _) in got.items():
        assert int(mode, 8) == readable, f"{dev}/cells/{name}: mode {mode}, device readable {readable:o}"


# How our U-Boot environment layout and `nvmem-image cells` name the
# problems of an environment they reject: each phrase of the oracle's error
# must be in the kernel's lines about the device (ours; 6.12 words its
# errors its own way).
ENV_PROBLEMS = ("CRC-32 mismatch", "without a NUL", "has no '='", "has an empty name",
                "no empty string ends the variables", "holds no variables",
                "smaller than its environment", "no intact copy", "overlap")


# how our layouts begin their lines about a device (layouts/drivers/)
LAYOUT_PREFIX = {"onie,tlv-layout": "onie-tlv: ", "kontron,sl28-vpd": "sl28vpd: "}


def expect_rejected(shell, p, data, dev, got, error, kernel="ours"):
    """an image the layout must reject: no cells, an error line (on ours,
    for a U-Boot environment, naming the problem the oracle names), and
    the raw device still reads back the whole image (`data`)"""
    assert got == {}, f"{dev}: cells from an image {p.compatible} must reject ({error})"
    # an error line about this device (or its provider: 6.12 reports from a
    # layout device named after the provider) in the kernel log
    parent = shell.run_check(f"basename $(dirname $(readlink -f /sys/bus/nvmem/devices/{dev}))")[0]
    # 6.12's layout device is "<bus device>:<node name>:nvmem-layout"
    node = shell.run(f"basename $(cd /sys/bus/nvmem/devices/{dev}/of_node && pwd -P)")[0]
    layout_dev = rf"|:{re.escape(node[0])}:nvmem-layout:" if node else ""
    lines = [line for line in lab.dmesg(shell)
             if re.search(rf"(^|[ :]){re.escape(dev)}:|(^|[ :]){re.escape(parent)}[: ]{layout_dev}", line)]
    if kernel == "ours" and p.compatible.startswith("u-boot,env"):
        named = [phrase for phrase in ENV_PROBLEMS if phrase in error]
        assert named, f"{p.id}: the oracle's error names no known problem: {error}"
        for phrase in named:
            assert any(phrase in line for line in lines), \
                f"{dev}: the kernel does not say '{phrase}' (oracle: {error}); lines: {lines}"
    elif kernel == "ours" and p.compatible in LAYOUT_PREFIX:
        # our layouts say what is wrong in their own words, prefixed
        assert any(LAYOUT_PREFIX[p.compatible] in line for line in lines), \
            f"{dev}: no {LAYOUT_PREFIX[p.compatible]} line in the kernel log for a malformed image; lines: {lines}"
    else:
        assert any(re.search(r"(?i)crc|magic|invalid|mismatch|bad|error|fail", line) for line in lines), \
            f"{dev}: no error in the kernel log for a malformed {p.compatible} image; lines: {lines}"
    differ = lab.guest_bytes_differ(shell, f"/sys/bus/nvmem/devices/{dev}/nvmem", data, 0)
    assert not differ, f"{dev}: raw content differs from the image: {differ}"
    print(f"\nnvlab: outcome: {p.id}: rejected, no cells, raw device reads back; kernel: "
          + " | ".join(line.split("] ", 1)[-1] for line in lines[-3:]))


def test_unpromised_attachments_have_no_cells(shell, promises, request):
    """What the board does not promise on this kernel is absent: an
    attachment (or flash partition) without a LAYOUTS promise has no cells.
    (A kernel that gains a layout fails here until board.conf says so.)"""
    promised = {p.target for p in promises.layouts}
    stray = []
    devs = lab.nvmem_devices(shell)
    for a in lab.attachments(lab.board_env(request.config)):
        targets = [(a.file.stem, lab.find_device(shell, a, devs))]
        if a.kind == "mtd":
            targets += [(f"{a.file.stem}/{name}", dev)
                        for name, (dev, _, _) in flash_partitions(shell, a).items()]
        targets = [(t, d) for t, d in targets if t not in promised]
        listed = lab.nvmem_cells(shell, *(d for _, d in targets))
        for target, dev in targets:
            if listed[dev]:
                stray.append(f"{target} ({dev}, nvmem-layout {guest_layout(shell, dev)}): {sorted(listed[dev])}")
    assert not stray, (f"cells where qemu-boards/{promises.board}/board.conf promises no layout "
                       f"for kernel '{promises.kernel}':\n" + "\n".join(stray))


def node_with_phandle(shell, phandle):
    out = shell.run_check(
        "cd /proc/device-tree && find . -name phandle | while read p; do "
        f"[ \"$(od -An -tx1 $p | tr -d ' \\n')\" = {phandle:08x} ] && echo ${{p%/phandle}}; done; true")
    assert len(out) == 1, f"phandle {phandle:#x}: nodes {out}"
    return "/" + out[0].lstrip("./")


def promised_ifaces(consumers, promise):
    """the interfaces among `consumers` a MAC promise names (by name, or by
    its DT node)"""
    if promise.consumer.startswith("/"):
        return [i for i, (node, *_) in consumers.items() if node == promise.consumer]
    return [i for i in consumers if i == promise.consumer]


def consumer_iface(consumers, promise):
    hits = promised_ifaces(consumers, promise)
    assert len(hits) == 1, (f"{promise.id}: no single interface {promise.consumer} with nvmem-cells "
                            f"(interfaces with nvmem-cells: {consumers})")
    return hits[0]


def test_mac_promise_kept(shell, mac_promise, promises, request):
    """The promised interface's node points at the promised layout cell with
    the promised index, and it carries that cell's MAC plus the index:
    checked through sysfs and `ip link`."""
    p = mac_promise
    consumers = lab.guest_mac_consumers(shell)
    iface = consumer_iface(consumers, p)
    _, address, cells, names = consumers[iface]
    assert names[:1] == ["mac-address"], f"{iface}: nvmem-cell-names {names}"
    phandle, arg = int(cells[:8], 16), int(cells[8:16] or "0", 16)
    # the kernel takes the 32-bit argument as an int: 0xffffffff is -1
    index = arg - (1 << 32) if arg & (1 << 31) else arg
    layout = next(q for q in promises.layouts if q.target == p.target)
    a, dev, offset, size = promised_device(shell, request, layout)
    provider = dt_path(shell, f"/sys/bus/nvmem/devices/{dev}/of_node")
    cell_node = node_with_phandle(shell, phandle)
    # a fixed cell's node carries its offset: mac-bin@0 is the cell mac-bin
    assert cell_node and re.sub(r"@[^/]*$", "", cell_node) == f"{provider}/nvmem-layout/{p.cell}", \
        f"{iface}: nvmem-cells points at {cell_node}, board.conf promises {p.cell} of {p.target} ({provider})"
    assert index == p.index, f"{iface}: cell index {index} in the device tree, board.conf promises {p.index}"
    status, predicted = predicted_cells(shell, layout, a, dev, device_bytes(shell, dev), p.index)
    assert status == 0, f"{p.target}: {predicted}"
    mac = [c for c in predicted if c["name"] == p.cell]
    assert mac and mac[0]["indexed"], f"no indexed MAC cell {p.cell} predicted for {p.target}"
    want = ":".join(re.findall("..", mac[0]["indexed"]))
    assert address == want, f"{iface}: address {address}, expected {want} ({p.cell} + {p.index})"
    link = " ".join(shell.run_check(f"ip link show {iface}"))
    assert f"link/ether {want}" in link, f"ip link show {iface}: {link}"


def test_mac_consumers_are_promised(shell, promises):
    """No interface takes its MAC from a cell the board does not promise."""
    consumers = lab.guest_mac_consumers(shell)
    promised = {i for p in promises.macs for i in promised_ifaces(consumers, p)}
    stray = {i: c for i, c in consumers.items() if i not in promised}
    assert not stray, (f"interfaces with nvmem-cells without a MAC_CELLS promise in "
                       f"qemu-boards/{promises.board}/board.conf: {stray}")


def all_cells(shell, request, layouts, read=None):
    """promise target -> {cell file: [size, content]} for these promises
    (read: listings of this shell's boot already read, by target)"""
    listing = {}
    for p in layouts:
        if read and p.target in read:
            listing[p.target] = read[p.target]
            continue
        _, dev, _, _ = promised_device(shell, request, p)
        listing[p.target] = {n: [s, c] for n, (s, _, c) in guest_cells(shell, dev).items()}
    return listing


@pytest.mark.needs("layouts", "sysfs-cells")
@pytest.mark.timeout(1800)  # may boot our kernel too
def test_differential_against_ours(shell, request, kernel_under_test):
    """Run on the reference kernel: our kernel, booted with the same images
    and overlays, lists the same cells with the same bytes for every layout
    the board promises on both kernels. Our session records its listing
    under the identity of its boot (lab.boot_identity); the reference
    session boots our kernel only when no such record is there."""
    env = lab.board_env(request.config)
    board = lab.board_under_test(request.config)
    out = Path(os.environ["LG_OUT"]).parent / "ours"
    if kernel_under_test != "ref":
        listing = all_cells(shell, request, lab.board_promises(board, "ours").layouts, _session_listings)
        lab.record(out, "cells", lab.boot_identity(env, out), listing)
        pytest.skip("compares the reference kernel with ours: runs in the reference session "
                    "(this session recorded our kernel's cells for it)")
    if not (out / "board.dtb").exists():
        pytest.fail(f"no board built for our kernel in {out}")
    both = [p for p in lab.board_promises(board, "ref").layouts
            if p in lab.board_promises(board, "ours").layouts]
    assert both, f"{board}: no layout promised on both kernels"
    ref = all_cells(shell, request, both, _session_listings)
    ours = lab.recorded(out, "cells", lab.boot_identity(env, out))
    if ours is None:
        with lab.variant(env, out=out) as sh:
            ours = all_cells(sh, request, both)
    ours = {p.target: ours.get(p.target) for p in both}
    logdir = request.config.option.lg_log
    if logdir:
        (Path(logdir) / "cells-differential.json").write_text(
            json.dumps({"ref": ref, "ours": ours}, indent=1, sort_keys=True) + "\n")
    assert sorted(ours) == sorted(ref), "not the same devices with layouts"
    for target in ref:
        assert ours[target] == ref[target], f"{target}: ours {ours[target]} != ref {ref[target]}"
