#!/usr/bin/env python3
"""lava.py job|run: the boot suite as LAVA jobs, from the board's one
description.

  lava.py job BOARD KERNEL DIR   write DIR/job.yaml and DIR/device.yaml
  lava.py run BOARD KERNEL       generate, run with Debian's lava-run (the
                                 LAVA dispatcher, QEMU device type), and hold
                                 the results LAVA records to the local
                                 session's (build/BOARD/KERNEL/test-logs);
                                 job and device dictionary pass LAVA's own
                                 schemas (lava_common) first

Nothing of the QEMU command line is written here: it is what labgrid's
QEMUDriver builds from tests/env/BOARD.yaml (scripts/qemu.py). Every file
argument of it (kernel, DTB, initramfs, each attached image) becomes a
deployed image of the job with its `image_arg`; the rest goes into the
job's context (arch, machine, cpu, memory, extra_options), which
lava-server's own qemu device type (qemu.jinja2, from Debian's lava-server
package) turns into the device configuration: the device dictionary
tests/lava/devices/nvlab-qemu-01.jinja2 is any lab's generic QEMU worker,
rendered here as lava-server renders it for the job.

The test action is interactive: LAVA's overlay (lava-test-shell) cannot
reach this guest (a QEMU tmpfs deploy hands it over as a guestfs disk the
initramfs-only guest has no driver or filesystem for, and the guest has no
network for transfer_overlay), so every check is a command at the shell
prompt whose output LAVA matches. The checks, each a LAVA test case:
  0_nvmem/nvmem-list      the guest's listing of every nvmem device runs
  0_nvmem/cells-TARGET    per layout promise of board.conf: the cells the
                          kernel gives under LAVA (name, size, bytes) are
                          those the local session read and checked
                          against the oracle (tests/boot/test_cells.py)
  0_kunit/SUITE           per KUnit suite of the board's kernel: its KTAP
                          result line in the kernel log says ok
`run` then requires each LAVA result to be the local session's outcome of
the same check (test_layout_promise_kept[ID], test_kunit_suites_pass), and
the job itself to pass.
"""
import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import yaml

TOP = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("NVLAB_BUILD", TOP / "build"))
DEVICES = TOP / "tests" / "lava"
PROMPT = "nvlab:[^ ]* # "
LOGIN = "nvlab login: "
# QEMU options that carry a file: the image's label, from the option
FILE_OPTIONS = {"-kernel": "kernel", "-dtb": "dtb", "-initrd": "initrd"}
ARCH = {"qemu-system-arm": "arm", "qemu-system-riscv64": "riscv64", "qemu-system-aarch64": "arm64"}
sys.path.insert(0, str(TOP / "tests"))
sys.path.insert(0, str(TOP / "scripts"))


def say(msg):
    print(f"[lava] {msg}", flush=True)


class LavaError(Exception):
    """a job that cannot be generated, or results that are not the suite's"""


def qemu_args(board, kernel):
    """labgrid's QEMU command line of the board's environment, with the
    build outputs of BOARD/KERNEL"""
    out = BUILD / board / kernel
    with mock.patch.dict(os.environ, LG_OUT=str(out), LG_IMAGES=str(BUILD / "images")):
        os.environ.pop("LG_RMEM", None)
        import qemu
        qemu.export_rmem_env()
        return qemu.base_args(str(TOP / "tests" / "env" / f"{board}.yaml"))


def _label(path, taken):
    base = re.sub(r"[^a-z0-9]+", "_", Path(path).stem.lower()).strip("_") or "image"
    label, n = base, 2
    while label in taken:
        label, n = f"{base}_{n}", n + 1
    return label


def split_command(cmd):
    """(binary, options without files, images): every file the command line
    passes (-kernel, -dtb, -initrd, file= of -drive and -device) becomes an
    image {label: (path, image_arg with {label} in place of the path)}, in
    command-line order"""
    binary, args = cmd[0], list(cmd[1:])
    options, images = [], {}
    i = 0
    while i < len(args):
        opt = args[i]
        val = args[i + 1] if i + 1 < len(args) else None
        if opt in FILE_OPTIONS and val is not None:
            label = FILE_OPTIONS[opt]
            if label in images:
                raise LavaError(f"{opt} given twice")
            images[label] = (val, f"{opt} {{{label}}}")
            i += 2
            continue
        if opt in ("-drive", "-device") and val is not None and re.search(r"(^|,)file=", val):
            parts = val.split(",")
            at = next(k for k, p in enumerate(parts) if p.startswith("file="))
            path = parts[at][len("file="):]
            label = _label(path, images)
            parts[at] = f"file={{{label}}}"
            images[label] = (path, f"{opt} {','.join(parts)}")
            i += 2
            continue
        if opt.startswith("-") and val is not None and not val.startswith("-"):
            options.append(f"{opt} {shlex.quote(val)}")
            i += 2
        else:
            options.append(opt)
            i += 1
    for label, (path, _) in images.items():
        if not Path(path).is_file():
            raise LavaError(f"{label}: {path} does not exist (make board builds it)")
    return binary, options, images


