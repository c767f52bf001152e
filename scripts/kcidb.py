#!/usr/bin/env python3
"""kcidb.py [--build DIR] [--run ID] [--out FILE] [BOARD:KERNEL[:remote|:lava] ...]: the
results of the last boot test sessions as one KCIDB v5 document.

For each session (default: every board and kernel with test logs in the
build directory) one checkout per kernel source (Debian's linux-source
tree, with our series' patchset hash for "ours"), one build per board and
kernel (architecture and compiler from the kernel's .config), and one test
per pytest case of the session's JUnit file (BOARD:KERNEL:remote: the
session run through a labgrid remote place, scripts/remote.py, as tests
of the same build in another environment; BOARD:KERNEL:lava: the LAVA job
of the build, scripts/lava.py, one test per result LAVA recorded in
build/BOARD/KERNEL/lava/results.json). Statuses are KCIDB's: PASS,
FAIL, ERROR, SKIP, and MISS for a session that left no results. An
expected failure (pytest xfail: a known problem of the reference kernel)
is a FAIL with a KCIDB issue and an incident naming it, so that a lab sees
it as known.

The document is validated with the kcidb-io package before it is written;
an invalid document is an error (exit 1) and nothing is written. A lab
submits the file unchanged (kcidb-submit reads it from standard input).
"""
import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
ORIGIN = "nvmem_lab"
# what each kernel under test is built from
SOURCES = {
    "ours": ("linux-source-6.1", "src/linux-6.1/.git/nvlab-source"),
    "ref": ("linux-source-6.12", "src/linux-6.12/.nvlab-unpacked"),
}


def ident(*parts):
    """an object ID: the origin, then the parts (no NUL)"""
    return ORIGIN + ":" + ":".join(str(p).replace("\0", "") for p in parts)


def path_part(s):
    """one element of a KCIDB test path: [A-Za-z0-9_-] only"""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", s).strip("-") or "_"


def patch_bytes(series_dir, entry):
    """what a series entry applies: a patch file, or for "layouts/<group>"
    the group's commit message and each file it lists (path and contents)"""
    if not entry.startswith("layouts/"):
        return (series_dir / entry).read_bytes()
    group = TOP / entry
    data = group.with_suffix(".commit").read_bytes()
    for f in group.with_suffix(".files").read_text().split():
        data += b"\0" + f.encode() + b"\0" + (TOP / "layouts" / f).read_bytes()
    return data


def patchset_hash(series_dir):
    """KCIDB's patchset hash: sha256 over the newline-terminated sha256 of
    each patch, in the order the series file applies them"""
    series = series_dir / "series"
    if not series.exists():
        return None
    names = [ln.split("#", 1)[0].strip() for ln in series.read_text().splitlines()]
    names = [n for n in names if n]
    outer = hashlib.sha256()
    for n in names:
        outer.update((hashlib.sha256(patch_bytes(series_dir, n)).hexdigest() + "\n").encode())
    return outer.hexdigest(), names


def kconfig(path):
    out = {}
    try:
        for line in path.read_text(errors="replace").splitlines():
            k, sep, v = line.partition("=")
            if sep and k.startswith("CONFIG_"):
                out[k] = v.strip('"')
    except OSError:
        pass
    return out


def board_conf(board):
    """the shell assignments of qemu-boards/<board>/board.conf (values as written)"""
    out = {}
    f = TOP / "qemu-boards" / board / "board.conf"
    for m in re.finditer(r'^([A-Z_]+)=("?)(.*?)\2$', f.read_text(), re.M):
        out[m.group(1)] = m.group(3)
    return out


def dt_compatible(dtb):
    """the root compatible of the device tree the board booted with"""
    if not dtb.exists() or not shutil.which("fdtget"):
        return []
    r = subprocess.run(["fdtget", str(dtb), "/", "compatible"], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else []


def junit_cases(path):
    """[(classname, name, status, seconds, message)] of a pytest JUnit file"""
    root = ET.parse(path).getroot()
    out = []
    for tc in root.iter("testcase"):
        status, msg = "PASS", ""
        for child in tc:
            if child.tag == "failure":
                status = "FAIL"
            elif child.tag == "error":
                status = "ERROR"
            elif child.tag == "skipped":
                status = "XFAIL" if child.get("type") == "pytest.xfail" else "SKIP"
            else:
                continue
            msg = (child.get("message") or "") + ("\n" + child.text if child.text else "")
            break
        out.append((tc.get("classname", ""), tc.get("name", ""), status,
                    float(tc.get("time") or 0), msg.strip()))
    return out


LAVA_STATUS = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}


