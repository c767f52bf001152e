"""NVMEM layouts written in Rust (the kernel crate's nvmem module), held to
their C counterparts in the same kernel.

The sl28 VPD layout exists twice: sl28vpd.c and sl28vpd_rust.rs (layouts/
drivers/). Where a board's fragments build both as modules (lab.
RUST_LAYOUTS: riscv64-virt, ours, the only board and kernel with Rust),
the C module, loaded at boot through the modalias, is swapped for the Rust
one and back on every device the board promises the layout to, hostile
images included: the Rust layout must give byte-identical cells, the same
messages for the images it rejects, the same MAC with an index to a device
tree consumer, a readable raw device, and take its cells away when it
goes (dropping its Registration unregisters it).

The IPMI FRU layout exists in Rust only: its cells are held to
`nvmem-image cells`, which parses with the very same source file
(layouts/drivers/ipmi_fru_parse.rs); FreeIPMI's ipmi-fru checks the tool's
decoding of the same images independently (eeprom-images/nvmem-image/
tests/ipmi_fru.rs)."""
import json
import subprocess

import pytest

import lab

HOLDER = "nvmem_cell_holder"


def swaps(pytestconfig, kernel):
    """[(rust module, C module, compatible)] built as modules side by side"""
    opts = lab.fragment_options(lab.board_under_test(pytestconfig), kernel)
    return [(rust, c_mod, compatible) for opt, (rust, c_opt) in lab.RUST_LAYOUTS.items()
            if opts.get(opt) == "m" and opts.get(c_opt) == "m"
            for c_mod, compatible in [lab.LAYOUT_MODULES[c_opt]]]


@pytest.fixture(scope="module")
def layout_pairs(pytestconfig, kernel_under_test):
    pairs = swaps(pytestconfig, kernel_under_test)
    if not pairs:
        pytest.skip("the board's config fragments build no Rust layout beside its C one "
                    "(Rust: riscv64-virt, ours)")
    return pairs


@pytest.fixture(scope="module")
def rust_shell(extra_boots):
    """a boot besides the session's: the layouts are unloaded and swapped"""
    return extra_boots.get()


def targets(sh, pytestconfig, kernel, compatible):
    """{image: (nvmem device, attachment)} of every promise of `compatible`
    on a whole device, the hostile images included"""
    board = lab.board_under_test(pytestconfig)
    by_image = {a.file.stem: a for a in lab.attachments(lab.board_env(pytestconfig))}
    devs = lab.nvmem_devices(sh)
    found = {p.image: (lab.find_device(sh, by_image[p.image], devs), by_image[p.image])
             for p in lab.board_promises(board, kernel).layouts
             if p.compatible == compatible and not p.partition}
    assert found, f"{board}: no LAYOUTS promise with {compatible}"
    return found


def load_as(sh, unload, load, prefix, devs):
    """unload one module, load the other; (cells of `devs`, the kernel's
    lines starting with `prefix` since, by device)"""
    marker = f"nvlab-swap-{load}"
    sh.run_check(f"echo {marker} > /dev/kmsg")
    sh.run_check(f"rmmod {unload}")
    gone = lab.nvmem_cells(sh, *devs)
    assert not any(gone.values()), f"cells left after rmmod {unload}: {gone}"
    sh.run_check(f"modprobe {load}")
    log = lab.dmesg(sh)
    start = max(i for i, line in enumerate(log) if marker in line)
    lines = {dev: sorted(line.split(f" {dev}: ", 1)[1] for line in log[start + 1:]
                         if f" {dev}: {prefix}" in line)
             for dev in devs}
    return lab.nvmem_cells(sh, *devs), lines


def holder_read(sh, cell):
    """the bytes nvmem_cell_holder gets for `cell` of /nvlab-consumer"""
    sh.run_check(f"insmod $(find /lib/modules -name {HOLDER}.ko) node=/nvlab-consumer cells={cell}")
    sh.run_check(f"rmmod {HOLDER}")
    got = [line.split()[-1] for line in lab.dmesg(sh)
           if f"{HOLDER}: /nvlab-consumer {cell} " in line]
    assert got, f"{HOLDER} logged no value for {cell}"
    return got[-1]


