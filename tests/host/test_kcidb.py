"""make test's KCIDB v5 results (scripts/kcidb.py), checked with the kcidb-io
package's own schema: fed a made-up build directory with every outcome
pytest writes (pass, failure, error, skip, xfail) and a session that left
no results."""
import importlib.util
import json

import kcidb_io
import pytest

import lab

_spec = importlib.util.spec_from_file_location("kcidb", lab.TOP / "scripts" / "kcidb.py")
kcidb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kcidb)

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">
<testsuite name="pytest" errors="1" failures="1" skipped="2" tests="6" time="80.0"
 timestamp="2026-12-05T12:19:13.924661+00:00" hostname="vm">
<testcase classname="tests.boot.test_boot" name="test_kernel_under_test" time="57.0" />
<testcase classname="tests.boot.test_cells" name="test_cells[rmem:9f031000:onie-2k.bin]" time="3.2" />
<testcase classname="tests.boot.test_cells" name="test_mac[eth0]" time="1.5">
 <failure message="AssertionError: eth0 is 02:00:00:00:00:00">details</failure></testcase>
<testcase classname="tests.boot.test_unbind" name="test_race" time="9.0">
 <error message="failed on setup">trace</error></testcase>
<testcase classname="tests.boot.test_hwprobe" name="test_vdso" time="0.1">
 <skipped type="pytest.skip" message="riscv_hwprobe exists on RISC-V boards only">x</skipped></testcase>
<testcase classname="tests.boot.test_unbind" name="test_known_race" time="30.0">
 <skipped type="pytest.xfail" message="6.12's known race">KASAN</skipped></testcase>