# lava-server's device-type templates (build/lava-server/device-types,
# unpacked from Debian's lava-server package by make setup), ours for the
# real boards, and the device dictionaries of tests/lava/
TEMPLATES = [DEVICES / "devices", DEVICES / "device-types", BUILD / "lava-server" / "device-types"]
QEMU_DEVICE = "nvlab-qemu-01.jinja2"


def qemu_context(binary, options, nic_model=None):
    """the job context that makes lava-server's qemu device type start the
    board's QEMU: arch, machine, cpu and memory where the template has a
    variable for them, every other option as extra_options (-nographic and
    the monitor are the template's own)"""
    arch = ARCH.get(Path(binary).name)
    if arch is None:
        raise LavaError(f"no LAVA architecture known for {binary}")
    ctx = {"arch": arch, "no_kvm": "true"}
    extra = []
    for opt in options:
        name, _, value = opt.partition(" ")
        key = {"-machine": "machine", "-cpu": "cpu", "-m": "memory"}.get(name)
        if key and value:
            ctx[key] = value
        elif opt != "-nographic":
            extra.append(opt)
    if "machine" not in ctx:
        raise LavaError(f"{binary}: no -machine in the command line")
    if nic_model:
        # the template adds a NIC; the board's own model, not virtio
        ctx["model"] = f"model={nic_model}"
    ctx["extra_options"] = extra
    return ctx


def render_device(template, context=None):
    """a device dictionary rendered as lava-server renders it for a job:
    the dictionary's template, extending the device type's, with the
    job's context"""
    import jinja2
    missing = [str(d) for d in TEMPLATES if not d.is_dir()]
    if missing:
        raise LavaError(f"no device-type templates in {', '.join(missing)} (make setup unpacks lava-server's)")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([str(d) for d in TEMPLATES]),
                             trim_blocks=True, autoescape=False)
    try:
        text = env.get_template(template).render(**(context or {}))
    except jinja2.TemplateError as e:
        raise LavaError(f"{template}: {e}") from None
    device = yaml.safe_load(text)
    if not isinstance(device, dict):
        raise LavaError(f"{template}: renders to no device dictionary")
    return device


# ---- the checks, from the local session ----

def listing_digest(cells):
    """sha256 of the guest's `nvmem-sysfs cells DEV | awk '{print $2, $3,
    $5}' | LC_ALL=C sort` for a cell listing {name: [size, content]}"""
    lines = sorted(f"{n} {s} {'ERR' if c is None else (c or '-')}" for n, (s, c) in cells.items())
    return hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()


def cells_command(dev, digest):
    # the command line must not itself contain what the success pattern
    # matches (the console echoes it): the verdict is spelt by a variable
    return (f"s=$(nvmem-sysfs cells {dev} | awk '{{print $2, $3, $5}}' | LC_ALL=C sort | sha256sum); "
            f"[ \"${{s%% *}}\" = {digest} ] && r=PASS || r=FAIL; echo NVLAB-$r")


def verdict_step(name, command):
    return {"name": name, "command": command,
            "successes": [{"message": "NVLAB-PASS"}], "failures": [{"message": "NVLAB-FAIL"}]}


def kunit_suites(console):
    """the KUnit suites of a kernel log: {suite: 'ok'|'not ok'} from the
    top-level KTAP result lines"""
    found = {}
    for line in console.read_text(errors="replace").splitlines():
        m = re.match(r"^(?:\[[ 0-9.]+\] )?(not ok|ok) \d+ (\w+)\s*$", line)
        if m:
            found[m.group(2)] = m.group(1)
    return found


