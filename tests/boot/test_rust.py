"""The kernel Rust API series (pin-init, locks, CondVar, LockedBy, ARef<Task>,
ioctl helpers) running in the guest.

lib/rust_sync_selftest (built by CONFIG_RUST_SYNC_SELFTEST=m, which
riscv64-virt's config-ours.fragment asks for: the only board and kernel with
Rust; tests/lab.py RUST_SELFTESTS) reports one KTAP line per case when
loaded; the kernel's kunit.py parses them. Around it the harness checks what
the guest can see from outside: the PID the self-test saw against the PID of
the shell that loaded it, the lock classes in /proc/lockdep, and, in a boot
other than the session's, the two opt-in negative tests (a lock-order inversion that
lockdep must report, a LockedBy access with the wrong owner that must
panic)."""
import re

import pytest

import lab

MODULE = "rust_sync_selftest"


@pytest.fixture(scope="module", autouse=True)
def _declared(pytestconfig, kernel_under_test):
    """Not applicable, by declaration, where the board's config fragments do
    not build the self-test for this kernel (build-kernel.sh makes sure a
    build has what the fragments ask for)."""
    board = lab.board_under_test(pytestconfig)
    if MODULE not in lab.fragment_selftests(board, kernel_under_test, lab.RUST_SELFTESTS, "m"):
        pytest.skip(f"the config fragments of {board} build no {MODULE} module for "
                    f"kernel '{kernel_under_test}' (Rust: riscv64-virt, ours)")


def _module(sh, name):
    found = sh.run_check(f"find /lib/modules -name {name}.ko")
    assert len(found) == 1, f"{name}.ko not in the initramfs: {found}"
    return found[0]


def _load(sh, name, marker, threaded=False):
    """insmod a module from a shell whose PID is printed first; returns the
    PID, insmod's exit code and the kernel log written after `marker`.
    threaded: load it from a second thread of the loading process
    (guest program insmod-thread), whose thread ID is then returned as
    well: (pid, tid, code, log)."""
    sh.run_check(f"echo {marker} > /dev/kmsg")
    loader = "insmod-thread" if threaded else "insmod"
    out, _, code = sh.run(f"sh -c 'echo loader-pid $$; exec {loader} {_module(sh, name)}'",
                          timeout=900)
    m = re.search(r"loader-pid (\d+)", "\n".join(out))
    assert m, f"no PID from the loading shell: {out}"
    log = lab.dmesg(sh)
    start = max(i for i, line in enumerate(log) if marker in line)
    if not threaded:
        return int(m.group(1)), code, log[start + 1:]
    t = re.search(r"leader (\d+) thread (\d+)", "\n".join(out))
    assert t and int(t.group(1)) == int(m.group(1)), f"insmod-thread said: {out}"
    return int(m.group(1)), int(t.group(2)), code, log[start + 1:]


def _parse_ktap(tree, lines, tmp_path):
    text = tmp_path / "ktap.txt"
    text.write_text("\n".join(lines) + "\n")
    return lab.kunit_parse(tree, text, tmp_path / "ktap.json")


@pytest.fixture(scope="module")
def selftest(shell, tmp_path_factory):
    # the allocation-failure case needs failslab to act on GFP_KERNEL, quietly
    shell.run_check("grep -q ' /sys/kernel/debug ' /proc/mounts || mount -t debugfs none /sys/kernel/debug")
    shell.run_check("echo N > /sys/kernel/debug/failslab/ignore-gfp-wait")
    shell.run_check("echo 0 > /sys/kernel/debug/failslab/verbose")
    pid, tid, code, log = _load(shell, MODULE, "nvlab-rust-selftest-start", threaded=True)
    tmp = tmp_path_factory.mktemp("rust")
    (tmp / "dmesg.txt").write_text("\n".join(log) + "\n")
    tree = lab.TOP / "build" / "src" / "linux-6.1"
    result, parsed = _parse_ktap(tree, log, tmp)
    lockdep = shell.run_check("cat /proc/lockdep", timeout=120)
    return {"pid": pid, "tid": tid, "code": code, "log": log, "result": result, "parsed": parsed,
            "lockdep": lockdep}


def _cases(result):
    for suite in result.get("sub_groups", []):
        for case in suite.get("test_cases", []):
            yield suite["name"], case["name"], case["status"]


