"""KUnit suites built into the kernel under test ran at boot and passed.
The kernel log is parsed with the kernel's own tools/testing/kunit/kunit.py."""
import os
from pathlib import Path

import lab

# Suites our config fragments enable, by the option that builds them.
SUITES = {
    "CONFIG_RISCV_HWPROBE_KUNIT_TEST": "riscv_hwprobe",
    "CONFIG_NVMEM_KUNIT_TEST": "nvmem_layouts",
    "CONFIG_NVMEM_LAYOUT_ONIE_TLV_KUNIT_TEST": "nvmem_layout_onie_tlv",
    "CONFIG_NVMEM_LAYOUT_SL28_VPD_KUNIT_TEST": "nvmem_layout_sl28vpd",
}


def _enabled_suites():
    config = Path(os.environ.get("LG_OUT", "")) / "kernel" / ".config"
    text = config.read_text() if config.exists() else ""
    return {suite for opt, suite in SUITES.items() if f"\n{opt}=y\n" in f"\n{text}"}


def _cases(group, prefix=""):
    name = f"{prefix}{group.get('name', '')}"
    for case in group.get("test_cases", []):
        yield f"{name}.{case['name']}", case["status"]
    for sub in group.get("sub_groups", []):
        yield from _cases(sub, f"{name}/" if name else "")


def test_kunit_suites_pass(shell, kernel_under_test, tmp_path, subtests):
    want = _enabled_suites()
    tree = lab.TOP / "build" / "src" / ("linux-6.1" if kernel_under_test == "ours" else "linux-6.12")
    log = tmp_path / "dmesg.txt"
    log.write_text("\n".join(shell.run_check("dmesg", timeout=120)) + "\n")
    if "KTAP version" not in log.read_text() and "TAP version" not in log.read_text():
        assert not want, f"no KUnit output in the kernel log, expected suites {sorted(want)}"
        return
    result, report = lab.kunit_parse(tree, log, tmp_path / "kunit.json")
    cases = list(_cases(result))
    ran = {name.split("/")[-1].split(".")[0] for name, _ in cases}
    assert want <= ran, f"suites {sorted(want - ran)} did not run (ran: {sorted(ran)})\n{report[-2000:]}"
    for name, status in cases:
        with subtests.test(msg=name):
            assert status in ("PASS", "SKIP"), f"{name}: {status}\n{report[-2000:]}"
