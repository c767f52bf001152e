"""Host-side checks of the test helpers themselves (no board needed)."""
import re
from pathlib import Path

import pytest

import lab

ENV = Path(lab.TOP) / "tests" / "env"


def test_riscv_attachments(monkeypatch):
    monkeypatch.setenv("LG_IMAGES", "/img")
    monkeypatch.setenv("LG_OUT", "/out")
    found = lab.attachments(ENV / "riscv64-virt.yaml")
    assert [a.kind for a in found] == ["rmem"] * 19
    assert {a.where for a in found} == {"9f000000", "9f001000", "9f002000", "9f004000", "9f005000",
                                        "9f006000", "9f007000", "9f008000", "9f009000", "9f00a000",
                                        "9f00c000", "9f00e000", "9f010000", "9f020000", "9f021000",
                                        "9f022000", "9f024000", "9f026000", "9f028000"}
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
                     "at24:8-0055:sl28-bad-magic.bin", "at24:8-0056:mac-base.bin"}


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


# ---- board promises (qemu-boards/<board>/board.conf) ----


def test_promises_of_both_boards():
    """The parser reads both boards' board.conf; the per-kernel variables
    apply to their kernel only."""
    ours = lab.board_promises("riscv64-virt", "ours")
    ref = lab.board_promises("riscv64-virt", "ref")
    both = {"board-info:fixed-layout", "onie-switch:onie,tlv-layout", "sl28-vpd:kontron,sl28-vpd",
            "onie-bad-crc:onie,tlv-layout", "sl28-bad-magic:kontron,sl28-vpd", "onie-2k:onie,tlv-layout",
            "uboot-env-small:u-boot,env", "uboot-env-64k:u-boot,env", "uboot-env-bad-crc:u-boot,env"}
    assert {p.id for p in ref.layouts} == both
    # beyond 6.12: mac-base and the choice between redundant copies
    assert {p.id for p in ours.layouts} - both == {
        "mac-base:fixed-layout", "uboot-env-redund-count:u-boot,env-redundant-count",
        "uboot-env-redund-bool:u-boot,env-redundant-bool", "uboot-env-both-bad:u-boot,env-redundant-bool",
        "uboot-env-bad-ethaddr:u-boot,env", "uboot-env-redund-first:u-boot,env-redundant-count",
        "uboot-env-redund-equal:u-boot,env-redundant-count",
        "uboot-env-redund-second-bad:u-boot,env-redundant-bool",
        "uboot-env-redund-erased:u-boot,env-redundant-bool"}
    assert ours.macs == ref.macs == ()
    arm = lab.board_promises("ast2600-evb", "ours")
    assert lab.LayoutPromise("bmc-flash", "u-boot-env", "u-boot,env") in arm.layouts
    assert lab.MacPromise("/ahb/ftgmac@1e660000", "onie-switch", "", "mac-address", 2) in arm.macs
    assert lab.MacPromise("/ahb/ftgmac@1e670000", "mac-base", "", "mac-text", -1) in arm.macs
    env = lab.MacPromise("/ahb/ftgmac@1e690000", "bmc-flash", "u-boot-env", "ethaddr", 3)
    assert env in arm.macs and env.target == "bmc-flash/u-boot-env"
    assert lab.board_promises("ast2600-evb", "ref").macs[0].consumer == "/ahb/ethernet@1e660000"


def test_promised_images_are_attached(monkeypatch):
    """Every promised image is attached by the board's QEMU environment."""
    monkeypatch.setenv("LG_IMAGES", "/img")
    monkeypatch.setenv("LG_OUT", "/out")
    for board in ("riscv64-virt", "ast2600-evb"):
        attached = {a.file.stem for a in lab.attachments(ENV / f"{board}.yaml")}
        for kernel in lab.KERNELS:
            promises = lab.board_promises(board, kernel)
            assert {p.image for p in promises.layouts + promises.macs} <= attached, (board, kernel)


def _conf(tmp_path, text):
    d = tmp_path / "qemu-boards" / "fake-board"
    d.mkdir(parents=True)
    (d / "board.conf").write_text('IMAGES="onie-switch bmc-flash"\n' + text)
    return d / "board.conf"


