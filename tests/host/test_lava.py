"""scripts/lava.py without a board: the QEMU command line taken apart into
LAVA images and device options, the generated job and device dictionary
through LAVA's own schemas (lava_common), the guest's cell digest equal to
the host's, LAVA's log read back, and results held to the local ones."""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(TOP / "scripts"))
import lava  # noqa: E402

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.boot.test_cells" name="test_layout_promise_kept[onie-switch:onie,tlv-layout]"/>
<testcase classname="tests.boot.test_cells" name="test_layout_promise_kept[sl28-vpd:kontron,sl28-vpd]">
<failure message="x"/></testcase>
<testcase classname="tests.boot.test_kunit" name="test_kunit_suites_pass"/>
</testsuite></testsuites>"""


@pytest.fixture
def files(tmp_path):
    for name in ("zImage", "board.dtb", "initramfs.cpio.gz", "onie-switch.bin", "bmc-flash.bin"):
        (tmp_path / name).write_bytes(b"x")
    return tmp_path


def command(d):
    return ["/usr/bin/qemu-system-arm", "-kernel", f"{d}/zImage", "-dtb", f"{d}/board.dtb",
            "-no-reboot", "-initrd", f"{d}/initramfs.cpio.gz",
            "-drive", f"file={d}/bmc-flash.bin,format=raw,if=mtd,snapshot=on",
            "-drive", f"if=none,id=ee50,format=raw,snapshot=on,file={d}/onie-switch.bin",
            "-device", "at24c-eeprom,bus=aspeed.i2c.bus.8,address=0x50,rom-size=4096,drive=ee50",
            "-machine", "ast2600-evb", "-m", "1G", "-nographic",
            "-append", "console=ttyS4,115200 panic=-1"]


def test_files_become_images_the_rest_options(files):
    binary, options, images = lava.split_command(command(files))
    assert binary == "/usr/bin/qemu-system-arm"
    assert list(images) == ["kernel", "dtb", "initrd", "bmc_flash", "onie_switch"]
    assert images["onie_switch"] == (f"{files}/onie-switch.bin",
                                     "-drive if=none,id=ee50,format=raw,snapshot=on,file={onie_switch}")
    assert images["kernel"][1] == "-kernel {kernel}"
    # no file is left among the options, every other argument is
    assert not any(str(files) in o for o in options)
    assert options == ["-no-reboot",
                       "-device at24c-eeprom,bus=aspeed.i2c.bus.8,address=0x50,rom-size=4096,drive=ee50",
                       "-machine ast2600-evb", "-m 1G", "-nographic",
                       "-append 'console=ttyS4,115200 panic=-1'"]


def test_missing_file_is_named(files):
    (files / "onie-switch.bin").unlink()
    with pytest.raises(lava.LavaError, match="onie_switch: .*onie-switch.bin does not exist"):
        lava.split_command(command(files))


def test_generated_job_and_device_pass_lavas_schemas(files, tmp_path, monkeypatch):
    build = tmp_path / "build"
    logs = build / "ast2600-evb" / "ours" / "test-logs"
    (logs / "cells").mkdir(parents=True)
    (logs / "junit.xml").write_text(JUNIT)
    (logs / "console_main").write_text("[    1.0] ok 1 nvmem_layouts\n[    2.0] not ok 2 other\n")
    import lab
    for p in lab.board_promises("ast2600-evb", "ours").layouts:
        (logs / "cells" / f"{p.target.replace('/', '_')}.json").write_text(
            json.dumps({"device": "8-00500", "cells": {"a@0,0": [2, "abcd"]}}))
    monkeypatch.setattr(lava, "BUILD", build)
    monkeypatch.setattr(lava, "qemu_args", lambda b, k: command(files))
    monkeypatch.setattr(lava, "nic_model", lambda b, k: "ftgmac100")
    job, device, expect = lava.generate("ast2600-evb", "ours", tmp_path / "out")
    lava.validate_job(job)
    lava.validate_device(device)
    # what lava-run reads is what was validated
    import yaml
    assert yaml.safe_load((tmp_path / "out" / "job.yaml").read_text()) == job
    # lava-server's qemu template made the board's QEMU of the job context
    qemu = device["actions"]["boot"]["methods"]["qemu"]["parameters"]
    assert qemu["command"] == "qemu-system-arm"
    assert {"-machine ast2600-evb", "-m 1G", "-nographic"} <= set(qemu["options"])
    assert any(o.startswith("-net nic,model=ftgmac100,") for o in qemu["options"])
    assert qemu["extra"] == job["context"]["extra_options"]
    assert "-append 'console=ttyS4,115200 panic=-1'" in qemu["extra"]
    assert ("0_kunit", "nvmem_layouts") in expect and ("0_kunit", "other") in expect
    cells = [k for k in expect if k[0] == "0_nvmem" and k[1].startswith("cells-")]
    assert len(cells) == len(lab.board_promises("ast2600-evb", "ours").layouts)
    # a job LAVA's schema refuses is refused here
    job["actions"][1]["boot"]["method"] = "qemu-no-such-method"
    with pytest.raises(Exception):
        lava.validate_job(job)


@pytest.mark.parametrize("device", ["ast2600-evb-01", "hifive-unmatched-01"])
def test_real_board_dictionaries_render_valid(device):
    """the sketches for real boards render with lava-server's own
    base-uboot.jinja2 into device configurations LAVA's schema accepts,
    booting with U-Boot's bootz/booti over TFTP"""
    d = lava.render_device(f"{device}.jinja2")
    lava.validate_device(d)
    uboot = d["actions"]["boot"]["methods"]["u-boot"]
    assert d["commands"]["connect"].startswith("telnet ")
    assert {"power_on", "power_off", "hard_reset"} <= set(d["commands"])
    kind = "bootz" if device.startswith("ast2600") else "booti"
    assert kind in d["parameters"]
    # the ramdisk boot loads kernel and initramfs over TFTP
    assert "tftp" in d["actions"]["deploy"]["methods"]
    assert any(c.startswith("tftp {KERNEL_ADDR}") for c in uboot["ramdisk"]["commands"])