def lava_cases(path):
    """the junit_cases() of the results a LAVA job recorded
    (scripts/lava.py: [{definition, case, result}])"""
    return [(f"lava.{r['definition']}", r["case"], LAVA_STATUS.get(r["result"], "ERROR"), 0.0,
             "" if r["result"] == "pass" else f"LAVA result: {r['result']}")
            for r in json.loads(path.read_text())]


def junit_start(path):
    for el in ET.parse(path).getroot().iter("testsuite"):
        if el.get("timestamp"):
            return datetime.fromisoformat(el.get("timestamp")).astimezone(timezone.utc).isoformat()
    return None


def sessions_in(build):
    found = []
    for b in sorted(p.name for p in (TOP / "qemu-boards").iterdir() if (p / "board.conf").exists()):
        for k in SOURCES:
            if (build / b / k / "test-logs").is_dir():
                found.append((b, k, ""))
            if (build / b / k / "test-logs-remote").is_dir():
                found.append((b, k, "remote"))
            if (build / b / k / "lava" / "results.json").exists():
                found.append((b, k, "lava"))
    return found


def document(build, sessions, run):
    checkouts, builds, tests, issues, incidents = {}, [], [], {}, []
    series = patchset_hash(TOP / "kernel-patches")
    seen_builds = {}
    for board, kernel, where in sessions:
        tree, marker = SOURCES[kernel]
        source = (build / marker).read_text().strip() if (build / marker).exists() else "unknown"
        m = re.search(r"\((\S+) (\S+)\)", source)
        checkout_id = ident("checkout", *(m.groups() if m else (tree, source)))
        if kernel == "ours" and series:
            checkout_id += ":" + series[0][:16]
        if checkout_id not in checkouts:
            c = {"id": checkout_id, "origin": ORIGIN, "tree_name": tree,
                 "comment": f"Debian {tree}: Linux {source}"
                            + (f" + the nvmem-lab series ({len(series[1])} patches)"
                               if kernel == "ours" and series else ""),
                 "valid": source != "unknown"}
            if kernel == "ours" and series:
                c["patchset_hash"] = series[0]
            checkouts[checkout_id] = c

        out = build / board / kernel
        logs = out / ("test-logs-" + where if where else "test-logs")
        cfg = kconfig(out / "kernel" / ".config")
        conf = board_conf(board)
        arch = conf.get("BOARD_ARCH") or next(
            (a.lower() for a in ("RISCV", "ARM64", "ARM", "X86") if cfg.get("CONFIG_" + a) == "y"), None)
        image = out / Path(conf.get("KERNEL_IMAGE", "Image")).name
        build_id = ident("build", board, kernel, run)
        # in the order build-kernel.sh applies them
        frags = [conf.get("BASE_CONFIG", "")] + [
            f for f in ("config.fragment", f"config-{kernel}.fragment")
            if (TOP / "qemu-boards" / board / f).exists()]
        b = {"id": build_id, "checkout_id": checkout_id, "origin": ORIGIN,
             "config_name": "+".join(x for x in frags if x),
             "status": "PASS" if image.exists() else "FAIL",
             "comment": f"{board} kernel ({kernel})"}
        if arch:
            b["architecture"] = arch
        if cfg.get("CONFIG_CC_VERSION_TEXT"):
            b["compiler"] = cfg["CONFIG_CC_VERSION_TEXT"]
        # one build, tested locally and through a remote place
        if build_id in seen_builds:
            b = seen_builds[build_id]
        else:
            seen_builds[build_id] = b
            builds.append(b)

        misc = {"board": board, "platform": "qemu", "kernel_under_test": kernel}
        if where == "lava":
            env = {"comment": f"QEMU board {board} as a LAVA job (lava-run, device type qemu; "
                              "scripts/lava.py from tests/env/{board}.yaml)",
                   "misc": {**misc, "lava": "lava-run"}}
        else:
            env = {"comment": f"QEMU board {board} (labgrid environment tests/env/{board}.yaml"
                              + (", through a labgrid remote place)" if where else ")"),
                   "misc": {**misc, "labgrid": where or "local"}}
        run_where = f"{run}-{where}" if where else run
        compat = dt_compatible(out / "board.dtb")
        if compat:
            env["compatible"] = compat
        junit = out / "lava" / "results.json" if where == "lava" else logs / "junit.xml"
        if not junit.exists():
            tests.append({"id": ident("test", board, kernel, run_where, "session"), "build_id": build_id,
                          "origin": ORIGIN, "path": "nvmem_lab.boot", "status": "MISS",
                          "environment": env, "comment": "the session left no results"})
            continue
        start = None if where == "lava" else junit_start(junit)
        if start and "start_time" not in b:
            b["start_time"] = start
        seen = set()
        for cls, name, status, secs, msg in (lava_cases(junit) if where == "lava" else junit_cases(junit)):
            base, _, param = name.partition("[")
            parts = ["nvmem_lab"] + [path_part(p) for p in cls.split(".") if p != "tests"] + [path_part(base)]
            if param:
                parts.append(path_part(param.rstrip("]")))
            path = ".".join(parts)
            tid = ident("test", board, kernel, run_where, f"{cls}::{name}")
            if tid in seen:
                continue
            seen.add(tid)
            t = {"id": tid, "build_id": build_id, "origin": ORIGIN, "path": path,
                 "status": "FAIL" if status == "XFAIL" else status,
                 "duration": round(secs, 3), "environment": env,
                 "comment": f"{cls}::{name}"}
            if start:
                t["start_time"] = start
            if msg and status != "PASS":
                t["log_excerpt"] = msg[-16384:]
            if status == "XFAIL":
                reason = msg.splitlines()[0] if msg else "expected failure"
                issue_id = ident("known", hashlib.sha256(reason.encode()).hexdigest()[:16])
                issues.setdefault(issue_id, {
                    "id": issue_id, "version": 1, "origin": ORIGIN,
                    "comment": f"known problem of the kernel under test: {reason}"})
                incidents.append({"id": ident("incident", tid), "origin": ORIGIN,
                                  "issue_id": issue_id, "issue_version": 1, "test_id": tid,
                                  "present": True})
            tests.append(t)
    doc = {"version": {"major": 5, "minor": 3}, "checkouts": list(checkouts.values()),
           "builds": builds, "tests": tests}
    if issues:
        doc["issues"] = list(issues.values())
        doc["incidents"] = incidents
    return doc


