#!/usr/bin/env bash
# bench-rust-layouts.sh [ROUNDS [BINDS]]: NVMEM layouts written in Rust
# against C in the same kernel (riscv64-virt, ours) and run: the time from the bind of an nvmem-rmem device to its
# last layout cell in sysfs (guest/payloads/rust-layout-bench,
# tests/guest/common/layout-bench.c):
#   - Kontron sl28 VPD: the C layout (sl28vpd) against the Rust one
#     (sl28vpd_rust) on the sl28-vpd image, swapped in every round;
#   - IPMI FRU (Rust only, ipmi_fru) on the 2 KiB ipmi-fru-server image
#     against the C ONIE TLV layout on the 2 KiB onie-2k image, a reference
#     of the same size in another format;
#   - a device without layout (calib-blob) as the baseline.
# Each of ROUNDS rounds (default 11) times BINDS binds (default 10) of every
# device and gives a median per device; every round gives a Rust/C ratio
# (and FRU/ONIE), raw and with the baseline subtracted (the layout's own
# cost); the figure is the median ratio with its 95 % confidence interval
# (distribution-free, from the order statistics of the ratios). Figures
# only, no verdict. The FRU images do not fit in the board's device tree
# (6.1 keeps 64 reserved-memory regions): the boot uses a tree without the
# hostile images plus the FRU ones (tests/lab.py rmem_boot_dir) in
# build/riscv64-virt/ours-rust-bench (scripts/boot.sh run with NVLAB_OUT).
# Figures also in build/report-data/rust-layouts.json.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
rounds=${1:-11}
binds=${2:-10}
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 3 ]] || die "ROUNDS: a number >= 3, not '$rounds'"
[[ $binds =~ ^[0-9]+$ && $binds -ge 1 ]] || die "BINDS: a number >= 1, not '$binds'"
tag="bench-rust-layouts"
"$TOP/scripts/build-board.sh" riscv64-virt ours
load_board riscv64-virt ours
tool=$TOP/target/release/nvmem-image

# the boot directory: board's tree without the hostile images, plus the FRU ones
work=$OUT-rust-bench
rm -rf "$work" && mkdir -p "$work"
stage "$tag" "boot directory with the FRU images: $work"
"$VENV/bin/python" -c '
import sys
sys.path[:0] = [sys.argv[1] + "/tests", sys.argv[1] + "/scripts"]
import lab
regions = lab.rmem_boot_dir("riscv64-virt", "ours", lab.fru_descriptions(), sys.argv[2])
if "ipmi-fru-server" not in regions:
    sys.exit(f"ipmi-fru-server not attached: {sorted(regions)}")' "$TOP" "$work" ||
	die "making the boot directory $work failed"