def test_rust_layout_matches_c(rust_shell, layout_pairs, pytestconfig, kernel_under_test):
    """Rust and C give the same cells and messages on every image, a
    consumer the same MAC with its index, and rejected images stay
    readable under either"""
    sh = rust_shell
    for rust, c_mod, compatible in layout_pairs:
        found = targets(sh, pytestconfig, kernel_under_test, compatible)
        devs = [dev for dev, _ in found.values()]
        prefix = "sl28vpd: "
        assert sh.run(f"grep -q '^{c_mod} ' /proc/modules")[2] == 0, f"{c_mod} not loaded at boot"
        mac_c0 = holder_read(sh, "vpd-mac")
        rust_cells, rust_lines = load_as(sh, c_mod, rust, prefix, devs)
        mac_rust = holder_read(sh, "vpd-mac")
        c_cells, c_lines = load_as(sh, rust, c_mod, prefix, devs)
        mac_c = holder_read(sh, "vpd-mac")
        rejected = [image for image, (dev, _) in found.items() if not c_cells[dev]]
        assert rejected and len(rejected) < len(found), \
            f"the images should include good and malformed ones: rejected {rejected} of {sorted(found)}"
        for image, (dev, attachment) in found.items():
            assert rust_cells[dev] == c_cells[dev], \
                f"{image} ({dev}): Rust cells {rust_cells[dev]}, C cells {c_cells[dev]}"
            assert rust_lines[dev] == c_lines[dev], \
                f"{image} ({dev}): Rust said {rust_lines[dev]}, C said {c_lines[dev]}"
            if image in rejected:
                assert c_lines[dev], f"{image} ({dev}): rejected without a {prefix!r} line"
                differ = lab.guest_bytes_differ(sh, f"/sys/bus/nvmem/devices/{dev}/nvmem",
                                                attachment.file.read_bytes())
                assert not differ, f"{image} ({dev}): raw content: {differ}"
        assert mac_rust == mac_c == mac_c0, f"vpd-mac with index 1: Rust {mac_rust}, C {mac_c}"
        print(f"\nnvlab: {rust} vs {c_mod}: {len(found)} images, {len(rejected)} rejected with the "
              f"same lines, {sum(len(c) for c in c_cells.values())} cells identical, vpd-mac+1 {mac_c}")
    lab.assert_no_splat(sh, "Rust/C layout swap")


# The IPMI FRU layout's images: the good ones of eeprom-images/, the
# malformed ones of eeprom-images/hostile-fru/ and frutool's (another
# project's generator, from eeprom-images/frutool/). 6.1 keeps at most 64
# reserved-memory regions, which the session's boot fills on riscv64-virt
# (its own EEPROMs and eeprom-images/hostile/), so they are attached in a
# boot of their own: the board's device tree without the hostile images,
# these from HOSTILE_RMEM on (scripts/hostile.py writes the overlay).
FRU_COMPATIBLE = "nvmem-lab,ipmi-fru"
FRU_OPTION = "CONFIG_NVMEM_LAYOUT_IPMI_FRU"
FRU_MODULE = "ipmi_fru"
TOOL = lab.TOP / "target" / "release" / "nvmem-image"


@pytest.fixture(scope="module")
def fru_boot(pytestconfig, kernel_under_test, extra_boots, tmp_path_factory):
    """(shell, {image: (address, description)}) of a boot with the FRU images"""
    board = lab.board_under_test(pytestconfig)
    opts = lab.fragment_options(board, kernel_under_test)
    if opts.get(FRU_OPTION) not in ("y", "m"):
        pytest.skip(f"the config fragments of {board} build no IPMI FRU layout for kernel "
                    f"'{kernel_under_test}' (Rust: riscv64-virt, ours)")
    work = tmp_path_factory.mktemp("fru-boot")
    descs = lab.fru_descriptions()
    regions = lab.rmem_boot_dir(board, kernel_under_test, descs, work)
    assert sorted(regions) == sorted(d.stem for d in descs), regions
    return extra_boots.get(out=work), {d.stem: (regions[d.stem], d) for d in descs}


def fru_devices(sh, images):
    """image -> nvmem device, by the address of its node"""
    devs = lab.nvmem_devices(sh)
    found = {}
    for image, (addr, _) in images.items():
        hits = [name for name, (_, node) in devs.items() if node.endswith(f"/eeprom@{addr:x}")]
        assert len(hits) == 1, f"{image} at {addr:#x}: nvmem devices {hits}"
        found[image] = hits[0]
    return found


def oracle(image):
    r = subprocess.run([str(TOOL), "cells", str(lab.BUILD / "images" / f"{image}.bin"),
                        "--layout", FRU_COMPATIBLE, "--json"], capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else r.stderr.strip())