# What the module must report; kunit.py flags a case count below the plan
# too, but the list keeps a silently dropped case from going unnoticed.
EXPECTED = {
    "case_prerequisites", "case_pin_init_box", "case_pin_init_arc", "case_pin_init_unique_arc",
    "case_pin_init_stack", "case_pin_init_generic", "case_try_pin_init_drops_initialised",
    "case_init_unpinned", "case_alloc_failure_is_enomem", "case_pinned_drop_once",
    "case_zeroed", "case_stack_try_pin_init", "case_mutex_contention",
    "case_spinlock_contention", "case_lock_classes", "case_condvar_notify_one",
    "case_condvar_notify_all", "case_condvar_no_lost_wakeup", "case_condvar_wait_signal",
    "case_locked_by_owner", "case_aref_task_outlives_exit", "case_current_pid",
    "case_ioctl_matches_c",
}


@pytest.mark.timeout(1800)  # loads the self-test (insmod: up to 900 s)
def test_selftest_cases_pass(selftest, subtests):
    assert selftest["code"] == 0, f"insmod {MODULE} failed ({selftest['code']})"
    cases = list(_cases(selftest["result"]))
    names = {name for _, name, _ in cases}
    assert names == EXPECTED, (f"missing {sorted(EXPECTED - names)}, unexpected "
                               f"{sorted(names - EXPECTED)}\n{selftest['parsed'][-3000:]}")
    for suite, name, status in cases:
        with subtests.test(msg=name):
            diag = [line for line in selftest["log"] if f"# {name}:" in line]
            assert status == "PASS", f"{suite}.{name}: {status} {diag}"


@pytest.mark.timeout(1800)  # loads the self-test unless done
def test_current_pid_is_the_loader(selftest):
    """current!() in module init is the task that loaded it: here the second
    thread of the loading process (insmod-thread), whose group leader is the
    process itself (the shell's PID, which the exec kept)."""
    seen = [(int(m.group(1)), int(m.group(2))) for line in selftest["log"]
            for m in [re.search(r"# current pid (\d+) leader (\d+)", line)] if m]
    assert selftest["tid"] != selftest["pid"], "the loader thread is the leader"
    assert seen == [(selftest["tid"], selftest["pid"])], \
        f"self-test saw (pid, leader) {seen}, loader was thread {selftest['tid']} of {selftest['pid']}"


def _classes(lockdep, name):
    # /proc/lockdep: "<key address> FD: n BD: n <usage>: <name>"
    return [line for line in lockdep if re.search(rf":\s+{re.escape(name)}$", line)]


@pytest.mark.timeout(1800)  # loads the self-test unless done
def test_lock_names_and_classes_in_proc_lockdep(selftest):
    """Each new_mutex!/new_spinlock!/new_condvar! call site is a class of
    its own under the given name; two locks from one site share a class."""
    lockdep = selftest["lockdep"]
    for name in ("rust_selftest_class_a", "rust_selftest_class_b",
                 "rust_selftest_counter_m", "rust_selftest_counter_s"):
        assert len(_classes(lockdep, name)) == 1, f"{name}: {_classes(lockdep, name)}"
    # two locks built by one call site: one class (the self-test also
    # checked that their C maps point to the same key, and a and b to
    # different ones)
    assert len(_classes(lockdep, "rust_selftest_same_site")) == 1
    # lockdep recorded the nesting the self-test did: a -> b -> same_site
    text = "\n".join(lockdep)
    assert re.search(r": rust_selftest_class_a\n(?: -> .*\n)* -> \[[^]]*\] rust_selftest_class_b", text), \
        "the class_a -> class_b dependency is not in /proc/lockdep"


@pytest.fixture(scope="module")
def negative(extra_boots):
    """A boot other than the session's (one already up for other board
    options, else one of its own; its kernel log checked free of splats
    first) for the two opt-in negative modules, loaded in this order: the
    lock-order inversion first (lockdep switches itself off at its first
    report and at any oops, so it must see a clean kernel), then the
    wrong-owner access, whose panic kills the loading insmod.
    name -> (insmod exit code, kernel log after the module's marker)."""
    sh = extra_boots.for_splat()
    results = {}
    for name, marker in (("rust_sync_selftest_inversion", "nvlab-rust-inversion-start"),
                         ("rust_sync_selftest_wrong_owner", "nvlab-rust-owner-start")):
        _, code, log = _load(sh, name, marker)
        results[name] = (code, "\n".join(log))
    return results