def checks(board, kernel):
    """the interactive scripts of the job and, per LAVA case, the local
    test whose outcome it must have: ([script], {(definition, case): test})"""
    import lab
    logs = BUILD / board / kernel / "test-logs"
    if not (logs / "junit.xml").exists():
        raise LavaError(f"no local session to take the checks from ({logs}/junit.xml): "
                        f"run make test (or its {board} {kernel} session) first")
    promises = lab.board_promises(board, kernel)
    steps = [{"name": "nvmem-list", "command": "/usr/lib/nvlab/nvmem-list; echo NVLAB-RC-$?",
              "successes": [{"message": "NVLAB-RC-0"}], "failures": [{"message": "NVLAB-RC-[1-9]"}]}]
    # the listing has no test of its own in the suite: it must run
    expect = {("0_nvmem", "nvmem-list"): None}
    for p in promises.layouts:
        saved = logs / "cells" / f"{p.target.replace('/', '_')}.json"
        if not saved.exists():
            raise LavaError(f"{p.id}: the local session recorded no cells ({saved})")
        rec = json.loads(saved.read_text())
        if "device" not in rec:
            raise LavaError(f"{saved}: written by an older session (no device): run the session again")
        name = f"cells-{p.target.replace('/', '_')}"
        steps.append(verdict_step(name, cells_command(rec["device"], listing_digest(rec["cells"]))))
        expect[("0_nvmem", name)] = f"tests.boot.test_cells::test_layout_promise_kept[{p.id}]"
    scripts = [{"name": "nvmem", "prompts": [PROMPT], "script": steps}]
    suites = kunit_suites(logs / "console_main")
    if suites:
        steps = [verdict_step(s, f"dmesg | grep -qE '^\\[[ 0-9.]+\\] ok [0-9]+ {s}$' && r=PASS || r=FAIL; "
                                 "echo NVLAB-$r") for s in sorted(suites)]
        scripts.append({"name": "kunit", "prompts": [PROMPT], "script": steps})
        for s in suites:
            expect[("0_kunit", s)] = "tests.boot.test_kunit::test_kunit_suites_pass"
    return scripts, expect


def job(board, kernel, images, scripts, context):
    return {
        "device_type": "qemu",
        "job_name": f"nvmem-lab {board} {kernel}",
        "visibility": "public",
        "priority": "medium",
        "timeouts": {"job": {"minutes": 45}, "action": {"minutes": 30},
                     "connection": {"minutes": 10}},
        "context": context,
        "actions": [
            {"deploy": {"to": "tmpfs", "timeout": {"minutes": 5},
                        "images": {label: {"image_arg": arg, "url": f"file://{Path(path).resolve()}"}
                                   for label, (path, arg) in images.items()}}},
            {"boot": {"method": "qemu", "media": "tmpfs", "timeout": {"minutes": 20},
                      "auto_login": {"login_prompt": LOGIN, "username": "root"},
                      "prompts": [PROMPT]}},
            {"test": {"timeout": {"minutes": 20}, "interactive": scripts}},
        ],
    }


def nic_model(board, kernel):
    """the target option lava_nic_model of the board's environment: the
    model of the NIC lava-server's qemu template adds (its default, virtio,
    is no device of every machine)"""
    import lab
    out = BUILD / board / kernel
    with mock.patch.dict(os.environ, LG_OUT=str(out), LG_IMAGES=str(BUILD / "images"), LG_RMEM=""):
        env = lab._load_env(TOP / "tests" / "env" / f"{board}.yaml")
    # labgrid takes a default of None for "no default" and raises: ask for
    # "" so that an environment without the option gets QEMU's own NIC
    return env.config.get_target_option("main", "lava_nic_model", "") or None


def generate(board, kernel, outdir):
    binary, options, images = split_command(qemu_args(board, kernel))
    scripts, expect = checks(board, kernel)
    context = qemu_context(binary, options, nic_model(board, kernel))
    device = render_device(QEMU_DEVICE, context)
    j = job(board, kernel, images, scripts, context)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "job.yaml").write_text(yaml.safe_dump(j, sort_keys=False, width=1000))
    (outdir / "device.yaml").write_text(yaml.safe_dump(device, sort_keys=False, width=1000))
    (outdir / "expect.json").write_text(json.dumps({f"{d}/{c}": t for (d, c), t in expect.items()},
                                                   indent=1) + "\n")
    return j, device, expect


# ---- validation with LAVA's schemas ----

def _lava_common():
    """Debian's lava_common (lava-dispatcher's package) on this
    interpreter's path, after the venv's own packages"""
    dist = "/usr/lib/python3/dist-packages"
    if dist not in sys.path:
        sys.path.append(dist)


def validate_job(j):
    _lava_common()
    from lava_common.schemas import validate
    validate(j, strict=True, extra_context_variables=[])


def validate_device(d):
    _lava_common()
    from lava_common.schemas.device import validate
    validate(d)


# ---- results ----

def lava_results(log):
    """{(definition, case): result} of the results lava-run logged"""
    found = {}
    for line in log.read_text(errors="replace").splitlines():
        if '"lvl": "results"' not in line:
            continue
        entry = yaml.safe_load(line.lstrip("- ").strip() if line.startswith("- ") else line)
        if isinstance(entry, list):
            entry = entry[0]
        msg = entry.get("msg") or {}
        found[(msg.get("definition"), msg.get("case"))] = msg.get("result")
    return found


def junit_outcomes(junit):
    """test id -> outcome of the local session's JUnit file (as the remote
    run compares them)"""
    from remote import outcomes
    return outcomes(junit)


