"""Host-side checks of the test helpers themselves (no board needed)."""
import os
import re
import subprocess
from pathlib import Path

import pytest

import lab

ENV = Path(lab.TOP) / "tests" / "env"


RISCV_RMEM = {0x9f000000: "board-info", 0x9f001000: "calib-blob", 0x9f002000: "uboot-env-small",
              0x9f004000: "onie-switch", 0x9f005000: "sl28-vpd", 0x9f006000: "onie-bad-crc",
              0x9f007000: "sl28-bad-magic", 0x9f008000: "onie-2k", 0x9f009000: "mac-base",
              0x9f00a000: "uboot-env-redund-count", 0x9f00c000: "uboot-env-redund-bool",
              0x9f00e000: "uboot-env-both-bad", 0x9f010000: "uboot-env-64k",
              0x9f020000: "uboot-env-bad-crc", 0x9f021000: "uboot-env-bad-ethaddr",
              0x9f022000: "uboot-env-redund-first", 0x9f024000: "uboot-env-redund-equal",
              0x9f026000: "uboot-env-redund-second-bad", 0x9f028000: "uboot-env-redund-erased"}


def _fake_images(tmp_path, names, size=1):
    for n in names:
        (tmp_path / f"{n}.bin").write_bytes(b"\xff" * size)
    return tmp_path


def test_riscv_rmem_from_overlay():
    """The riscv64-virt overlay is the one place of its RAM EEPROMs: each
    labelled nvmem-rmem node, at its address, on both kernels, each label
    an image description of eeprom-images/."""
    for kernel in lab.KERNELS:
        regions = lab.rmem_regions("riscv64-virt", kernel)
        assert {addr: label for label, addr, _ in regions}.items() >= RISCV_RMEM.items(), kernel
        for label, _, _ in regions:
            assert lab.description_path(label).is_file(), label


def test_riscv_attachments(monkeypatch, tmp_path):
    """The environment attaches what $LG_RMEM loads, derived from the
    board's device tree (scripts/qemu.py)."""
    regions = lab.rmem_regions("riscv64-virt", "ours")
    images = _fake_images(tmp_path, [label for label, _, _ in regions])
    dtbos = lab.compile_overlays("riscv64-virt", "ours", tmp_path)
    monkeypatch.setenv("LG_RMEM", lab.qemu_helper.rmem_args(dtbos, str(images)))
    monkeypatch.setenv("LG_IMAGES", "/img")
    monkeypatch.setenv("LG_OUT", "/out")
    found = lab.attachments(ENV / "riscv64-virt.yaml")
    assert {int(a.where, 16): a.file.stem for a in found}.items() >= RISCV_RMEM.items()
    assert {a.kind for a in found} == {"rmem"}
    assert all(a.file.parent == images for a in found)


def test_identity_of_another_build(monkeypatch, tmp_path):
    """A boot of another build directory (the reference session looking
    for what our session recorded, lab.recorded) is named as that
    directory's own session names it: with the rmem images of its own
    device tree (ours has the hostile images, the reference's not)."""
    outs = {}
    for name, labels in (("ours", ["a", "b"]), ("ref", ["a"])):
        out = tmp_path / name
        out.mkdir()
        nodes = "".join(f'{x}@{0x1000 * (i + 1):x} {{ compatible = "nvmem-rmem"; label = "{x}"; '
                        f"reg = <{0x1000 * (i + 1):#x} 0x1000>; }};" for i, x in enumerate(labels))
        (out / "t.dts").write_text("/dts-v1/;\n/ { reserved-memory { #address-cells = <1>; "
                                   f"#size-cells = <1>; ranges; {nodes} }}; }};\n")
        subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(out / "board.dtb"), str(out / "t.dts")],
                       check=True)
        outs[name] = out
    _fake_images(tmp_path, ["a", "b"])
    monkeypatch.setenv("LG_IMAGES", str(tmp_path))
    env = ENV / "riscv64-virt.yaml"
    seen = {}
    for session in ("ours", "ref"):
        monkeypatch.setenv("LG_OUT", str(outs[session]))
        monkeypatch.delenv("LG_RMEM", raising=False)
        seen[session] = lab.boot_identity(env, outs["ours"])
        assert str(tmp_path / "b.bin") in " ".join(lab._load_env(env, outs["ours"]).config.data["targets"]["main"]
                                                   ["drivers"]["QEMUDriver"]["extra_args"].split()), session
        assert os.environ["LG_OUT"] == str(outs[session])
    assert seen["ours"] == seen["ref"]


