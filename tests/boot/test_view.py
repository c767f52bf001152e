"""The decoded view of `make run` and `make cells` on the board: the guest's
nvmem-list payload read back through scripts/cells.py and `nvmem-image
view`. It must list every nvmem device and cell the kernel has with the
bytes a read gives, name each image the board attaches at its device, and
decode each cell in its layout's terms; the decoding is checked here
against the formats' definitions (text fields as text, MAC cells as
addresses, ONIE integers as numbers), independently of the tool's code."""
import importlib.util
import json
import subprocess

import pytest

import lab

TOOL = lab.TOP / "target" / "release" / "nvmem-image"
_spec = importlib.util.spec_from_file_location("cells_view", lab.TOP / "scripts" / "cells.py")
cells_view = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cells_view)

ONIE_TEXT = {"product-name", "part-number", "serial-number", "label-revision", "platform-name",
             "onie-version", "manufacturer", "country-code", "vendor", "diag-version",
             "service-tag"}
ONIE_INT = {"device-version", "num-macs"}


def mac_text(hexstr):
    return ":".join(hexstr[i:i + 2] for i in range(0, 12, 2))


def mac_value(data):
    """a MAC cell: an address where it holds 6 bytes, else (a hostile
    image's 1-byte record) its bytes as a text field shows them"""
    return ("mac", mac_text(data.hex())) if len(data) == 6 else text_or_hex(data)


def text_or_hex(data):
    """a text field as the view shows it: text where every byte is
    printable ASCII, else its bytes in hex (a hostile image's erased
    serial number), or nothing"""
    if data and all(0x20 <= b < 0x7f for b in data):
        return ("text", data.decode("ascii"))
    return ("empty", None) if not data else ("hex", data.hex())


def expected_value(layout, name, raw, mac_base):
    """(kind, value) a cell reads as by its format's definition, or None
    where the formats say nothing (a fixed cell of any bytes)"""
    if raw is None:
        return ("read-error", None)
    data = bytes.fromhex(raw)
    if layout == "onie,tlv-layout":
        if name == "mac-address":
            return mac_value(data)
        if name == "manufacture-date":
            kind, value = text_or_hex(data)
            return ("date" if kind == "text" else kind, value)
        if name in ONIE_INT and 1 <= len(data) <= 2:
            return ("integer", int(raw, 16))
        if name in ONIE_INT:
            return text_or_hex(data)
        if name in ONIE_TEXT:
            return text_or_hex(data)
        return ("hex", raw)
    if layout == "kontron,sl28-vpd":
        if name == "base-mac-address":
            return mac_value(data)
        # NUL-padded in the record
        return text_or_hex(data.rstrip(b"\0"))
    if layout and layout.startswith("u-boot,env"):
        if name == "ethaddr":
            # six bytes from the read hook, or the text as stored
            return ("mac", mac_text(raw) if len(data) == 6 else data.decode("ascii").lower())
        if data and all(0x20 <= b < 0x7f for b in data):
            return ("text", data.decode("ascii"))
        return ("empty", None) if not data else ("hex", raw)
    if mac_base:
        return mac_value(data)
    return None


def value_of(v):
    return (v["kind"], v.get("text", v.get("address", v.get("value", v.get("hex")))))


@pytest.mark.needs("sysfs-cells")
@pytest.mark.timeout(900)
def test_decoded_view(shell, request):
    # the payload `make run` runs (2000 cells of a 64 KiB environment on
    # riscv64-virt take minutes on the debug kernel)
    out = shell.run_check("/usr/lib/nvlab/nvmem-list", timeout=800)
    listing = "\n".join(out) + "\n"
    board = lab.board_under_test(request.config)
    attached = cells_view.attached(listing, board)
    r = subprocess.run([str(TOOL), "view", "-", "--json",
                        *[f"--attached={d}={i}" for d, i in attached.items()]],
                       input=listing, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    view = {d["name"]: d for d in json.loads(r.stdout)}

    # every device and cell, with the bytes nvmem-sysfs reads
    devs = lab.nvmem_devices(shell)
    assert sorted(view) == sorted(devs), "devices of the view and of sysfs differ"
    got = lab.nvmem_cells(shell, *devs)
    for dev, d in view.items():
        mine = {c["file"]: (c["size"], c["hex"]) for c in d["cells"]}
        theirs = {n: (size, content) for n, (size, _, content) in got[dev].items()}
        assert mine == theirs, f"{dev}: the view's cells differ from sysfs"
        node = devs[dev][1].removeprefix("/sys/firmware/devicetree/base") or None
        assert d["of_node"] == node, f"{dev}: node {d['of_node']}, sysfs says {devs[dev][1]}"

    # each attached image at its device, by name
    for a in lab.attachments(lab.board_env(request.config)):
        dev = lab.find_device(shell, a, devs)
        assert view[dev]["image"] == a.file.stem, f"{a.id}: the view names {view[dev]['image']}"

    # each cell decoded as its format defines it
    checked = 0
    for dev, d in view.items():
        for c in d["cells"]:
            want = expected_value(d["layout"], c["name"], c["hex"], c["mac_base"])
            if want is None:
                continue
            assert value_of(c["value"]) == want, f"{dev}/cells/{c['file']} ({d['layout']})"
            checked += 1
    layouts = {d["layout"] for d in view.values() if d["cells"]}
    assert checked > 0 and layouts & {"onie,tlv-layout", "kontron,sl28-vpd", "u-boot,env"}, \
        f"no cell of a known layout was decoded (layouts with cells: {layouts})"
