#!/usr/bin/env bash
# test.sh [all|ours|ref]: host checks, then build and boot-test every board
# of the matrix with pytest + labgrid.
#   ours: every board on our patched 6.1; ref: every board on the 6.12
#   reference (tests marked "patched" are skipped there); all: both.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
which=${1:-all}
case "$which" in
ours) matrix="riscv64-virt:ours ast2600-evb:ours" ;;
ref) matrix="riscv64-virt:ref ast2600-evb:ref" ;;
all) matrix="riscv64-virt:ours ast2600-evb:ours riscv64-virt:ref ast2600-evb:ref" ;;
*) die "unknown KERNEL '$which'; choose one of: ours ref (or nothing for both)" ;;
esac
t_all=$(date +%s)
failed=()
# stage times of this run, for make report (scripts/report.py): one JSON
# line per stage in build/report-data/test-times.jsonl
times=$BUILD/report-data/test-times.jsonl
mkdir -p "$(dirname "$times")"
record_time() { # STAGE START
	printf '{"run": %s, "stage": "%s", "seconds": %s}\n' "$t_all" "$1" "$(($(date +%s) - $2))" >>"$times"
}

stage test "host checks"
t0=$(date +%s)
if [ -f "$TOP/Cargo.toml" ]; then
	(cd "$TOP" && host_cargo fmt --check && host_cargo clippy -q --all-targets -- -D warnings && host_cargo test -q) ||
		failed+=("host: cargo")