@pytest.mark.timeout(1800)  # may boot (shared by the negative tests), and insmods
def test_lock_order_inversion_is_reported(negative):
    """Opt-in negative test: lockdep reports a -> b then b -> a between two
    Rust mutexes, naming both."""
    code, text = negative["rust_sync_selftest_inversion"]
    assert code == 0, f"insmod failed ({code}):\n{text[-2000:]}"
    assert "possible circular locking dependency detected" in text, text[-3000:]
    report = text[text.index("possible circular locking dependency detected"):]
    assert "rust_selftest_inv_a" in report and "rust_selftest_inv_b" in report, report[:3000]


@pytest.mark.timeout(1800)  # may boot (shared by the negative tests), and insmods
def test_locked_by_wrong_owner_panics(negative):
    """Opt-in negative test: the wrong owner panics before the data is
    handed out."""
    code, text = negative["rust_sync_selftest_wrong_owner"]
    assert code != 0, "insmod of the wrong-owner module succeeded"
    assert "right owner gave 7" in text, text[-3000:]
    assert "not the owner of this data" in text, text[-3000:]
    assert "wrong owner was not refused" not in text


@pytest.mark.timeout(1800)  # insmod of the doc examples: up to 900 s
def test_doc_examples_run(shell, tmp_path, subtests):
    """Every `# Examples` block of the kernel crate, compiled into
    rust_doctests.ko by scripts/rust-doctests.py, runs and passes."""
    _, code, log = _load(shell, "rust_doctests", "nvlab-rust-doctests-start")
    (tmp_path / "dmesg.txt").write_text("\n".join(log) + "\n")
    assert code == 0, f"insmod rust_doctests failed ({code})"
    tree = lab.TOP / "build" / "src" / "linux-6.1"
    result, parsed = _parse_ktap(tree, log, tmp_path)
    cases = list(_cases(result))
    # the suite's plan: the indented "1..N" (the top level says "1..1")
    plan = [int(m.group(1)) for line in log for m in [re.search(r"rust_doctests: {5}1\.\.(\d+)$", line)] if m]
    assert plan and len(cases) == plan[0] > 20, f"plan {plan}, parsed {len(cases)} cases\n{parsed[-2000:]}"
    # the Linux 6.4 commits' own examples (tests/rust-6.4/examples.txt),
    # unchanged, are among them
    upstream = {"upstream_6_4_" + re.sub(r"[^A-Za-z0-9]", "_", f"{m.group(1)}_{m.group(2)}")
                for line in (lab.TOP / "tests" / "rust-6.4" / "examples.txt").read_text().splitlines()
                for m in [re.match(r"@@ \S+ \S*/(\w+)\.rs #(\d+)$", line)] if m}
    names = {name for _, name, _ in cases}
    assert len(upstream) == 6 and upstream <= names, f"6.4 examples missing: {sorted(upstream - names)}"
    for _, name, status in cases:
        with subtests.test(msg=name):
            diag = [line for line in log if "    # " in line and "rust/kernel" in line]
            assert status == "PASS", f"{name}: {status} {diag[:5]}"


@pytest.mark.timeout(300)
def test_sample_module_in_6_4_style(shell):
    """tests/rust-6.4/sample: a module written for the 6.4 API (string
    literals in module!, the 6.4 prelude, Arc::pin_init giving an Arc,
    Mutex/SpinLock/CondVar in a #[pin_data] struct, LockedBy, ARef<Task>)
    builds unchanged, loads, computes what it should and unloads."""
    pid, code, log = _load(shell, "rust_sample_64", "nvlab-rust-sample64-start")
    assert code == 0, f"insmod rust_sample_64 failed ({code}): {log[-10:]}"
    seen = [line for line in log if "rust_sample_64: front" in line]
    assert len(seen) == 1, log[-10:]
    assert f"total 42 deposits 2 hits 2 loader {pid}" in seen[0], seen[0]
    modinfo = shell.run_check("cat /sys/module/rust_sample_64/initstate")
    assert modinfo == ["live"], modinfo
    shell.run_check("echo nvlab-rust-sample64-unload > /dev/kmsg")
    shell.run_check("rmmod rust_sample_64")
    log = lab.dmesg(shell)
    start = max(i for i, line in enumerate(log) if "nvlab-rust-sample64-unload" in line)
    assert any(f"rust_sample_64: unloading, front still counted, loader was {pid}" in line
               for line in log[start:]), log[start:][-10:]
    lab.assert_no_splat(shell, "loading and unloading rust_sample_64")