@pytest.mark.parametrize("board,model", [("ast2600-evb", "ftgmac100"), ("riscv64-virt", None)])
def test_nic_model_of_each_board(board, model):
    """the option read from the board's own environment: one that sets
    no options at all (riscv64-virt) gets the template's NIC, not an
    exception from labgrid"""
    assert lava.nic_model(board, "ours") == model


def test_context_takes_the_board_apart(files):
    binary, options, _ = lava.split_command(command(files))
    ctx = lava.qemu_context(binary, options, "ftgmac100")
    assert ctx["arch"] == "arm" and ctx["machine"] == "ast2600-evb" and ctx["memory"] == "1G"
    assert ctx["model"] == "model=ftgmac100" and "-nographic" not in ctx["extra_options"]
    with pytest.raises(lava.LavaError, match="no -machine"):
        lava.qemu_context(binary, [o for o in options if not o.startswith("-machine")])
    with pytest.raises(lava.LavaError, match="no LAVA architecture"):
        lava.qemu_context("/usr/bin/qemu-system-nothing", options)


def test_no_local_session_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(lava, "BUILD", tmp_path)
    with pytest.raises(lava.LavaError, match="no local session"):
        lava.checks("ast2600-evb", "ours")


def test_guest_digest_is_the_hosts():
    """the guest pipeline of cells_command over nvmem-sysfs output (run
    here with the host's awk, sort, sha256sum) gives listing_digest()"""
    out = ("8-00500 vendor@10,0 4 444 41424344\n8-00500 Mac@2,0 6 444 -\n"
           "8-00500 b@1,0 1 444 ERR\n")
    cells = {"vendor@10,0": [4, "41424344"], "Mac@2,0": [6, ""], "b@1,0": [1, None]}
    r = subprocess.run("awk '{print $2, $3, $5}' | LC_ALL=C sort | sha256sum", shell=True,
                       input=out, capture_output=True, text=True, check=True)
    assert r.stdout.split()[0] == lava.listing_digest(cells)
    cells["vendor@10,0"] = [4, "41424345"]
    assert r.stdout.split()[0] != lava.listing_digest(cells)
    assert lava.listing_digest({}) == hashlib.sha256(b"").hexdigest()
    cmd = lava.cells_command("8-00500", "ab" * 32)
    # the console echoes the command: it must not hold a verdict itself
    assert "NVLAB-PASS" not in cmd and "NVLAB-FAIL" not in cmd


def test_results_read_from_lava_run_log(tmp_path):
    log = tmp_path / "lava-run.log"
    log.write_text('{"dt": "2026", "lvl": "info", "msg": "x"}\n'
                   '{"dt": "2026", "lvl": "results", "msg": {"case": "cells-a", "definition": "0_nvmem", '
                   '"result": "pass"}}\n'
                   '{"dt": "2026", "lvl": "results", "msg": {"case": "job", "definition": "lava", '
                   '"result": "pass"}}\n')
    assert lava.lava_results(log) == {("0_nvmem", "cells-a"): "pass", ("lava", "job"): "pass"}


def test_results_held_to_local_outcomes(tmp_path):
    (tmp_path / "junit.xml").write_text(JUNIT)
    local = lava.junit_outcomes(tmp_path / "junit.xml")
    expect = {("0_nvmem", "cells-onie"): "tests.boot.test_cells::test_layout_promise_kept[onie-switch:onie,tlv-layout]",
              ("0_nvmem", "cells-sl28"): "tests.boot.test_cells::test_layout_promise_kept[sl28-vpd:kontron,sl28-vpd]",
              ("0_kunit", "nvmem_layouts"): "tests.boot.test_kunit::test_kunit_suites_pass"}
    same = {("lava", "job"): "pass", ("0_nvmem", "cells-onie"): "pass", ("0_nvmem", "cells-sl28"): "fail",
            ("0_kunit", "nvmem_layouts"): "pass"}
    assert lava.compare(same, expect, local) == []
    # LAVA passing what the suite failed, a missing result, a failed job
    assert lava.compare({**same, ("0_nvmem", "cells-sl28"): "pass"}, expect, local)
    missing = dict(same)
    del missing[("0_kunit", "nvmem_layouts")]
    assert lava.compare(missing, expect, local) == ["0_kunit/nvmem_layouts: LAVA absent, local "
                                                    "tests.boot.test_kunit::test_kunit_suites_pass passed"]
    assert lava.compare({**same, ("lava", "job"): "fail"}, expect, local) == ["lava/job: fail"]
    # a check that must pass, and a result that is no check
    assert lava.compare(same, {**expect, ("0_nvmem", "nvmem-list"): None}, local) == \
        ["0_nvmem/nvmem-list: LAVA absent, must pass"]
    assert lava.compare({**same, ("0_nvmem", "stray"): "pass"}, expect, local) == \
        ["0_nvmem/stray: LAVA pass, no such check"]
