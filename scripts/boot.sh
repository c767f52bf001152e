#!/usr/bin/env bash
# boot.sh boot|run BOARD KERNEL [PAYLOAD…]: start the board from its labgrid
# environment. boot: interactive shell (Ctrl-A X leaves QEMU). run: runs the
# payloads, prints their results, powers off; fails if a payload failed or
# the console shows a kernel splat. NVLAB_APPEND: more kernel command line
# arguments for the payloads (space separated); NVLAB_OUT: boot from that
# build directory instead of the board's (kernel, initramfs and board.dtb,
# as tests/lab.py rmem_boot_dir() makes one; the console log goes there);
# NVLAB_TIMEOUT: seconds the run may take (default 600).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mode=$1
load_board "$2" "$3"
shift 3
OUT=${NVLAB_OUT:-$OUT}
export LG_OUT=$OUT LG_IMAGES=$BUILD/images
envf=$TOP/tests/env/$BOARD.yaml
if [ "$mode" = boot ]; then
	stage "boot $BOARD $KERNEL" "$("$VENV/bin/python" "$TOP/scripts/qemu.py" cmd "$envf")"
	exec "$VENV/bin/python" "$TOP/scripts/qemu.py" boot "$envf"
fi
log=$OUT/console-run.log
payloads=$(IFS=,; echo "$*")
stage "run $BOARD $KERNEL" "booting Linux $(source_version "$KERNEL"), payloads: $payloads (console log: $log)"
t0=$(date +%s)
# qemu.py stops QEMU on its timeout, Ctrl-C, SIGTERM and errors; the
# console's last line shows on a terminal meanwhile
rm -f "$log.out"
PROGRESS=console run_progress "run $BOARD $KERNEL" "$log.out" \
	"$VENV/bin/python" "$TOP/scripts/qemu.py" run --timeout "${NVLAB_TIMEOUT:-600}" "$envf" "$log" "nvlab.run=$payloads" ${NVLAB_APPEND:-}
rm -f "$log.out"
if [ "$payloads" = nvmem-list ]; then
	# the listing decoded (scripts/cells.py); all cells and JSON: make cells
	"$VENV/bin/python" "$TOP/scripts/cells.py" "$BOARD" "$KERNEL" "$log" --max-cells 12 ||
		die "decoding the nvmem listing failed (log: $log)"
	echo "(every cell: make cells BOARD=$BOARD KERNEL=$KERNEL [JSON=1]; raw listing: $log)"
else
	# what the payloads printed, kernel messages taken out (tests/lab.py)
	PYTHONPATH=$TOP/tests "$VENV/bin/python" -c '
import sys, lab
with open(sys.argv[1], errors="replace") as f: sys.stdout.write(lab.payload_output(f.read()))' "$log"
fi
stage "run $BOARD $KERNEL" "done in $(elapsed "$t0")"
# the boot tests' reader of tests/splat-patterns.txt (tests/lab.py)
splats=$(PYTHONPATH=$TOP/tests "$VENV/bin/python" -c '
import sys, lab
rx = lab.splat_patterns()
with open(sys.argv[1], errors="replace") as f:
    for n, line in enumerate(f, 1):
        if rx.search(line):
            print(f"{n}:{line.rstrip()}")' "$log") || die "splat check of $log failed"
if [ -n "$splats" ]; then
	echo "$splats"
	die "kernel splat on the console (log: $log)"
fi
grep -q '^=== NVLAB-END .* rc=0 ===' "$log" || die "no payload finished (log: $log)"
if grep -E '^=== NVLAB-END .* rc=[1-9]' "$log"; then die "payload failed (log: $log)"; fi
