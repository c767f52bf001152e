import os
import signal
import time
from pathlib import Path

import pytest
from labgrid.driver import ShellDriver

import lab

# $LG_RMEM (the RAM EEPROMs of $LG_OUT/board.dtb) before labgrid's plugin
# loads the environment
lab.qemu_helper.export_rmem_env()


def pytest_addoption(parser):
    parser.addoption("--nvlab-kernel", default=os.environ.get("NVLAB_KERNEL", "ours"),
                     help="kernel under test: ours (patched 6.1) or ref (6.12)")


# What each kernel under test implements. A test marked needs("x") runs only
# on kernels listing x. Which layouts a board's images carry is not listed
# here: the board promises it (LAYOUTS in qemu-boards/<board>/board.conf).
KERNEL_FEATURES = {
    "ours": {"hwprobe", "layouts", "sysfs-cells"},
    "ref": {"hwprobe", "layouts", "sysfs-cells"},
}


def pytest_configure(config):
    config.addinivalue_line("markers", "patched: needs the nvmem-lab 6.1 patch series")
    config.addinivalue_line("markers", "needs(feature): needs a kernel feature (see KERNEL_FEATURES)")


def pytest_collection_modifyitems(config, items):
    kernel = config.getoption("--nvlab-kernel")
    have = KERNEL_FEATURES.get(kernel, set())
    for item in items:
        if kernel == "ref" and "patched" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="needs our patch series, not in the reference kernel"))
        for m in item.iter_markers("needs"):
            missing = [f for f in m.args if f not in have]
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"kernel '{kernel}' lacks {', '.join(missing)}"))


def pytest_generate_tests(metafunc):
    # `attachment`, `flash`: the images the host attached (a real board's
    # devices hold no host image to compare with)
    if "attachment" in metafunc.fixturenames:
        env = lab.board_env(metafunc.config)
        found = [a for a in (lab.attachments(env) if env else []) if a.attached]
        metafunc.parametrize("attachment", found, ids=[a.id for a in found])
    if "flash" in metafunc.fixturenames:
        env = lab.board_env(metafunc.config)
        found = [a for a in (lab.attachments(env) if env else []) if a.kind == "mtd" and a.attached]
        metafunc.parametrize("flash", found, ids=[a.id for a in found])


@pytest.fixture(scope="session")
def kernel_under_test(pytestconfig):
    return pytestconfig.getoption("--nvlab-kernel")


@pytest.fixture(scope="session")
def kernel_features(kernel_under_test):
    return KERNEL_FEATURES.get(kernel_under_test, set())


@pytest.fixture(scope="session")
def extra_boots(pytestconfig):
    """Boots besides the session's own, shared and stopped at the end of
    the session (lab.ExtraBoots)"""
    boots = lab.ExtraBoots(lab.board_env(pytestconfig))
    yield boots
    boots.close()


@pytest.fixture(scope="session")
def shell(strategy, target, pytestconfig, kernel_under_test):
    """A shell on the booted board. At the end of the session the kernel log
    and the console log must be free of splats, and where the kernel has
    kmemleak (the board's config fragments say so), no object the session
    allocated may be left unreferenced: suspects from the boot are cleared
    when the session starts, and two scans at its end must find none."""
    t0 = time.monotonic()
    strategy.transition("shell")
    sh = target.get_driver(ShellDriver)
    boot_s = time.monotonic() - t0
    lab.quiet_console(sh)
    print(f"\nnvlab: boot to shell in {boot_s:.1f} s")
    logdir = pytestconfig.option.lg_log
    if logdir:
        (Path(logdir) / "boot-to-shell.txt").write_text(f"{boot_s:.1f}\n")
    kmemleak = lab.kmemleak_promised(pytestconfig, kernel_under_test)
    if kmemleak:
        assert sh.run(f"test -w {lab.KMEMLEAK}")[2] == 0, \
            f"the kernel is built with kmemleak, but {lab.KMEMLEAK} is not there"
        lab.kmemleak_suspects(sh, scans=1)
        sh.run_check(f"echo clear > {lab.KMEMLEAK}")
    yield sh
    if kmemleak:
        leaks = lab.kmemleak_suspects(sh)
        if logdir:
            (Path(logdir) / "kmemleak-session.txt").write_text(
                "".join("\n".join(r) + "\n" for r in leaks.values()))
        print(f"\nnvlab: kmemleak at the end of the session: {len(leaks)} new unreferenced object(s)")
        assert not leaks, (f"kmemleak: {len(leaks)} object(s) of this session unreferenced:\n"
                           + "\n".join(line for r in list(leaks.values())[:5] for line in r[:14]))
    patterns = lab.splat_patterns()
    dmesg = lab.dmesg(sh)
    bad = [line for line in dmesg if patterns.search(line)]
    if logdir:
        for f in Path(logdir).glob("console_*"):
            if f.name.startswith(f"console_{lab.EXPECTED_SPLAT_TARGET}"):
                continue  # boots that provoke a splat check it themselves
            bad += [line for line in f.read_text(errors="replace").splitlines()
                    if patterns.search(line)]
    assert not bad, "kernel splat on the console:\n" + "\n".join(bad[:40])


# ---- no hang, no QEMU left behind, and the console at hand on failure ----
# Every test has a timeout (pytest-timeout, pytest.ini; longer ones carry
# @pytest.mark.timeout). Its signal method fails the test with a traceback
# and runs the fixtures' teardown, which stops QEMU (labgrid's QEMUDriver;
# labgrid also stops it at exit).

CONSOLE_TAIL_LINES = 40


def _stop_on_signal(signum, _frame):
    # SIGTERM/SIGHUP would end Python without teardown or atexit handlers,
    # leaving QEMU running: take them as Ctrl-C, which pytest tears down on
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def pytest_sessionstart(session):
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop_on_signal)
    # a session running next to this one waits for what this one records
    # (lab.recorded)
    if os.environ.get("LG_OUT"):
        lab.session_started(os.environ["LG_OUT"])


def pytest_sessionfinish(session):
    if os.environ.get("LG_OUT"):
        lab.session_finished(os.environ["LG_OUT"])


def console_tail(logdir, lines=CONSOLE_TAIL_LINES):
    """(name, last lines) of the newest labgrid console log in logdir"""
    logs = sorted(Path(logdir).glob("console_*"), key=lambda p: p.stat().st_mtime)
    if not logs:
        return None, []
    text = logs[-1].read_bytes().decode(errors="replace").replace("\r", "")
    return logs[-1].name, text.splitlines()[-lines:]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    logdir = getattr(item.config.option, "lg_log", None)
    if report.failed and logdir:
        name, tail = console_tail(logdir)
        if name:
            report.sections.append((f"last {len(tail)} lines of {Path(logdir) / name}", "\n".join(tail)))
