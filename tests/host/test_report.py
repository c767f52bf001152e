"""make report (scripts/report.py): the page from a run's files, and the
page in a real browser (Debian's headless Chromium): it renders, every
image loads, no console error. Fed made-up run files, one session failing."""
import importlib.util
import json
import shutil

import pytest

import lab

_spec = importlib.util.spec_from_file_location("report", lab.TOP / "scripts" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

JUNIT = ('<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="{e}" failures="{f}" '
         'skipped="{s}" tests="{t}" time="{sec}"></testsuite></testsuites>')


@pytest.fixture
def run_files(tmp_path):
    build = tmp_path / "build"
    for (b, k), (t, f, s) in {("riscv64-virt", "ours"): (10, 0, 2),
                              ("ast2600-evb", "ours"): (7, 1, 1)}.items():
        logs = build / b / k / "test-logs"
        logs.mkdir(parents=True)
        (logs / "junit.xml").write_text(JUNIT.format(e=0, f=f, s=s, t=t, sec=120.5))
        (logs / "boot-to-shell.txt").write_text("12.5\n")
        (logs / "kernel-version.txt").write_text("Linux 6.1.192\n")
        (logs / "console_main").write_text(
            "[    0.0] Linux version 6.1\n[ 1.0] # Totals: pass:7 fail:0 skip:1 total:8\n"
            "[ 2.0] # Totals: pass:3 fail:1 skip:0 total:4\n"
            "[    0.0] Linux version 6.1\n[ 1.0] # Totals: pass:7 fail:0 skip:1 total:8\n")
    (build / "riscv64-virt" / "ours" / "test-logs" / "hwprobe-bench.txt").write_text(
        "bench vdso_ns=137.3 syscall_ns=475327.2 getppid_ns=79905.6 cpuinfo_ns=9677460.0\n")
    data = build / "report-data"
    data.mkdir()
    (data / "rust-locks.json").write_text(json.dumps(
        {k: {"c_ns": 100.0, "rust_ns": 103.0, "ratio": 1.03, "ci": [1.0, 1.05], "rounds": 101}
         for k in ("mutex", "spinlock", "call")}))
    (data / "layouts.json").write_text(json.dumps(
        [{"image": img, "layout": lay, "bytes": size, "device": "x.eeprom",
          "kernel_us": {"ours": 500.0 * f, "ref": 400.0 * f}, "sysfs_us": {"ours": 9000.0 * f, "ref": 8000.0 * f}}
         for img, lay, size, f in (("onie-256", "onie,tlv-layout", 256, 1), ("onie-2k", "onie,tlv-layout", 2048, 2),
                                   ("env-4k", "u-boot,env", 4096, 1), ("env-64k", "u-boot,env", 65536, 8),
                                   ("calib-blob", "-", 0, 0.5))]))
    ratio = {"ratio": 1.25, "ci": [0.9, 1.5], "rounds": 3, "per_round": [1.25, 0.9, 1.5]}
    (data / "rust-layouts.json").write_text(json.dumps(
        {"board": "riscv64-virt", "kernel": "ours", "rounds": 3, "binds": 3,
         "median_us": {"sl28-c": 80000.0, "sl28-rust": 100000.0, "fru": 120000.0, "onie": 96000.0,
                       "base": 50000.0},
         "per_round_us": {"sl28-c": [80000.0, 70000.0, 90000.0], "sl28-rust": [100000.0, 63000.0, 135000.0],
                          "fru": [120000.0, 110000.0, 130000.0], "onie": [96000.0, 90000.0, 99000.0],
                          "base": [50000.0, 49000.0, 51000.0]},
         "ratios": {"sl28_rust_c": {"bind_to_cells": ratio},
                    "fru_onie": {"bind_to_cells": dict(ratio, ratio=1.0417)}}}))
    (data / "test-times.jsonl").write_text("".join(
        json.dumps({"run": run, "stage": st, "seconds": sec}) + "\n"
        for run, st, sec in ((1, "host checks", 60), (1, "build riscv64-virt ours", 600),
                             (1, "session riscv64-virt ours", 900), (1, "total", 1600),
                             (2, "host checks", 55), (2, "build riscv64-virt ours", 10),
                             (2, "session riscv64-virt ours", 880), (2, "total", 950),
                             # a run that failed in its host checks: not plotted
                             (3, "host checks", 20))))
    return build


def make(build, monkeypatch):
    monkeypatch.setattr("sys.argv", ["report.py", str(build), str(build / "report")])
    assert report.main() == 0
    return build / "report"


def test_report_from_run_files(run_files, monkeypatch):
    out = make(run_files, monkeypatch)
    md = (out / "index.md").read_text()
    assert "| riscv64-virt | ours | Linux 6.1.192 | passed: 8 passed, 0 failed, 2 skipped |" in md
    assert "| ast2600-evb | ours | Linux 6.1.192 | FAILED: 5 passed, 1 failed, 1 skipped |" in md
    # KUnit totals of the first boot only
    assert "10 passed, 1 failed, 1 skipped" in md
    assert "| riscv64-virt | ref | - | not run |" in md
    assert "system call / vDSO 3462x" in md
    assert "onie-2k: in the kernel ours/ref 1.25, end to end 1.12" in md
    assert ("bind to cells, sl28 VPD Rust/C: 1.250 (95% CI 0.900-1.500); "
            "IPMI FRU (Rust) / ONIE (C), 2 KiB: 1.042 (95% CI 0.900-1.500)") in md
    # the run that stopped in its host checks is not plotted as a fast run
    assert "2 finished run(s)" in md
    assert sorted(p.name for p in out.glob("*.svg")) == [
        "hwprobe.svg", "layouts.svg", "rust-layouts.svg", "rust-locks.svg", "test-times.svg"]
    html = (out / "index.html").read_text()
    assert html.count("<img ") == 5 and '<tr class="fail">' in html


def test_report_without_figures_says_what_to_run(tmp_path, monkeypatch):
    out = make(tmp_path / "empty", monkeypatch)
    md = (out / "index.md").read_text()
    assert "`make bench-rust-locks`" in md and "`make bench-layouts`" in md
    assert "`make bench-rust-layouts`" in md
    assert not list(out.glob("*.svg"))


@pytest.mark.timeout(180)
def test_report_in_chromium(run_files, monkeypatch):
    assert shutil.which("chromium") and shutil.which("chromedriver"), \
        "chromium and chromium-driver are not installed (make setup installs them)"
    out = make(run_files, monkeypatch)
    shot = out / "screenshot.png"
    assert report.check_in_browser(out / "index.html", shot) == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the check sees a broken page: an image gone and a script error
    (out / "layouts.svg").unlink()
    page = out / "index.html"
    page.write_text(page.read_text().replace("</body>", "<script>undefined_function();</script></body>"))
    problems = report.check_in_browser(page)
    assert any("layouts.svg did not load" in p for p in problems), problems
    assert any("undefined_function" in p for p in problems), problems