def compare(results, expect, local):
    """the differences between LAVA's results and the local outcomes (a
    check whose local test is None must pass; a result of our test
    definitions that is no check is a difference too)"""
    diffs = []
    if results.get(("lava", "job")) != "pass":
        diffs.append(f"lava/job: {results.get(('lava', 'job'), 'absent')}")
    ours = {d for d, _ in expect}
    for key in sorted(k for k in results if k[0] in ours and k not in expect):
        diffs.append(f"{key[0]}/{key[1]}: LAVA {results[key]}, no such check")
    for (definition, case), test in sorted(expect.items()):
        if test is None:
            if results.get((definition, case)) != "pass":
                diffs.append(f"{definition}/{case}: LAVA {results.get((definition, case), 'absent')}, "
                             "must pass")
            continue
        want = {"passed": "pass"}.get(local.get(test, "absent"), "fail")
        got = results.get((definition, case), "absent")
        if got != want:
            diffs.append(f"{definition}/{case}: LAVA {got}, local {test} {local.get(test, 'absent')}")
    return diffs


# how long a LAVA job waits for the local session it is held to (a whole
# make test on 2 cores is within 90 minutes)
LOCAL_SESSION_WAIT_S = 2 * 3600


def wait_for_local_session(board, kernel):
    """make test runs this next to the local session of the same build:
    its results are what the LAVA run is held to. The session may run
    longer than a test waits for a record (riscv64-virt ours: 49 min in
    CI, while this job may start 20 min in): the wait is bounded by
    LOCAL_SESSION_WAIT_S, not by lab.RECORDS_WAIT_S"""
    import lab
    out = BUILD / board / kernel
    deadline = time.monotonic() + LOCAL_SESSION_WAIT_S
    if pid := lab._recording_session(out):
        say(f"waiting for the local session (pid {pid}) of {board} {kernel} to finish")
    while lab._recording_session(out) and time.monotonic() < deadline:
        time.sleep(5)


def run(board, kernel):
    outdir = BUILD / board / kernel / "lava"
    work = outdir / "run"
    wait_for_local_session(board, kernel)
    subprocess.run(["rm", "-rf", str(work)], check=True)
    for f in ("results.json", "lava-run.log"):
        (outdir / f).unlink(missing_ok=True)
    j, device, expect = generate(board, kernel, outdir)
    # what LAVA's scheduler would refuse is not run
    validate_job(j)
    validate_device(device)
    log = outdir / "lava-run.log"
    say(f"{board} {kernel}: lava-run of {outdir / 'job.yaml'} ({len(expect)} checks; log: {log})")
    t0 = time.monotonic()
    with open(log, "wb") as f:
        r = subprocess.run(["lava-run", "--job-id", str(int(time.time())), "--output-dir", str(work),
                            "--device", str(outdir / "device.yaml"), str(outdir / "job.yaml")],
                           stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=3600)
    took = time.monotonic() - t0
    results = lava_results(log)
    (outdir / "results.json").write_text(json.dumps(
        [{"definition": d, "case": c, "result": v} for (d, c), v in results.items()], indent=1) + "\n")
    local = junit_outcomes(BUILD / board / kernel / "test-logs" / "junit.xml")
    diffs = compare(results, expect, local)
    if r.returncode != 0 or diffs:
        say(f"{board} {kernel}: FAILED: lava-run exit {r.returncode} after {took:.0f} s, "
            f"{len(diffs)} result(s) not the suite's:")
        for d in diffs[:30]:
            print(f"  {d}")
        # what went wrong, not LAVA's clean-up
        lines = [line for line in log.read_text(errors="replace").splitlines()
                 if re.search(r'"lvl": "(error|exception|results|target)"', line)]
        print(f"---- errors, results and console of {log} (last 15) ----\n" + "\n".join(lines[-15:]))
        return 1
    say(f"{board} {kernel}: passed: lava-run {took:.0f} s, {len(results)} LAVA results, "
        f"{len(expect)} checks, each the local session's outcome")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("job")
    g.add_argument("board")
    g.add_argument("kernel")
    g.add_argument("dir", type=Path)
    r = sub.add_parser("run")
    r.add_argument("board")
    r.add_argument("kernel")
    args = ap.parse_args()
    try:
        if args.cmd == "job":
            generate(args.board, args.kernel, args.dir)
            return 0
        return run(args.board, args.kernel)
    except LavaError as e:
        say(f"FAILED: {e}")
        return 1
    except Exception as e:  # voluptuous's Invalid: a job LAVA's schema refuses
        if type(e).__module__.startswith("voluptuous"):
            say(f"FAILED: LAVA's schema refuses the job or device: {e}")
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