# each image's device (its rmem address in the boot's device tree) and the
# cell to wait for: the last one nvmem-image predicts
# label:layout; "-" for the baseline
images=(sl28-vpd:kontron,sl28-vpd ipmi-fru-server:nvmem-lab,ipmi-fru onie-2k:onie,tlv-layout calib-blob:-)
arg=
for s in "${images[@]}"; do
	label=${s%%:*} layout=${s#*:}
	addr=$("$VENV/bin/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import qemu
for label, addr, _ in qemu.rmem_regions(sys.argv[2]):
    if label == sys.argv[3]:
        print(f"{addr:x}")' "$TOP/scripts" "$work/board.dtb" "$label")
	[ -n "$addr" ] || die "$label: not in the boot's device tree ($work/board.dtb)"
	[ "$(echo "$addr" | wc -l)" = 1 ] || die "$label: attached more than once ($addr)"
	cell=-
	if [ "$layout" != - ]; then
		cell=$("$tool" cells "$BUILD/images/$label.bin" --layout "$layout" --json |
			python3 -c 'import json, sys; c = json.load(sys.stdin); print(max(c, key=lambda x: x["offset"])["sysfs"])') ||
			die "$label: nvmem-image predicts no cells for $layout"
	fi
	stage "$tag" "$label: $addr.eeprom, waiting for ${cell/#-/the nvmem file (no layout)}"
	arg+="${arg:++}$addr.eeprom:$cell"
done

log=$work/console-run.log
# about 2.5 s of wall time per bind under TCG (the debug kernel; mdev
# handles the hotplug events of each measurement before the next): leave room
timeout=${NVLAB_BENCH_TIMEOUT:-$((900 + rounds * binds * 5 * 6))}
NVLAB_OUT=$work NVLAB_TIMEOUT=$timeout \
	NVLAB_APPEND="nvlab.rlbench=$arg nvlab.rlbench_rounds=$rounds nvlab.bench_n=$binds" \
	"$TOP/scripts/boot.sh" run riscv64-virt ours rust-layout-bench >"$work/out.txt" ||
	{ tail -n 30 "$work/out.txt" >&2; die "the payload failed or did not finish (log: $log)"; }
grep '^rust-layout-bench: [0-9]* rounds x' "$work/out.txt" | sed 's/^/[guest] /'

grep '^rust-layout-bench round ' "$work/out.txt" |
	BUILD=$BUILD SCRIPTS=$TOP/scripts ROUNDS=$rounds BINDS=$binds LOG=$log python3 -c '
import json, os, re, sys
rx = re.compile(r"^rust-layout-bench round (\d+) (\S+): layout-bench (\S+) (\S+): (\d+) runs, "
                r"min ([0-9.]+) us, median ([0-9.]+) us$")
kinds = ("sl28-c", "sl28-rust", "fru", "onie", "base")
by = {k: {} for k in kinds}
devs = {}
for line in sys.stdin:
    m = rx.match(line.rstrip())
    if not m or m.group(2) not in by:
        sys.exit(f"bench-rust-layouts: unexpected line from the guest: {line.rstrip()}")
    r, kind, dev, cell = int(m.group(1)), m.group(2), m.group(3), m.group(4)
    by[kind][r] = float(m.group(7))
    devs[kind] = (dev, cell)
want = int(os.environ["ROUNDS"])
log = os.environ["LOG"]
counts = {k: len(v) for k, v in by.items()}
if min(counts.values()) < want:
    sys.exit(f"bench-rust-layouts: too few figures from the guest ({want} rounds expected): {counts} "
             f"(log: {log})")
rounds = sorted(set.intersection(*(set(v) for v in by.values())))

sys.path.insert(0, os.environ["SCRIPTS"])
from benchstats import median, median_ci as ci

def ratio(num, den, minus=None):
    rs = []
    for r in rounds:
        a, b = by[num][r], by[den][r]
        if minus:
            a, b = a - by[minus][r], b - by[minus][r]
        if b > 0:
            rs.append(a / b)
    m, (lo, hi) = median(rs), ci(rs)
    return {"ratio": m, "ci": [lo, hi], "rounds": len(rs), "per_round": rs}

med = {k: median(by[k][r] for r in rounds) for k in kinds}
binds = int(os.environ["BINDS"])
med_base = med["base"]
names = {"sl28-c": "sl28 VPD, C (sl28vpd)", "sl28-rust": "sl28 VPD, Rust (sl28vpd_rust)",
         "fru": "IPMI FRU 2 KiB, Rust (ipmi_fru)", "onie": "ONIE TLV 2 KiB, C (onie-tlv)",
         "base": "no layout (baseline)"}
print(f"[bench] bind to last cell in sysfs, median of {len(rounds)} round medians ({binds} binds each):")
for k in kinds:
    dev, cell = devs[k]
    extra = "" if k == "base" else f", layout alone {med[k] - med_base:8.1f} us"
    print(f"[bench]   {names[k]:<32} {med[k]:8.1f} us{extra}   ({dev} {cell})")
figs = {}
for key, num, den, what in (("sl28_rust_c", "sl28-rust", "sl28-c", "sl28 VPD Rust/C"),
                            ("fru_onie", "fru", "onie", "FRU 2 KiB (Rust)/ONIE 2 KiB (C)")):
    raw, own = ratio(num, den), ratio(num, den, "base")
    figs[key] = {"bind_to_cells": raw, "layout_alone": own}
    for label, f in (("bind to cells", raw), ("layout alone (minus baseline)", own)):
        (lo, hi), m, n = f["ci"], f["ratio"], f["rounds"]
        skipped = "" if n == len(rounds) else f", {len(rounds) - n} left out: C/ONIE not above the baseline"
        print(f"[bench] {what:<32} {label:<30} median {m:.3f}, 95% CI {lo:.3f}-{hi:.3f} ({n} rounds{skipped})")
data = {"board": "riscv64-virt", "kernel": "ours", "rounds": len(rounds), "binds": binds,
        "median_us": med, "devices": {k: {"device": d, "cell": c} for k, (d, c) in devs.items()},
        "per_round_us": {k: [by[k][r] for r in rounds] for k in kinds}, "ratios": figs}
path = os.path.join(os.environ["BUILD"], "report-data", "rust-layouts.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump(data, f, indent=1)
print(f"[bench] figures: {path}")
' || die "no figures (log: $log)"
echo "[bench] riscv64-virt under TCG, the debug kernel (KASAN, lockdep, kmemleak, DEBUG_SPINLOCK): absolute figures are those of that kernel; the ratios compare layouts within it"