fi
"$VENV/bin/pytest" -c "$TOP/pytest.ini" --rootdir "$TOP" -q "$TOP/tests/host" || failed+=("host: pytest tests/host")
# the kernel's layout parsers on the host (ASan, UBSan): the saved fuzzing
# corpus and the seeds once each, held to nvmem-image (make fuzz-kernel fuzzes)
"$VENV/bin/python" "$TOP/scripts/fuzz-kernel.py" check || failed+=("host: kernel parsers' fuzzing corpus")
for s in "$TOP"/scripts/*.sh "$TOP"/guest/init "$TOP"/guest/payloads/*; do
	bash -n "$s" || failed+=("host: syntax of $s")
done
# the kernel series: checkpatch --strict, maintainers, sign-offs
# (make check-series also builds every step)
"$TOP/scripts/check-series.sh" || failed+=("host: kernel-patches series check")
record_time "host checks" "$t0"

# A reference session boots our kernel of its board too, unless our
# session recorded what it needs (the cells differential, and
# tests/boot/test_hwprobe.py's answers on the same board options).
for entry in $matrix; do
	[ "${entry#*:}" = ref ] || continue
	b=${entry%%:*}
	case " $matrix " in
	*" $b:ours "*) ;;
	*) "$TOP/scripts/build-board.sh" "$b" ours ;;
	esac
done

# Everything every session boots is built first (a kernel build takes all
# cores), then the sessions run side by side: a board session keeps QEMU
# busy on about one and a half cores, and the short ones fit next to the
# long one. In matrix order, at most NVLAB_TEST_JOBS (default: the number of
# cores, at most 2) at a time; a job's output comes as whole stage lines.
# The reference session reads what our riscv64 session recorded of its
# boots (tests/lab.py: recorded() waits for a session still running).
dtbs=()
for entry in $matrix; do
	b=${entry%%:*} k=${entry#*:}
	t0=$(date +%s)
	"$TOP/scripts/build-board.sh" "$b" "$k"
	record_time "build $b $k" "$t0"
	dtbs+=("$BUILD/$b/$k/board.dtb")
done

# session BOARD KERNEL: one pytest run over tests/boot, its output in the
# board's test-logs/pytest.log; prints its result and, on failure, the
# summary lines of that log
session() {
	local b=$1 k=$2 out=$BUILD/$1/$2 kver t0 logdir
	logdir=$out/test-logs
	kver=$(source_version "$k")
	echo "Linux $kver" >"$logdir/kernel-version.txt"
	stage "test $b $k" "booting and testing Linux $kver (log: $logdir/pytest.log, console: $logdir/console_main)"
	t0=$(date +%s)
	LG_OUT=$out LG_IMAGES=$BUILD/images NVLAB_BOARD=$b NVLAB_KERNEL=$k NVLAB_KERNEL_VERSION=${kver%% *} \
		"$VENV/bin/pytest" -c "$TOP/pytest.ini" --rootdir "$TOP" "$TOP/tests/boot" \
		--lg-env "$TOP/tests/env/$b.yaml" --lg-log "$logdir" --nvlab-kernel "$k" \
		--junitxml "$logdir/junit.xml" -q --durations=5 >"$logdir/pytest.log" 2>&1 &
	# for stop_jobs (Ctrl-C): pytest takes SIGTERM as an interrupt, tears its
	# fixtures down and stops QEMU (tests/conftest.py)
	local child=$!
	echo "$child" >"$logdir/pytest.pid"
	local rc=0
	wait $child || rc=$?
	rm -f "$logdir/pytest.pid"
	record_time "session $b $k" "$t0"
	if [ $rc = 0 ]; then
		stage "test $b $k" "passed (Linux $kver) in $(elapsed "$t0"), boot to shell $(cat "$logdir/boot-to-shell.txt" 2>/dev/null || echo ?) s: $(tail -n 1 "$logdir/pytest.log" | tr -d =)"
	else
		stage "test $b $k" "FAILED in $(elapsed "$t0") (logs: $logdir)"
		echo "---- failures and summary of $logdir/pytest.log ----"
		grep -E '^(FAILED|ERROR|E  )' "$logdir/pytest.log" | head -n 40 || true
		tail -n 3 "$logdir/pytest.log"
		return 1
	fi
}

# The jobs after the builds, in this order, at most jobs_max at a time: the
# board sessions, then the checks that need the builds (they fit next to
# the longest session)
job_names=() job_cmds=()
add_job() {
	job_names+=("$1")
	job_cmds+=("$2")
}
for entry in $matrix; do
	b=${entry%%:*} k=${entry#*:}
	rm -rf "$BUILD/$b/$k/test-logs" && mkdir -p "$BUILD/$b/$k/test-logs"
	add_job "$entry" "session $b $k"
done
# misuse of the kernel Rust API must not compile (against the riscv64-virt
# kernel of this run, which has Rust)
case " $matrix " in
*" riscv64-virt:ours "*) add_job "rust: compile-fail suite" '"$TOP/scripts/rust-compile-fail.sh"' ;;
esac
# the layout binding schemas (dtschema), their examples, and the device
# trees the boards booted with (dts/ overlays applied)
add_job "bindings: dtschema" '"$TOP/scripts/check-bindings.sh" "${dtbs[@]}"'
# the same boot tests through a labgrid remote place (coordinator and
# exporter on loopback, scripts/remote.py): every outcome as in the local
# session, which is an earlier job of this run (of the jobs before this one,
# at most one can still be running and it is not that session)
remote=()
case " $matrix " in
*" ast2600-evb:ours "*)
	remote=(ast2600-evb:ours:remote)
	add_job "remote: ast2600-evb ours" '"$VENV/bin/python" "$TOP/scripts/remote.py" test ast2600-evb ours'
	;;
esac

# the same build as a LAVA job run by Debian's lava-run (scripts/lava.py:
# job and device dictionary from the board's environment, LAVA's schemas,
# every LAVA result held to the local session's outcome, which it waits for)
lava=()
for b in ast2600-evb riscv64-virt; do
	case " $matrix " in
	*" $b:ours "*)
		lava+=("$b:ours:lava")
		add_job "lava: $b ours" "\"\$VENV/bin/python\" \"\$TOP/scripts/lava.py\" run $b ours"
		;;
	esac
done

jobs_max=${NVLAB_TEST_JOBS:-$(nproc)}
[ "$jobs_max" -le 2 ] || jobs_max=2
[ "$jobs_max" -ge 1 ] || jobs_max=1
declare -A pids=()
# Ctrl-C reaches the jobs' shells, but not pytest (a background job of a
# script ignores it): pytest gets SIGTERM, and its teardown (at most two
# minutes) is waited for, so that no QEMU outlives the run
stop_jobs() {
	local p entry f live=() deadline=$((SECONDS + 120))
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for entry in $matrix; do
		f=$BUILD/${entry%%:*}/${entry#*:}/test-logs/pytest.pid
		[ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null && live+=("$(cat "$f")")
	done
	for p in "${live[@]}"; do
		while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 1; done
	done
	stage test "stopped"
}
trap 'stop_jobs; exit 130' INT
trap 'stop_jobs; exit 143' TERM
reap() {
	local e
	for e in "${!pids[@]}"; do
		kill -0 "${pids[$e]}" 2>/dev/null && continue
		wait "${pids[$e]}" || failed+=("$e")
		unset "pids[$e]"
	done
}
for i in "${!job_names[@]}"; do
	while [ "${#pids[@]}" -ge "$jobs_max" ]; do
		wait -n || true
		reap
	done
	eval "${job_cmds[$i]}" &
	pids[${job_names[$i]}]=$!
done
for e in "${!pids[@]}"; do
	wait "${pids[$e]}" || failed+=("$e")
done

# the sessions' results as KCIDB v5 (build/kcidb.json, checked with
# kcidb-io), failed sessions included: what a lab submits to KCIDB
"$VENV/bin/python" "$TOP/scripts/kcidb.py" --run "$t_all" $matrix "${remote[@]}" "${lava[@]}" || failed+=("kcidb: results")

record_time total "$t_all"
if [ ${#failed[@]} -gt 0 ]; then
	stage test "FAILED: ${failed[*]} (total $(elapsed "$t_all"))"
	exit 1
fi
stage test "all passed: $matrix (total $(elapsed "$t_all"))"