@pytest.mark.parametrize("problem, size, error", [
    ("missing", None, r"rmem at 0x9f000000 \(board-info\): No such file or directory: .*board-info.bin"),
    ("too big", 0x1001, r"rmem at 0x9f000000: .*board-info.bin is 0x1001 bytes, the region only 0x1000"),
])
def test_rmem_image_problems(tmp_path, problem, size, error):
    """An image that is missing or does not fit its region stops the boot
    with the region and the file named (the loader would spill into the
    next region)."""
    regions = lab.rmem_regions("riscv64-virt", "ours")
    images = _fake_images(tmp_path, [label for label, _, _ in regions if label != "board-info"])
    if size:
        (images / "board-info.bin").write_bytes(bytes(size))
    dtbos = lab.compile_overlays("riscv64-virt", "ours", tmp_path)
    with pytest.raises(lab.qemu_helper.RmemError, match=error):
        lab.qemu_helper.rmem_args(dtbos, str(images))


def test_rmem_overlap_rejected(tmp_path):
    dts = tmp_path / "t.dts"
    dts.write_text("""/dts-v1/;
/ { reserved-memory { #address-cells = <1>; #size-cells = <1>; ranges;
    a@1000 { compatible = "nvmem-rmem"; label = "a"; reg = <0x1000 0x1000>; };
    b@1800 { compatible = "nvmem-rmem"; label = "b"; reg = <0x1800 0x1000>; };
    c@4000 { compatible = "nvmem-rmem"; reg = <0x4000 0x1000>; }; }; };
""")
    dtb = tmp_path / "t.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb), str(dts)], check=True)
    assert lab.qemu_helper.rmem_regions(str(dtb)) == [("a", 0x1000, 0x1000), ("b", 0x1800, 0x1000)]
    _fake_images(tmp_path, ["a", "b"])
    with pytest.raises(lab.qemu_helper.RmemError, match="rmem regions of b and a overlap at 0x1800"):
        lab.qemu_helper.rmem_args([str(dtb)], str(tmp_path))


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
    # every hostile image, with the layout its description names (ours only)
    hostile = {f"{d.stem}:{lab.hostile_images.meta(d)[0]}" for d in lab.hostile_images.descriptions()}
    assert len(hostile) >= 30 and hostile <= {p.id for p in ours.layouts}
    assert not hostile & {p.id for p in ref.layouts}
    # beyond 6.12: mac-base and the choice between redundant copies
    assert {p.id for p in ours.layouts} - both - hostile == {
        "mac-base:fixed-layout", "uboot-env-redund-count:u-boot,env-redundant-count",
        "uboot-env-redund-bool:u-boot,env-redundant-bool", "uboot-env-both-bad:u-boot,env-redundant-bool",
        "uboot-env-bad-ethaddr:u-boot,env", "uboot-env-redund-first:u-boot,env-redundant-count",
        "uboot-env-redund-equal:u-boot,env-redundant-count",
        "uboot-env-redund-second-bad:u-boot,env-redundant-bool",
        "uboot-env-redund-erased:u-boot,env-redundant-bool", "uboot-env-truncated:u-boot,env",
        "uboot-env-unterminated:u-boot,env", "uboot-env-no-equals:u-boot,env", "uboot-env-empty-name:u-boot,env",
        "uboot-env-ethaddr-short:u-boot,env", "uboot-env-short-device:u-boot,env",
        "uboot-env-redund-short-device:u-boot,env-redundant-count"}
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
        for kernel in lab.KERNELS:
            attached = lab.board_images(board, kernel)
            promises = lab.board_promises(board, kernel)
            assert {p.image for p in promises.layouts + promises.macs} <= attached, (board, kernel)


def _conf(tmp_path, text):
    d = tmp_path / "qemu-boards" / "fake-board"
    d.mkdir(parents=True)
    (d / "board.conf").write_text(text)
    return d / "board.conf"