def validate(doc):
    """kcidb-io's own validation of a v5 document (raises on a bad one)"""
    import kcidb_io
    kcidb_io.schema.V5_3.validate_exactly(doc)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", type=Path, default=TOP / "build")
    ap.add_argument("--run", default=None, help="ID of this run (default: now, in seconds)")
    ap.add_argument("--out", type=Path, default=None, help="default: BUILD/kcidb.json")
    ap.add_argument("sessions", nargs="*",
                    help="BOARD:KERNEL[:remote|:lava] (default: every session with test logs)")
    a = ap.parse_args(argv)
    sessions = [tuple(s.split(":", 2)) for s in a.sessions]
    for s in sessions:
        if len(s) not in (2, 3) or s[1] not in SOURCES or s[2:] not in ((), ("remote",), ("lava",)):
            ap.error(f"session '{':'.join(s)}': expected BOARD:KERNEL[:remote|:lava] with KERNEL one of "
                     f"{', '.join(SOURCES)}")
    sessions = [s if len(s) == 3 else (*s, "") for s in sessions] or sessions_in(a.build)
    run = a.run or str(int(datetime.now(timezone.utc).timestamp()))
    doc = document(a.build, sessions, run)
    try:
        validate(doc)
    except Exception as e:  # kcidb-io raises jsonschema's ValidationError
        print(f"[kcidb] the document is not valid KCIDB v5: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    out = a.out or a.build / "kcidb.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    counts = {}
    for t in doc["tests"]:
        counts[t["status"]] = counts.get(t["status"], 0) + 1
    print(f"[kcidb] {out}: {len(doc['checkouts'])} checkout(s), {len(doc['builds'])} build(s), "
          f"{len(doc['tests'])} test(s) ({', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}); "
          "valid KCIDB v5 (kcidb-io)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
