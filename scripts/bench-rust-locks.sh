#!/usr/bin/env bash
# bench-rust-locks.sh: uncontended lock+unlock of the Rust Mutex and SpinLock
# against C mutex_lock/spin_lock on riscv64-virt (our 6.1 with Rust), in the
# same kernel and run (tests/guest/rust-lock-bench, guest/payloads/
# rust-lock-bench), plus what one call to an empty C function costs from C
# and from Rust. The module measures 101 short rounds, C and Rust back to
# back in each; here every round gives a Rust/C ratio, and the figure is
# the median ratio with its 95 % confidence interval (distribution-free,
# from the order statistics of the ratios), so a run says whether the
# goal Rust/C <= 1.05 is met, missed, or not decided by that run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$TOP/scripts/build-board.sh" riscv64-virt ours
out=$("$TOP/scripts/boot.sh" run riscv64-virt ours rust-lock-bench)
echo "$out" | grep '^rust-lock-bench ' | BUILD=$BUILD SCRIPTS=$TOP/scripts python3 -c '
import math, os, sys
rounds = {}
for line in sys.stdin:
    f = line.split()
    kind, c, r, iters = f[1], int(f[5]), int(f[7]), int(f[9])
    rounds.setdefault(kind, []).append((c, r, iters))
if sorted(rounds) != ["call", "mutex", "spinlock"] or min(map(len, rounds.values())) < 30:
    sys.exit("bench-rust-locks: too few figures from the guest: %s" % {k: len(v) for k, v in rounds.items()})
sys.path.insert(0, os.environ["SCRIPTS"])
from benchstats import median, median_ci as ci
import json, os
figures = {}
for kind in ("mutex", "spinlock", "call"):
    rs = rounds[kind]
    iters = rs[0][2]
    c = median([x[0] for x in rs]) / iters
    r = median([x[1] for x in rs]) / iters
    ratios = [x[1] / x[0] for x in rs if x[0] > 0]
    m, (lo, hi) = median(ratios), ci(ratios)
    figures[kind] = {"c_ns": c, "rust_ns": r, "ratio": m, "ci": [lo, hi], "rounds": len(rs)}
    if kind == "call":
        print(f"[bench] one call to an empty C function: from C {c:.1f} ns, from Rust {r:.1f} ns, "
              f"Rust/C {m:.3f} [95% CI {lo:.3f}-{hi:.3f}] ({len(rs)} rounds x {iters})")
        continue
    verdict = ("met" if hi <= 1.05 else "missed" if lo > 1.05 else "not decided by this run")
    print(f"[bench] {kind:<8} lock+unlock, uncontended: C {c:.1f} ns, Rust {r:.1f} ns per pair; "
          f"Rust/C median {m:.3f}, 95% CI {lo:.3f}-{hi:.3f} (width {100 * (hi - lo) / m:.1f}%, "
          f"{len(rs)} rounds x {iters}); goal <= 1.05: {verdict}")
# for make report (scripts/report.py)
path = os.path.join(os.environ["BUILD"], "report-data", "rust-locks.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump(figures, f, indent=1)
'
echo "[bench] riscv64-virt under TCG, kernel with lockdep (PROVE_LOCKING), DEBUG_SPINLOCK and KASAN: absolute figures are those of that debug kernel"