FAKE_IMAGES = {"onie-switch", "bmc-flash"}


@pytest.mark.parametrize("text, error", [
    ('LAYOUTS="onie-switch"\n', r"LAYOUTS: 'onie-switch' is not <image>\[/<mtd partition>\]:<layout compatible>"),
    ('LAYOUTS="onie-switch:onie,tlv-layout:extra"\n', "LAYOUTS: 'onie-switch:onie,tlv-layout:extra' is not"),
    ('LAYOUTS="nowhere:fixed-layout"\n', "names image 'nowhere', which the board does not attach on kernel 'ours'"),
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
        lab.board_promises(conf, "ours", FAKE_IMAGES)
    assert str(conf) in str(e.value)


def test_well_formed_fake_promises(tmp_path):
    conf = _conf(tmp_path, 'LAYOUTS="onie-switch:onie,tlv-layout\n\tbmc-flash/u-boot-env:fixed-layout"\n'
                           'MAC_CELLS_OURS="/ahb/ftgmac@1e660000:onie-switch:mac-address:0 eth1:onie-switch:mac-address:1"\n')
    ours = lab.board_promises(conf, "ours", FAKE_IMAGES)
    assert [p.id for p in ours.layouts] == ["onie-switch:onie,tlv-layout", "bmc-flash/u-boot-env:fixed-layout"]
    assert [(p.consumer, p.index) for p in ours.macs] == [("/ahb/ftgmac@1e660000", 0), ("eth1", 1)]
    assert lab.board_promises(conf, "ref", FAKE_IMAGES).macs == ()
    with pytest.raises(ValueError, match="unknown kernel 'mine'"):
        lab.board_promises(conf, "mine", FAKE_IMAGES)


def test_fragment_selftests():
    """The expected KUnit suites and Rust self-tests come from the board's
    config fragments (config.fragment + config-<kernel>.fragment)."""
    assert lab.fragment_selftests("riscv64-virt", "ours", lab.KUNIT_SUITES, "y") == {
        "riscv_hwprobe", "riscv_misaligned", "nvmem_layouts", "nvmem_layout_onie_tlv",
        "nvmem_layout_u_boot_env", "nvmem_layout_u_boot_env_of"}
    # the sl28 VPD layout is a module on riscv64-virt, built in (with its
    # suite) on ast2600-evb
    assert lab.fragment_selftests("ast2600-evb", "ours", lab.KUNIT_SUITES, "y") == {
        "nvmem_layout_sl28vpd"}
    assert lab.fragment_selftests("riscv64-virt", "ref", lab.KUNIT_SUITES, "y") == set()
    assert lab.fragment_selftests("riscv64-virt", "ours", lab.RUST_SELFTESTS, "m") == {
        "rust_sync_selftest", "rust_nvmem_selftest"}
    assert lab.fragment_selftests("ast2600-evb", "ours", lab.RUST_SELFTESTS, "m") == set()
    # every option of the table is one a fragment may ask for: no typo
    frags = "".join(p.read_text() for p in (Path(lab.TOP) / "qemu-boards").glob("*/config*.fragment"))
    for opt in list(lab.KUNIT_SUITES) + list(lab.RUST_SELFTESTS):
        assert f"\n{opt}=" in f"\n{frags}", opt
    # and every KUnit option a fragment asks for has its suites in the table
    asked = set(re.findall(r"^(CONFIG_\w*KUNIT_TEST)=y$", frags, re.M))
    assert asked and asked <= set(lab.KUNIT_SUITES), sorted(asked - set(lab.KUNIT_SUITES))


def test_layout_modules_table():
    """lab.LAYOUT_MODULES names each layout's module as its Makefile builds
    it and the compatible its match table has (layouts/drivers/)"""
    drivers = Path(lab.TOP) / "layouts" / "drivers"
    makefile = (drivers / "Makefile").read_text()
    for opt, (module, compatible) in lab.LAYOUT_MODULES.items():
        m = re.search(rf"^obj-\$\({opt}\)\s*\+=\s*(\S+)\.o$", makefile, re.M)
        assert m, f"{opt} builds no object in {drivers / 'Makefile'}"
        assert m.group(1).replace("-", "_") == module, (opt, m.group(1), module)
        source = (drivers / f"{m.group(1)}.c").read_text()
        assert f'.compatible = "{compatible}"' in source, (opt, compatible)
    # and the boards build some layout as a module, as the tests expect
    for board in ("riscv64-virt", "ast2600-evb"):
        opts = lab.fragment_options(board, "ours")
        assert any(opts.get(opt) == "m" for opt in lab.LAYOUT_MODULES), board


def test_read_loop_results():
    # two readers' reports as nvmem-sysfs read-loop prints them
    lines = ["ok 7", "errno 2 3", "errno 19 1", "ok 5", "short 2", "errno 2 4"]
    ok, errors, short = lab.read_loop_results(lines)
    assert ok == 12
    assert errors == {2: 7, 19: 1}
    assert short == ["short 2"]
    assert lab.read_loop_results(["ok 0"]) == (0, {}, [])


def test_bench_variant_sweep_attached():
    """make bench-layouts measures every image of its sweep on a device of
    the bench variant: each label of the script's sweep is an rmem region
    of the variant (which keeps the board's own), with a description, and
    no two regions overlap."""
    text = (Path(lab.TOP) / "scripts" / "bench-layouts.sh").read_text()
    sweep = re.search(r"^sweep=\((.*?)\)", text, re.S | re.M).group(1).split()
    labels = [s.split(":")[0] for s in sweep]
    assert len(labels) >= 10
    for kernel in lab.KERNELS:
        regions = lab.rmem_regions("riscv64-virt", kernel, variant="bench")
        have = {label for label, _, _ in regions}
        assert set(labels) <= have, (kernel, set(labels) - have)
        # the board's own EEPROMs, bar the hostile images (not in a variant)
        hostile = {d.stem for d in lab.hostile_images.descriptions()}
        assert {r[0] for r in lab.rmem_regions("riscv64-virt", kernel)} - hostile <= have
        spans = sorted((addr, addr + size, label) for label, addr, size in regions)
        for (a0, a1, la), (b0, _, lb) in zip(spans, spans[1:]):
            assert a1 <= b0, f"{la} and {lb} overlap"
        for label in labels:
            assert lab.description_path(label).is_file(), label


# a make run on a fresh machine: the kernel's crng message landed inside a
# line of the nvmem listing, and decoding the listing failed
CONSOLE_WITH_KMSG = (
    "[    0.000000] Linux version 6.1.192\r\n"
    "=== NVLAB-BEGIN nvmem-list ===\r\n"
    "cell\trmem50\tv1241@966b,0\t24\t313234312d64676a6d707376796265686b6e7174777a6366\t-\r\n"
    "cell\trmem50\tv1242@968a,0\t24\t313234322d6b6e7174777a6366696c6f7275786164676a6d"
    "[  185.798297] random: crng init done\r\n"
    "\t-\r\n"
    "[  186.000001] another message\r\n"
    "cell\trmem50\tv1243@96a9,0\t24\t313234332d7275786164676a6d707376796265686b6e7174\t-\r\n"
    "=== NVLAB-END nvmem-list rc=0 ===\r\n"
    "[  190.000000] reboot: Restarting system\r\n"
    "=== NVLAB-BEGIN unfinished ===\r\n"
    "partial line\r\n"
)


def test_payload_output_takes_kernel_messages_out_of_payload_lines():
    out = lab.payload_output(CONSOLE_WITH_KMSG)
    lines = out.split("\n")
    assert lines[:5] == [
        "=== NVLAB-BEGIN nvmem-list ===",
        "cell\trmem50\tv1241@966b,0\t24\t313234312d64676a6d707376796265686b6e7174777a6366\t-",
        "cell\trmem50\tv1242@968a,0\t24\t313234322d6b6e7174777a6366696c6f7275786164676a6d\t-",
        "cell\trmem50\tv1243@96a9,0\t24\t313234332d7275786164676a6d707376796265686b6e7174\t-",
        "=== NVLAB-END nvmem-list rc=0 ===",
    ]
    # no kernel message, no carriage return; an unfinished block kept
    assert "crng" not in out and "reboot" not in out and "\r" not in out
    assert out.endswith("=== NVLAB-BEGIN unfinished ===\npartial line\n")