</testsuite></testsuites>
"""


@pytest.fixture
def build(tmp_path):
    b = tmp_path / "build"
    for board, kernel in (("riscv64-virt", "ours"), ("riscv64-virt", "ref"), ("ast2600-evb", "ours")):
        out = b / board / kernel
        (out / "test-logs").mkdir(parents=True)
        (out / "kernel").mkdir()
        (out / "kernel" / ".config").write_text(
            'CONFIG_RISCV=y\nCONFIG_CC_VERSION_TEXT="Debian clang version 14.0.6"\n')
        if board == "riscv64-virt":
            (out / "Image").write_bytes(b"kernel")
            (out / "test-logs" / "junit.xml").write_text(JUNIT)
    (b / "src" / "linux-6.1" / ".git").mkdir(parents=True)
    (b / "src" / "linux-6.1" / ".git" / "nvlab-source").write_text("6.1.192 (linux-source-6.1 6.1.192-3)\n")
    (b / "src" / "linux-6.12").mkdir(parents=True)
    (b / "src" / "linux-6.12" / ".nvlab-unpacked").write_text("6.12.117 (linux-source-6.12 6.12.117-1)\n")
    return b


def run(build, *args):
    out = build / "kcidb.json"
    rc = kcidb.main(["--build", str(build), "--run", "1700000000", "--out", str(out), *args])
    return rc, (json.loads(out.read_text()) if out.exists() else None)


def test_every_outcome_in_kcidb_terms(build):
    rc, doc = run(build)
    assert rc == 0
    kcidb_io.schema.V5_3.validate_exactly(doc)
    assert doc["version"] == {"major": 5, "minor": 3}
    assert all(o["origin"] == "nvmem_lab" and o["id"].startswith("nvmem_lab:")
               for kind in ("checkouts", "builds", "tests") for o in doc[kind])
    tests = {(t["build_id"].split(":")[3], t["comment"]): t for t in doc["tests"]}
    ours = {c.split("::")[1]: t for (k, c), t in tests.items() if k == "ours" and "::" in c}
    assert ours["test_kernel_under_test"]["status"] == "PASS"
    assert ours["test_kernel_under_test"]["duration"] == 57.0
    assert ours["test_cells[rmem:9f031000:onie-2k.bin]"]["path"] == \
        "nvmem_lab.boot.test_cells.test_cells.rmem-9f031000-onie-2k-bin"
    assert ours["test_mac[eth0]"]["status"] == "FAIL"
    assert "02:00:00:00:00:00" in ours["test_mac[eth0]"]["log_excerpt"]
    assert ours["test_race"]["status"] == "ERROR"
    assert ours["test_vdso"]["status"] == "SKIP"
    # an expected failure is a failure of the tested code, known as an issue
    known = ours["test_known_race"]
    assert known["status"] == "FAIL"
    inc = [i for i in doc["incidents"] if i["test_id"] == known["id"]]
    assert len(inc) == 1 and inc[0]["present"]
    assert {i["id"] for i in doc["issues"]} == {x["issue_id"] for x in doc["incidents"]}
    # the session that left no JUnit file: its build failed, its tests missed
    ast = [b for b in doc["builds"] if "ast2600-evb" in b["id"]]
    assert len(ast) == 1 and ast[0]["status"] == "FAIL"
    assert [t["status"] for t in doc["tests"] if t["build_id"] == ast[0]["id"]] == ["MISS"]
    # one checkout per kernel source; ours carries the series' patchset hash
    by_tree = {c["tree_name"]: c for c in doc["checkouts"]}
    assert set(by_tree) == {"linux-source-6.1", "linux-source-6.12"}
    assert len(by_tree["linux-source-6.1"]["patchset_hash"]) == 64
    assert "patchset_hash" not in by_tree["linux-source-6.12"]
    assert all(b["checkout_id"] in {c["id"] for c in doc["checkouts"]} for b in doc["builds"])
    riscv = [b for b in doc["builds"] if "riscv64-virt" in b["id"]]
    assert {b["architecture"] for b in riscv} == {"riscv"}
    assert {b["compiler"] for b in riscv} == {"Debian clang version 14.0.6"}
    assert len({t["id"] for t in doc["tests"]}) == len(doc["tests"])


def test_sessions_chosen_and_checked(build, capsys):
    rc, doc = run(build, "riscv64-virt:ref")
    assert rc == 0 and {b["id"] for b in doc["builds"]} == {"nvmem_lab:build:riscv64-virt:ref:1700000000"}
    with pytest.raises(SystemExit):
        run(build, "riscv64-virt:mainline")
    assert "KERNEL one of ours, ref" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(build, "riscv64-virt:ours:elsewhere")


def test_remote_session_tests_the_same_build(build):
    logs = build / "riscv64-virt" / "ours" / "test-logs-remote"
    logs.mkdir()
    (logs / "junit.xml").write_text(JUNIT)
    rc, doc = run(build)
    assert rc == 0
    ours = [b for b in doc["builds"] if b["id"].startswith("nvmem_lab:build:riscv64-virt:ours:")]
    assert len(ours) == 1
    where = [t["environment"]["misc"]["labgrid"] for t in doc["tests"] if t["build_id"] == ours[0]["id"]]
    assert where.count("local") == where.count("remote") == 6
    assert len({t["id"] for t in doc["tests"]}) == len(doc["tests"])
    rc, doc = run(build, "riscv64-virt:ours:remote")
    assert rc == 0 and {t["environment"]["misc"]["labgrid"] for t in doc["tests"]} == {"remote"}


def test_lava_results_are_tests_of_the_same_build(build):
    d = build / "ast2600-evb" / "ours" / "lava"
    d.mkdir(parents=True)
    (d / "results.json").write_text(json.dumps([
        {"definition": "0_nvmem", "case": "cells-onie-switch", "result": "pass"},
        {"definition": "0_nvmem", "case": "cells-sl28-vpd", "result": "fail"},
        {"definition": "lava", "case": "job", "result": "pass"},
        {"definition": "0_kunit", "case": "odd", "result": "unknown"}]))
    rc, doc = run(build, "ast2600-evb:ours:lava")
    assert rc == 0
    assert [t["status"] for t in doc["tests"]] == ["PASS", "FAIL", "PASS", "ERROR"]
    assert {t["environment"]["misc"]["lava"] for t in doc["tests"]} == {"lava-run"}
    assert doc["tests"][0]["path"] == "nvmem_lab.lava.0_nvmem.cells-onie-switch"
    # found without being named, next to the local session of that build
    rc, doc = run(build)
    lava = [t for t in doc["tests"] if "lava" in t["environment"]["misc"]]
    assert len(lava) == 4 and len({t["build_id"] for t in lava}) == 1
    assert lava[0]["build_id"] in {b["id"] for b in doc["builds"]}
    assert len({t["id"] for t in doc["tests"]}) == len(doc["tests"])


def test_patchset_hash_follows_the_series(monkeypatch):
    h1, names = kcidb.patchset_hash(lab.TOP / "kernel-patches")
    assert any(n.startswith("layouts/") for n in names) and any(n.endswith(".patch") for n in names)
    real = kcidb.patch_bytes
    monkeypatch.setattr(kcidb, "patch_bytes", lambda d, n: real(d, n) + (b"x" if n == names[-1] else b""))
    assert kcidb.patchset_hash(lab.TOP / "kernel-patches")[0] != h1


def test_an_invalid_document_is_refused_and_not_written(build, monkeypatch, capsys):
    # an origin KCIDB does not allow (upper case): kcidb-io rejects the document
    monkeypatch.setattr(kcidb, "ORIGIN", "NVMEM-LAB")
    rc, doc = run(build)
    assert rc == 1 and doc is None
    assert "not valid KCIDB v5" in capsys.readouterr().err
