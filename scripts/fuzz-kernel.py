#!/usr/bin/env python3
"""fuzz-kernel.py run|check: the kernel's layout parsers (layouts/drivers/,
as the series carries them) compiled unmodified into host programs with
clang's libFuzzer, ASan and UBSan (tests/fuzz-kernel/: the kernel API they
call, shimmed, and the invariants checked on every input).

  fuzz-kernel.py run [SECONDS] [LAYOUT...]
      fuzz each layout SECONDS (default 600), seeded with the images of
      eeprom-images/ and the saved corpus; print executions, coverage and
      crashes; a crash is minimised and kept in
      tests/fuzz-kernel/regressions/LAYOUT/, the new inputs merged into the
      saved corpus tests/fuzz-kernel/corpus/LAYOUT/; then `check`
  fuzz-kernel.py check [LAYOUT...]
      the regression pass: every saved input, regression and seed, once,
      through the sanitized parser, and each held to nvmem-image, the
      independent host decoder: an image the tool rejects gives no cell,
      and one it accepts gives the tool's cells (name, offset, size)

Everything built goes to build/fuzz-kernel/.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("NVLAB_BUILD", TOP / "build"))
SRC = TOP / "tests" / "fuzz-kernel"
OUT = BUILD / "fuzz-kernel"
TOOL = TOP / "target" / "release" / "nvmem-image"
# layout -> (driver source, description formats that seed it)
LAYOUTS = {
    "onie-tlv": ("onie-tlv.c", {"onie-tlv"}),
    "sl28vpd": ("sl28vpd.c", {"sl28-vpd"}),
    "u-boot-env": ("u-boot-env.c", {"uboot-env"}),
    "fixed-layout": ("core-cells.c", set()),
}
# the core's cells (harness-fixed-layout.c): what of the patched tree's
# drivers/nvmem/core.c is compiled, copied as it is, in this order
CORE = BUILD / "src" / "linux-6.1" / "drivers" / "nvmem" / "core.c"
CORE_PARTS = ["struct nvmem_cell_entry", "nvmem_cell_info_to_nvmem_cell_entry_nodup",
              "nvmem_cell_info_to_nvmem_cell_entry", "nvmem_mac_base_read", "nvmem_mac_base_cell", "nvmem_dt_cell_fits",
              "nvmem_add_cells_from_dt", "nvmem_shift_read_buffer_in_place", "__nvmem_cell_read"]
# layouts whose cells nvmem-image decodes too (the differential of check)
DIFFERENTIAL = {"onie-tlv", "sl28vpd", "u-boot-env"}
COMPATIBLE = {"onie,tlv-layout": "onie-tlv", "kontron,sl28-vpd": "sl28vpd", "u-boot,env": "u-boot-env",
              "u-boot,env-redundant-bool": "u-boot-env", "u-boot,env-redundant-count": "u-boot-env"}
# the configuration prefix of the u-boot-env harness (harness-u-boot-env.c)
UBOOT_COUNT, UBOOT_BOOL, UBOOT_REDUNDANT = 2, 1, 8
MAX_LEN = 4096 + 9
CFLAGS = ["-std=gnu11", "-g", "-O1", "-fno-omit-frame-pointer", "-Wall", "-Werror",
          "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


class Failure(Exception):
    pass


def say(msg):
    print(f"[fuzz-kernel] {msg}", flush=True)


def clang():
    for c in ("clang", "clang-14"):
        if shutil.which(c):
            return c
    raise Failure("no clang (make setup installs it)")


def extract_core():
    """core-cells.c: the CORE_PARTS of the patched tree's core.c, copied
    line for line (a #line before each, so that reports name core.c);
    the tree is made first if it is not there (scripts/prepare-tree.sh)"""
    if not CORE.exists():
        say("making the patched tree for the core's code (scripts/prepare-tree.sh ours)")
        r = subprocess.run([str(TOP / "scripts" / "prepare-tree.sh"), "ours"],
                           capture_output=True, text=True)
        if r.returncode or not CORE.exists():
            raise Failure(f"scripts/prepare-tree.sh ours: {(r.stdout + r.stderr)[-2000:]}")
    lines = CORE.read_text().split("\n")
    out = [f"/* copied by scripts/fuzz-kernel.py from {CORE}; do not edit */"]
    for part in CORE_PARTS:
        if part.startswith("struct "):
            start = next((i for i, ln in enumerate(lines) if ln == part + " {"), None)
        else:
            # the definition: the line naming it, then "{" before any ";"
            start = None
            for i, ln in enumerate(lines):
                if re.match(rf"^(static )?[\w\s*]*\b{re.escape(part)}\(", ln):
                    j = i
                    while not lines[j].startswith("{") and not lines[j].rstrip().endswith(";"):
                        j += 1
                    if lines[j].startswith("{"):
                        start = i
                        break
        if start is None:
            raise Failure(f"{CORE}: no {part} (harness-fixed-layout.c and the tree disagree)")
        end = next(i for i in range(start, len(lines)) if lines[i] in ("}", "};"))
        out += [f'#line {start + 1} "{CORE}"', *lines[start:end + 1]]
    gen = OUT / "gen" / "core-cells.c"
    gen.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(out) + "\n"
    if not gen.exists() or gen.read_text() != text:
        gen.write_text(text)
    return gen


def build():
    """the fuzzing and the replay program of each layout, rebuilt when a
    source changed"""
    cc = clang()
    bindir = OUT / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    gen = extract_core()
    sources = sorted(SRC.rglob("*.[ch]")) + [TOP / "layouts" / "drivers" / s
                                             for s, _ in LAYOUTS.values() if s != "core-cells.c"] + \
        [TOP / "layouts" / "drivers" / "u-boot-env.h", gen]
    newest = max(p.stat().st_mtime for p in sources)
    for name in LAYOUTS:
        common = ["-I", str(SRC / "include"), "-I", str(TOP / "layouts" / "drivers"),
                  "-I", str(gen.parent), str(SRC / f"harness-{name}.c"), str(SRC / "kshim.c")]
        for kind, extra in (("fuzz", ["-fsanitize=fuzzer"]),
                            ("replay", [str(SRC / "kshim-main.c")])):
            out = bindir / f"{name}-{kind}"
            if out.exists() and out.stat().st_mtime >= newest:
                continue
            r = subprocess.run([cc, *CFLAGS, *extra, *common, "-o", str(out)],
                               capture_output=True, text=True)
            if r.returncode:
                raise Failure(f"{cc} {name}-{kind}:\n{r.stderr[-3000:]}")
    return bindir


def descriptions():
    """(format, description, built image) of every eeprom-images/*.toml
    and hostile/*.toml whose image make images built"""
    for desc in sorted([*(TOP / "eeprom-images").glob("*.toml"),
                        *(TOP / "eeprom-images" / "hostile").glob("*.toml")]):
        image = BUILD / "images" / f"{desc.stem}.bin"
        with open(desc, "rb") as f:
            fmt = tomllib.load(f).get("format")
        if image.exists():
            yield fmt, desc, image


def uboot_prefix(flags, env_size=0, redundant=0):
    return bytes([flags]) + env_size.to_bytes(4, "little") + redundant.to_bytes(4, "little")


def promised(layout):
    """the images the boards attach with this layout (board.conf LAYOUTS,
    whole devices), whatever their description's format"""
    sys.path.insert(0, str(TOP / "tests"))
    import lab
    names = set()
    for board in sorted(p.parent.name for p in (TOP / "qemu-boards").glob("*/board.conf")):
        for kernel in lab.KERNELS:
            for p in lab.board_promises(board, kernel).layouts:
                if not p.partition and COMPATIBLE.get(p.compatible) == layout:
                    names.add(p.image)
    return names


def fixed_layout_seeds():
    """inputs of harness-fixed-layout.c: cell nodes (reg, bits, mac-base)
    over a device of 64 bytes, each saying what it holds"""
    def node(offset, size, bits=None, mac=False, short_reg=False):
        flags = 1 | (2 if short_reg else 0) | (4 if bits else 0) | (16 if mac else 0)
        bo, nb = bits or (0, 0)
        return bytes([flags]) + b"".join(v.to_bytes(4, "little") for v in (offset, size, bo, nb))

    def dev(*nodes, content=bytes(range(0x41, 0x41 + 64))):
        return bytes([len(nodes)]) + b"".join(nodes) + content

    text = b"02:00:5e:10:00:fe" + b"02-00-5e-10-00-fe" + b"02005e1000fe" + b"\x02\x00\x5e\x10\x00\xfe"
    mac = text + bytes(64 - len(text))
    return {
        "bytes": dev(node(0x10, 4)),
        "bits-in-a-byte": dev(node(2, 1, (3, 4))),
        "bits-across-bytes": dev(node(4, 2, (5, 9))),
        "bits-whole-bytes": dev(node(4, 3, (0, 24))),
        "mac-base-each-form": dev(node(0, 17, mac=True), node(17, 17, mac=True),
                                  node(34, 12, mac=True), node(46, 6, mac=True), content=mac),
        "mac-base-not-hex": dev(node(0, 12, mac=True)),
        "mac-base-bad-length": dev(node(0, 8, mac=True)),
        "bit-offset-past-a-byte": dev(node(8, 2, (9, 3))),
        "bits-past-reg": dev(node(0, 1, (0, 16))),
        "no-bits-counted": dev(node(0, 1, (3, 0))),
        "cell-past-the-device": dev(node(0x3c, 8)),
        "cell-at-4g": dev(node(0xfffffffc, 8)),
        "size-over-2g": dev(node(0, 0x80000000)),
        "reg-too-short": dev(node(0, 4, short_reg=True), node(4, 4)),
        "empty-cell": dev(node(8, 0)),
        "seven-cells": dev(*(node(i * 8, 8, (i, 8 * 8 - 2 * i) if i % 2 else None) for i in range(7))),
    }


def seeds(layout):
    """{file name: input} from the descriptions of the layout's format and
    the images the boards attach with the layout; U-Boot environments with
    the geometry their description gives"""
    if layout == "fixed-layout":
        return fixed_layout_seeds()
    _, formats = LAYOUTS[layout]
    wanted = promised(layout)
    found = {}
    for fmt, desc, image in descriptions():
        if fmt not in formats and desc.stem not in wanted:
            continue
        data = image.read_bytes()
        if layout != "u-boot-env":
            found[desc.stem] = data
            continue
        with open(desc, "rb") as f:
            d = tomllib.load(f)
        node = d.get("layout", {})
        if node.get("compatible", "").startswith("u-boot,env"):
            # a hostile image: the geometry of the node a board gives it
            compatible = node["compatible"]
            flags = 0
            if "redundant" in compatible:
                flags = UBOOT_REDUNDANT | (UBOOT_COUNT if compatible.endswith("count") else UBOOT_BOOL)
            found[desc.stem] = uboot_prefix(flags, node.get("env-size", 0),
                                            node.get("env-redundant-offset", 0)) + data
        elif d.get("redundant") and "size" in d:
            # each copy is `size` bytes, the second right after the first
            size = int(d["size"])
            for flag, name in ((UBOOT_COUNT, "count"), (UBOOT_BOOL, "bool")):
                found[f"{desc.stem}-{name}"] = uboot_prefix(flag | UBOOT_REDUNDANT, 0, size) + data
        else:
            found[desc.stem] = uboot_prefix(0) + data
    return found


def corpus_files(layout):
    """the saved corpus and regressions of a layout, and its seeds
    (written to build/fuzz-kernel/seeds/LAYOUT/)"""
    seed_dir = OUT / "seeds" / layout
    shutil.rmtree(seed_dir, ignore_errors=True)
    seed_dir.mkdir(parents=True)
    for name, data in seeds(layout).items():
        (seed_dir / name).write_bytes(data)
    files = []
    for d in (SRC / "corpus" / layout, SRC / "regressions" / layout, seed_dir):
        if d.is_dir():
            files += sorted(p for p in d.iterdir() if p.is_file())
    return files


def tool_cells(cfg, image):
    """(accepted, {(name, offset, size)}, message) from nvmem-image"""
    cmd = [str(TOOL), "cells", "--json", "--layout", cfg["layout"], str(image)]
    if cfg.get("env_size") is not None:
        cmd += ["--env-size", str(cfg["env_size"])]
    if cfg.get("env_redundant_offset") is not None:
        cmd += ["--env-redundant-offset", str(cfg["env_redundant_offset"])]
    r = subprocess.run(cmd, capture_output=True, timeout=60)
    if r.returncode not in (0, 1, 2):
        raise Failure(f"nvmem-image {' '.join(cmd[2:])}: exit {r.returncode} (a panic?): "
                      f"{r.stderr.decode(errors='replace')[-500:]}")
    if r.returncode:
        return False, set(), r.stderr.decode(errors="replace").strip()
    cells = {(c["name"], c["offset"], c["size"]) for c in json.loads(r.stdout)}
    return True, cells, ""


def kernel_name(name):
    # the harness escapes each byte of a name as one \\u00XX code point
    return name.encode("latin-1").decode("utf-8", errors="replace")


def images():
    """the images of eeprom-images/ and the tool (scripts/build-images.sh,
    which does nothing when they are up to date)"""
    r = subprocess.run([str(TOP / "scripts" / "build-images.sh")], capture_output=True, text=True)
    if r.returncode or not TOOL.exists():
        raise Failure(f"scripts/build-images.sh: {(r.stdout + r.stderr)[-2000:]}")


def check(layouts):
    """the regression pass of every layout; returns the figures per layout"""
    images()
    bindir = build()
    figures = {}
    diffs = []
    for layout in layouts:
        files = corpus_files(layout)
        replay = bindir / f"{layout}-replay"
        lines = []
        # one process an input: a line for the input as it is, and one
        # for it with the checksums the harness made right
        for f in files:
            r = subprocess.run([str(replay), str(f)], capture_output=True, text=True,
                               env={**os.environ, "NVLAB_FUZZ_LIST": "1"}, timeout=120)
            if r.returncode:
                raise Failure(f"{layout}: {f} crashes the parser:\n{r.stderr[-4000:]}")
            lines += [(f, line) for line in r.stdout.splitlines()]
        if layout not in DIFFERENTIAL:
            # no second decoder: the harness itself holds each cell read
            # to what it computes from the device (harness-fixed-layout.c)
            runs = sum(not json.loads(line).get("skipped") for _, line in lines)
            figures[layout] = {"inputs": len(files), "devices": runs}
            say(f"check {layout}: {len(files)} inputs through the sanitized core code, none "
                f"crashed; {runs} device(s) parsed, every cell kept fits its node and reads "
                f"back as the harness computes it")
            continue
        accepted = rejected = skipped = 0
        with tempfile.TemporaryDirectory(prefix="nvlab-fuzz-") as tmp:
            for path, line in lines:
                cfg = json.loads(line)
                if cfg.get("skipped"):
                    skipped += 1
                    continue
                image = Path(tmp) / "image.bin"
                image.write_bytes(bytes.fromhex(cfg["fixed"]) if "fixed" in cfg
                                  else path.read_bytes()[cfg["prefix"]:])
                ok, want, why = tool_cells(cfg, image)
                got = {(kernel_name(n), off, size) for n, off, size, _ in cfg["cells"]}
                rel = path.relative_to(TOP) if path.is_relative_to(TOP) else path
                if ok:
                    accepted += 1
                    if got != want:
                        diffs.append(f"{layout}: {rel}: kernel {sorted(got - want)[:4]} "
                                     f"where nvmem-image has {sorted(want - got)[:4]}")
                else:
                    rejected += 1
                    if got:
                        diffs.append(f"{layout}: {rel}: nvmem-image rejects it ({why}) "
                                     f"but the kernel gives {len(got)} cell(s)")
        figures[layout] = {"inputs": len(files), "devices": accepted + rejected,
                           "accepted": accepted, "rejected": rejected,
                           "skipped": skipped}
        say(f"check {layout}: {len(files)} inputs through the sanitized parser, none crashed; "
            f"of the {accepted + rejected} devices parsed (with the checksums as they are, and "
            f"made right), nvmem-image accepts {accepted}, rejects {rejected}; the kernel's "
            f"cells are the tool's ({skipped} input(s) too short for the harness)")
    if diffs:
        for d in diffs[:40]:
            print(f"  {d}")
        raise Failure(f"{len(diffs)} input(s) where the kernel's parser and nvmem-image differ")
    return figures


def stat(log, key):
    found = re.findall(rf"^stat::{key}:\s*(\d+)", log, re.M)
    return int(found[-1]) if found else None


def fuzz(layout, seconds, bindir):
    """one layout's run: (executions, coverage, crashes kept)"""
    work = OUT / "run" / layout
    shutil.rmtree(work, ignore_errors=True)
    (work / "corpus").mkdir(parents=True)
    (work / "artifacts").mkdir()
    for f in corpus_files(layout):
        shutil.copy(f, work / "corpus" / f"{f.parent.name}-{f.name}")
    log = work / "fuzz.log"
    fuzzer = bindir / f"{layout}-fuzz"
    with open(log, "w") as f:
        subprocess.run([str(fuzzer), str(work / "corpus"), f"-max_total_time={seconds}",
                        f"-max_len={MAX_LEN}", "-print_final_stats=1", "-timeout=10",
                        "-rss_limit_mb=2048", f"-artifact_prefix={work / 'artifacts'}/"],
                       stdout=f, stderr=subprocess.STDOUT, timeout=seconds + 600)
    text = log.read_text(errors="replace")
    execs = stat(text, "number_of_executed_units")
    cov = re.findall(r"\bcov: (\d+) ft: (\d+)", text)
    crashes = sorted((work / "artifacts").iterdir())
    kept = []
    for crash in crashes:
        small = work / "artifacts" / f"min-{crash.name}"
        subprocess.run([str(fuzzer), "-minimize_crash=1", "-runs=20000", f"-max_len={MAX_LEN}",
                        f"-exact_artifact_path={small}", str(crash)],
                       capture_output=True, timeout=900)
        keep = small if small.exists() else crash
        dest = SRC / "regressions" / layout
        dest.mkdir(parents=True, exist_ok=True)
        name = "crash-" + hashlib.sha256(keep.read_bytes()).hexdigest()[:16]
        shutil.copy(keep, dest / name)
        kept.append(dest / name)
    # the new inputs, merged into the saved corpus (a minimal set covering
    # what the whole does)
    saved = SRC / "corpus" / layout
    saved.mkdir(parents=True, exist_ok=True)
    # (in the run's directory: what libFuzzer writes there stays out of the tree)
    subprocess.run([str(fuzzer), "-merge=1", f"-max_len={MAX_LEN}", str(saved), str(work / "corpus")],
                   capture_output=True, timeout=1800, cwd=work)
    return execs, (int(cov[-1][0]), int(cov[-1][1])) if cov else (None, None), kept, log


def line_coverage(layout):
    """(covered, total) lines of the layout's driver source when the saved
    corpus and the seeds are replayed (clang's source-based coverage)"""
    src, _ = LAYOUTS[layout]
    work = OUT / "coverage" / layout
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    exe = work / "replay"
    r = subprocess.run([clang(), "-std=gnu11", "-g", "-O0", "-fprofile-instr-generate",
                        "-fcoverage-mapping", "-I", str(SRC / "include"),
                        "-I", str(TOP / "layouts" / "drivers"), "-I", str(OUT / "gen"),
                        str(SRC / f"harness-{layout}.c"),
                        str(SRC / "kshim.c"), str(SRC / "kshim-main.c"), "-o", str(exe)],
                       capture_output=True, text=True)
    if r.returncode:
        raise Failure(f"coverage build of {layout}: {r.stderr[-2000:]}")
    files = corpus_files(layout)
    for i in range(0, len(files), 500):
        subprocess.run([str(exe), *map(str, files[i:i + 500])], capture_output=True, timeout=600,
                       env={**os.environ, "LLVM_PROFILE_FILE": str(work / f"{i}.profraw")})
    subprocess.run(["llvm-profdata", "merge", "-o", str(work / "all.profdata"),
                    *map(str, work.glob("*.profraw"))], check=True, capture_output=True)
    r = subprocess.run(["llvm-cov", "export", "-summary-only", str(exe),
                        f"-instr-profile={work / 'all.profdata'}"],
                       capture_output=True, text=True, check=True)
    for f in json.loads(r.stdout)["data"][0]["files"]:
        if f["filename"].endswith("/" + src):
            lines = f["summary"]["lines"]
            return lines["covered"], lines["count"]
    raise Failure(f"no coverage of {src}")


def run(seconds, layouts):
    images()
    bindir = build()
    results = {}
    for layout in layouts:
        say(f"fuzzing {layout} for {seconds} s (log: {OUT / 'run' / layout / 'fuzz.log'})")
        execs, (cov, ft), kept, log = fuzz(layout, seconds, bindir)
        covered, count = line_coverage(layout)
        results[layout] = {"seconds": seconds, "executions": execs, "coverage": cov,
                           "features": ft, "driver_lines": [covered, count],
                           "crashes": [str(k.relative_to(TOP)) for k in kept]}
        say(f"{layout}: {execs} executions in {seconds} s, coverage {cov} edges ({ft} features), "
            f"{LAYOUTS[layout][0]} lines run {covered}/{count} ({100 * covered / count:.1f} %) "
            f"by the saved corpus and seeds, "
            f"{len(kept)} crash(es){': ' + ', '.join(map(str, kept)) if kept else ''}")
    (OUT / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    crashed = [name for name, r in results.items() if r["crashes"]]
    check(layouts)
    if crashed:
        raise Failure(f"crashes in {', '.join(crashed)}: kept in tests/fuzz-kernel/regressions/")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("seconds", nargs="?", type=int, default=600)
    r.add_argument("layouts", nargs="*")
    c = sub.add_parser("check")
    c.add_argument("layouts", nargs="*")
    args = ap.parse_args()
    layouts = args.layouts or list(LAYOUTS)
    unknown = [lay for lay in layouts if lay not in LAYOUTS]
    try:
        if unknown:
            raise Failure(f"unknown layout(s) {', '.join(unknown)} (known: {', '.join(LAYOUTS)})")
        if args.cmd == "run":
            run(args.seconds, layouts)
        else:
            check(layouts)
    except Failure as e:
        say(f"FAILED: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
