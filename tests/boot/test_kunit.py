"""KUnit suites built into the kernel under test ran at boot and passed.
The suites expected are those the board's config fragments ask for
(qemu-boards/<board>/config*.fragment, option -> suite in tests/lab.py
KUNIT_SUITES); scripts/build-kernel.sh fails any build whose .config lacks
an option of the fragments. The kernel log is parsed with the kernel's own
tools/testing/kunit/kunit.py."""
import lab


def _cases(group, prefix=""):
    name = f"{prefix}{group.get('name', '')}"
    for case in group.get("test_cases", []):
        yield f"{name}.{case['name']}", case["status"]
    for sub in group.get("sub_groups", []):
        yield from _cases(sub, f"{name}/" if name else "")


def test_kunit_suites_pass(shell, kernel_under_test, tmp_path, subtests, pytestconfig):
    want = lab.fragment_selftests(lab.board_under_test(pytestconfig), kernel_under_test,
                                  lab.KUNIT_SUITES, "y")
    tree = lab.TOP / "build" / "src" / ("linux-6.1" if kernel_under_test == "ours" else "linux-6.12")
    log = tmp_path / "dmesg.txt"
    log.write_text("\n".join(lab.dmesg(shell)) + "\n")
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
