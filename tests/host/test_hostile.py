"""The hostile images (eeprom-images/hostile/): each says what is wrong
with it, `nvmem-image cells` gives the outcome it documents, a resealed
defect is the one thing wrong, every format has at least ten, and the
generated overlay attaches each at the size of its image without overlap
(scripts/hostile.py)."""
import re
import subprocess
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

import pytest

import lab

H = lab.hostile_images
DESCS = H.descriptions()


def cells(path):
    r = subprocess.run([str(H.tool()), "cells", str(path), "--json"], capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout if r.returncode == 0 else r.stderr.strip()


@pytest.mark.parametrize("path", DESCS, ids=[d.stem for d in DESCS])
def test_outcome_as_documented(path):
    text = path.read_text()
    assert text.startswith("# Hostile image: "), f"{path.name}: the first line must say what is wrong"
    d = tomllib.loads(text)
    for defect in d.get("defect", []):
        assert defect["what"].strip()
    _, expect = H.meta(path)
    status, out = cells(path)
    if expect == "rejected":
        assert status == 1, f"{path.name}: documented as rejected, nvmem-image cells gives {out[:300]}"
        assert path.name in out
        # a defect whose checksum was recomputed is found as itself
        if any(x.get("reseal") for x in d.get("defect", [])):
            assert not re.search(r"CRC-(8|32) mismatch", out), f"{path.name}: {out}"
    else:
        assert status == 0, f"{path.name}: documented as giving cells: {out}"


def test_ten_per_format():
    """at least ten hostile images per layout family (mac-base and fixed
    cells with bits: images of malformed cells, each cell a case)"""
    family = Counter()
    for path in DESCS:
        compatible, _ = H.meta(path)
        family[compatible.split("-redundant")[0]] += 1
        if compatible == "fixed-layout":
            for r in tomllib.loads(path.read_text()).get("region", []):
                family["bits cells" if "bits" in r else "mac-base cells" if r.get("mac-base") else "cells"] += 1
    for name in ("onie,tlv-layout", "kontron,sl28-vpd", "u-boot,env", "mac-base cells", "bits cells"):
        assert family[name] >= 10, f"{name}: {family[name]} hostile image(s)"


def _compiled(text, tmp):
    """the overlay or tree `text` compiled with dtc into `tmp`"""
    src, out = Path(tmp) / "h.dtso", Path(tmp) / "h.dtbo"
    src.write_text(text)
    subprocess.run(["dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", str(out), str(src)],
                   check=True, timeout=60)
    return out


def test_overlay_attaches_each_at_its_size():
    with tempfile.TemporaryDirectory() as tmp:
        regions = lab.qemu_helper.rmem_regions(str(_compiled(H.overlay(0x9e000000), tmp)))
    assert sorted(label for label, _, _ in regions) == sorted(d.stem for d in DESCS)
    end = 0
    for label, address, size in sorted(regions, key=lambda r: r[1]):
        assert address >= end and address % 0x1000 == 0, label
        assert size == H.image_size(lab.description_path(label)), label
        end = address + size


# reserved-memory regions a board has before its EEPROMs: OpenSBI's one or
# two on riscv64-virt; the video and framebuffer pools of the AST2600 EVB's
# device tree
OTHER_REGIONS = {"riscv64-virt": 2, "ast2600-evb": 2}


def test_within_reserved_regions():
    """6.1 keeps at most 64 reserved-memory regions (MAX_RESERVED_REGIONS)
    and drops the rest at boot ("not enough space for all defined
    regions"), taking EEPROMs with them. Every variant of every board that
    attaches the hostile images stays within what the board leaves."""
    boards = sorted(p.parent.name for p in (lab.TOP / "qemu-boards").glob("*/board.conf"))
    boards = [b for b in boards if any(lab.hostile_rmem(b, k) is not None for k in lab.KERNELS)]
    assert "ast2600-evb" in boards and "riscv64-virt" in boards, boards
    for board in boards:
        for kernel in lab.KERNELS:
            for variant in (None, "bench"):
                n = len(lab.rmem_regions(board, kernel, variant))
                assert n <= 64 - OTHER_REGIONS[board], f"{board} {kernel} {variant or ''}: {n} rmem EEPROMs"


@pytest.mark.parametrize("cells", [(1, 1), (2, 1), (2, 2)])
def test_overlay_in_the_cells_of_the_base(cells):
    """reg is written in the address and size cells of the base tree's
    reserved-memory node (one each on the AST2600, which the overlay would
    otherwise change under the node's own children), read back the same"""
    with tempfile.TemporaryDirectory() as tmp:
        base = _compiled(f"/dts-v1/;\n/ {{\n\t#address-cells = <2>;\n\t#size-cells = <2>;\n"
                         f"\treserved-memory {{\n\t\t#address-cells = <{cells[0]}>;\n"
                         f"\t\t#size-cells = <{cells[1]}>;\n\t\tranges;\n\t}};\n}};\n", tmp)
        assert H.cells_of(base) == cells
        text = H.overlay(0xa0000000, H.cells_of(base))
        assert f"#address-cells = <{cells[0]}>;" in text and f"#size-cells = <{cells[1]}>;" in text
        regions = lab.qemu_helper.rmem_regions(str(_compiled(text, tmp)))
    assert min(a for _, a, _ in regions) == 0xa0000000
    assert sorted(label for label, _, _ in regions) == sorted(d.stem for d in DESCS)


def test_overlay_cells_without_reserved_memory():
    """a base without reserved-memory: the root's cells (2 and 1 when it
    says nothing, as the device-tree specification defaults them)"""
    with tempfile.TemporaryDirectory() as tmp:
        assert H.cells_of(_compiled("/dts-v1/;\n/ {\n\t#address-cells = <1>;\n};\n", tmp)) == (1, 1)
        assert H.cells_of(_compiled("/dts-v1/;\n/ {\n};\n", tmp)) == (2, 1)


def test_overlay_refuses_what_the_cells_cannot_hold():
    with pytest.raises(H.HostileError, match="does not fit in 1 cell"):
        H.overlay(0x1_0000_0000, (1, 1))
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.dtb"
        bad.write_bytes(b"not a tree")
        with pytest.raises(H.HostileError, match="no flattened device tree"):
            H.cells_of(bad)


FRU_DESCS = [d for d in lab.fru_descriptions() if d.parent.name == "hostile-fru"]


@pytest.mark.parametrize("path", FRU_DESCS, ids=[d.stem for d in FRU_DESCS])
def test_fru_outcome_as_documented(path):
    """the malformed FRU images (eeprom-images/hostile-fru/, attached in a
    boot of their own by tests/boot/test_rust_layouts.py) say what is wrong
    and are rejected by nvmem-image, naming the image"""
    assert path.read_text().startswith("# Hostile image: "), f"{path.name}: the first line must say what is wrong"
    layout, expect = H.meta(path)
    assert (layout, expect) == ("nvmem-lab,ipmi-fru", "rejected")
    status, out = cells(path)
    assert status == 1 and path.name in out, f"{path.name}: {out[:300]}"


def test_layouts_follow_the_kernel_config():
    """a hostile image is attached only where the kernel builds its layout:
    every compatible of a description has its options (LAYOUT_OPTIONS),
    and a config without an option drops exactly that layout's images"""
    descs = DESCS + FRU_DESCS
    layouts = {H.meta(d)[0] for d in descs}
    assert layouts <= set(H.LAYOUT_OPTIONS), sorted(layouts - set(H.LAYOUT_OPTIONS))
    everything = {o: "y" for opts in H.LAYOUT_OPTIONS.values() for o in opts}
    assert H.descriptions(everything) == DESCS
    without_onie = dict(everything, CONFIG_NVMEM_LAYOUT_ONIE_TLV="n")
    kept = H.descriptions(without_onie)
    assert kept and all(H.meta(d)[0] != "onie,tlv-layout" for d in kept)
    assert len(kept) == len(DESCS) - sum(H.meta(d)[0] == "onie,tlv-layout" for d in DESCS)
    # the sl28 layout in either language
    rust_sl28 = dict(everything, CONFIG_NVMEM_LAYOUT_SL28_VPD="n")
    assert any(H.meta(d)[0] == "kontron,sl28-vpd" for d in H.descriptions(rust_sl28))
    with pytest.raises(H.HostileError):
        H.built("vendor,unknown-layout", everything)
