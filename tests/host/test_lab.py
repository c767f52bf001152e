"""Host-side checks of the test helpers themselves (no board needed)."""
from pathlib import Path

import lab

ENV = Path(lab.TOP) / "tests" / "env"


def test_riscv_attachments(monkeypatch):
    monkeypatch.setenv("LG_IMAGES", "/img")
    monkeypatch.setenv("LG_OUT", "/out")
    found = lab.attachments(ENV / "riscv64-virt.yaml")
    assert [a.kind for a in found] == ["rmem"] * 8
    assert {a.where for a in found} == {"9f000000", "9f001000", "9f002000", "9f004000", "9f005000",
                                        "9f006000", "9f007000", "9f008000"}
    assert all(str(a.file).startswith("/img/") for a in found)


def test_rmem_addresses_match_overlay(monkeypatch):
    """The loader addresses in the environment and the reg of the overlay's
    nvmem-rmem nodes must agree, or the kernel reads the wrong RAM."""
    monkeypatch.setenv("LG_IMAGES", "/img")
    monkeypatch.setenv("LG_OUT", "/out")
    overlay = (Path(lab.TOP) / "dts" / "riscv64-virt-rmem.dtso").read_text()
    for a in lab.attachments(ENV / "riscv64-virt.yaml"):
        assert f"eeprom@{a.where}" in overlay
        assert f"0x{a.where}" in overlay


def test_arm_attachments(monkeypatch):
    monkeypatch.setenv("LG_IMAGES", "/img")
    monkeypatch.setenv("LG_OUT", "/out")
    found = {a.id for a in lab.attachments(ENV / "ast2600-evb.yaml")}
    assert found == {"mtd:spi0.0:bmc-flash.bin", "at24:8-0050:onie-switch.bin",
                     "at24:8-0051:sl28-vpd.bin", "at24:8-0052:board-info.bin",
                     "at24:8-0053:calib-blob.bin", "at24:8-0054:onie-bad-crc.bin",
                     "at24:8-0055:sl28-bad-magic.bin"}


def test_splat_patterns():
    p = lab.splat_patterns()
    for line in ["[    1.0] BUG: KASAN: slab-out-of-bounds in foo",
                 "[    2.0] WARNING: CPU: 0 PID: 1 at drivers/nvmem/core.c:100",
                 "Internal error: Oops: 5 [#1] SMP ARM",
                 "UBSAN: array-index-out-of-bounds in x.c:1:2",
                 "WARNING: possible circular locking dependency detected"]:
        assert p.search(line), line
    for line in ["[    0.5] nvmem rmem0: registered", "Run /init as init process"]:
        assert not p.search(line), line