@pytest.mark.parametrize("text, error", [
    ('LAYOUTS="onie-switch"\n', r"LAYOUTS: 'onie-switch' is not <image>\[/<mtd partition>\]:<layout compatible>"),
    ('LAYOUTS="onie-switch:onie,tlv-layout:extra"\n', "LAYOUTS: 'onie-switch:onie,tlv-layout:extra' is not"),
    ('LAYOUTS="nowhere:fixed-layout"\n', "names image 'nowhere', which is not in IMAGES"),
    ('LAYOUTS="onie-switch:fixed-layout"\nLAYOUTS_OURS="onie-switch:onie,tlv-layout"\n',
     "promises a second layout on onie-switch"),
    ('LAYOUTS_TYPO="onie-switch:fixed-layout"\n', "LAYOUTS_TYPO: unknown kernel suffix 'TYPO'"),
    ('LAYOUTS="onie-switch:onie,tlv-layout"\nMAC_CELLS="eth0:onie-switch:mac-address"\n',
     "MAC_CELLS: 'eth0:onie-switch:mac-address' is not "
     "<interface or /dt/node/path>:<image>\\[/<mtd partition>\\]:<cell>:<index>"),
    ('LAYOUTS="onie-switch:onie,tlv-layout"\nMAC_CELLS="eth0:onie-switch:mac-address:x"\n', "is not <interface"),
    ('MAC_CELLS="eth0:onie-switch:mac-address:2"\n', "'onie-switch', which has no LAYOUTS promise for kernel 'ours'"),
    ('LAYOUTS_REF="onie-switch:onie,tlv-layout"\nMAC_CELLS="eth0:onie-switch:mac-address:2"\n',
     "which has no LAYOUTS promise for kernel 'ours'"),
    ('LAYOUTS="unterminated\n', "bash cannot source it"),
])
def test_malformed_promise_is_rejected(tmp_path, text, error):
    """A malformed promise is an error that names the file, the variable and
    the entry, not a promise quietly dropped."""
    conf = _conf(tmp_path, text)
    with pytest.raises(ValueError, match=error) as e:
        lab.board_promises(conf, "ours")
    assert str(conf) in str(e.value)


def test_well_formed_fake_promises(tmp_path):
    conf = _conf(tmp_path, 'LAYOUTS="onie-switch:onie,tlv-layout\n\tbmc-flash/u-boot-env:fixed-layout"\n'
                           'MAC_CELLS_OURS="/ahb/ftgmac@1e660000:onie-switch:mac-address:0 eth1:onie-switch:mac-address:1"\n')
    ours = lab.board_promises(conf, "ours")
    assert [p.id for p in ours.layouts] == ["onie-switch:onie,tlv-layout", "bmc-flash/u-boot-env:fixed-layout"]
    assert [(p.consumer, p.index) for p in ours.macs] == [("/ahb/ftgmac@1e660000", 0), ("eth1", 1)]
    assert lab.board_promises(conf, "ref").macs == ()
    with pytest.raises(ValueError, match="unknown kernel 'mine'"):
        lab.board_promises(conf, "mine")


def test_fragment_selftests():
    """The expected KUnit suites and Rust self-tests come from the board's
    config fragments (config.fragment + config-<kernel>.fragment)."""
    assert lab.fragment_selftests("riscv64-virt", "ours", lab.KUNIT_SUITES, "y") == {
        "riscv_hwprobe", "nvmem_layouts", "nvmem_layout_onie_tlv", "nvmem_layout_sl28vpd",
        "nvmem_layout_u_boot_env", "nvmem_layout_u_boot_env_of"}
    assert lab.fragment_selftests("riscv64-virt", "ref", lab.KUNIT_SUITES, "y") == set()
    assert lab.fragment_selftests("riscv64-virt", "ours", lab.RUST_SELFTESTS, "m") == {"rust_sync_selftest"}
    assert lab.fragment_selftests("ast2600-evb", "ours", lab.RUST_SELFTESTS, "m") == set()
    # every option of the table is one a fragment may ask for: no typo
    frags = "".join(p.read_text() for p in (Path(lab.TOP) / "qemu-boards").glob("*/config*.fragment"))
    for opt in list(lab.KUNIT_SUITES) + list(lab.RUST_SELFTESTS):
        assert f"\n{opt}=" in f"\n{frags}", opt
    # and every KUnit option a fragment asks for has its suites in the table
    asked = set(re.findall(r"^(CONFIG_\w*KUNIT_TEST)=y$", frags, re.M))
    assert asked and asked <= set(lab.KUNIT_SUITES), sorted(asked - set(lab.KUNIT_SUITES))