def test_ipmi_fru_cells(fru_boot):
    """the FRU layout, loaded on demand, gives every good image (frutool's
    among them) exactly the cells nvmem-image predicts, rejects every
    malformed one with an "ipmi-fru:" line naming the device (no cells,
    raw device readable), and its cells go with the module and come back
    with it"""
    sh, images = fru_boot
    assert sh.run(f"grep -q '^{FRU_MODULE} ' /proc/modules")[2] == 0, \
        f"{FRU_MODULE} not loaded at boot: the modalias of its nvmem-layout nodes should load it"
    devs = fru_devices(sh, images)
    got = lab.nvmem_cells(sh, *devs.values())
    log = lab.dmesg(sh)
    good = rejected = 0
    for image, dev in devs.items():
        status, predicted = oracle(image)
        if status == 0:
            want = {c["sysfs"]: (c["size"], c["content"]) for c in predicted}
            assert want, f"{image}: the oracle predicts no cells"
            have = {name: (size, content) for name, (size, _, content) in got[dev].items()}
            assert have == want, f"{image} ({dev}): kernel {have}, nvmem-image {want}"
            good += 1
            continue
        # frutool's images (another project's generator) must be read
        assert not image.startswith("frutool-"), \
            f"{image}: frutool's image rejected by nvmem-image: {predicted}"
        assert got[dev] == {}, f"{image} ({dev}): cells from an image nvmem-image rejects ({predicted})"
        lines = [line for line in log if f" {dev}: ipmi-fru: " in line]
        assert lines, f"{image} ({dev}): no 'ipmi-fru:' line for a malformed image (oracle: {predicted})"
        data = (lab.BUILD / "images" / f"{image}.bin").read_bytes()
        differ = lab.guest_bytes_differ(sh, f"/sys/bus/nvmem/devices/{dev}/nvmem", data)
        assert not differ, f"{image} ({dev}): raw content: {differ}"
        print(f"\nnvlab: outcome: {image}: rejected; kernel: {lines[-1].split('] ', 1)[-1]}; "
              f"nvmem-image: {predicted.splitlines()[-1]}")
        rejected += 1
    assert good >= 2 and rejected >= 10, f"{good} good and {rejected} malformed FRU images"
    made_by_frutool = [i for i in devs if i.startswith("frutool-")]
    assert len(made_by_frutool) >= 2, f"frutool's images not attached: {sorted(devs)}"
    sh.run_check(f"rmmod {FRU_MODULE}")
    gone = lab.nvmem_cells(sh, *devs.values())
    assert not any(gone.values()), f"cells left after rmmod {FRU_MODULE}: {gone}"
    sh.run_check(f"modprobe {FRU_MODULE}")
    back = lab.nvmem_cells(sh, *devs.values())
    assert back == got, f"{FRU_MODULE} reloaded: {back}, at boot {got}"
    print(f"\nnvlab: ipmi-fru: {good} images with the predicted cells "
          f"({sum(len(c) for c in got.values())} cells), {rejected} rejected; unload/reload kept them")
    lab.assert_no_splat(sh, "the IPMI FRU boot")


# The self-test of the abstraction (lib/rust_nvmem_selftest_main.rs,
# CONFIG_RUST_NVMEM_SELFTEST): every case it must report.
NVMEM_SELFTEST = "rust_nvmem_selftest"
NVMEM_SELFTEST_CASES = {"case_binds_late", "case_binds_early", "case_bounded_reads",
                        "case_hook_with_index", "case_malformed", "case_drop_unregisters"}


def test_abstraction_selftest(rust_shell, pytestconfig, kernel_under_test, tmp_path):
    """rust_nvmem_selftest, loaded: a KTAP report with every case passed
    (registration and binding both ways, bounded reads, read hook with
    the consumer's index, bits, malformed content, drop unregisters), its
    overlay and devices gone afterwards, no splat"""
    board = lab.board_under_test(pytestconfig)
    if NVMEM_SELFTEST not in lab.fragment_selftests(board, kernel_under_test, lab.RUST_SELFTESTS, "m"):
        pytest.skip(f"the config fragments of {board} build no {NVMEM_SELFTEST} for kernel "
                    f"'{kernel_under_test}' (Rust: riscv64-virt, ours)")
    sh = rust_shell
    marker = "nvlab-rust-nvmem-selftest"
    sh.run_check(f"echo {marker} > /dev/kmsg")
    _, _, code = sh.run(f"insmod $(find /lib/modules -name {NVMEM_SELFTEST}.ko)", timeout=300)
    log = lab.dmesg(sh)
    log = log[max(i for i, line in enumerate(log) if marker in line) + 1:]
    assert code == 0, f"insmod {NVMEM_SELFTEST}: {code}\n" + "\n".join(log[-20:])
    (tmp_path / "ktap.txt").write_text("\n".join(log) + "\n")
    result, parsed = lab.kunit_parse(lab.TOP / "build" / "src" / "linux-6.1", tmp_path / "ktap.txt",
                                     tmp_path / "ktap.json")
    cases = {case["name"]: case["status"] for suite in result.get("sub_groups", [])
             for case in suite.get("test_cases", [])}
    assert set(cases) == NVMEM_SELFTEST_CASES, f"cases {sorted(cases)}\n{parsed[-2000:]}"
    bad = {name: status for name, status in cases.items() if status != "PASS"}
    assert not bad, f"{bad}\n" + "\n".join(line for line in log if "# case_" in line)
    sh.run_check(f"rmmod {NVMEM_SELFTEST}")
    leftovers = sh.run("ls -d /sys/firmware/devicetree/base/rust-nvmem-selftest* "
                       "/sys/bus/nvmem/devices/rust-nvmem-selftest 2>/dev/null")[0]
    assert not leftovers, f"left behind by the self-test: {leftovers}"
    print(f"\nnvlab: {NVMEM_SELFTEST}: {len(cases)} cases passed")
    lab.assert_no_splat(sh, NVMEM_SELFTEST)
