# Shared helpers for the nvmem-lab build scripts (sourced, not executed).
# shellcheck shell=bash

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
VENV=$BUILD/venv

die() { echo "error: $*" >&2; exit 1; }

# stage TAG MESSAGE: one short progress line
stage() { printf '[%s] %s\n' "$1" "$2"; }

# run_logged TAG LOG CMD...: run CMD with all output in LOG; on failure show
# the relevant tail (error lines first) and fail.
run_logged() {
	local tag=$1 log=$2
	shift 2
	mkdir -p "$(dirname "$log")"
	"$@" >>"$log" 2>&1 || failed_with_log "$tag" "$log" "$@"
}

# failed_with_log TAG LOG CMD...: say CMD failed, show LOG's error lines and
# tail, exit 1
failed_with_log() {
	local tag=$1 log=$2
	shift 2
	echo "[$tag] FAILED: $*" >&2
	echo "---- error lines of $log ----" >&2
	grep -nE '(error|Error|ERROR|\*\*\*)' "$log" | tail -n 15 >&2 || true
	echo "---- last lines of $log ----" >&2
	tail -n 25 "$log" >&2
	exit 1
}

# run_progress TAG LOG CMD...: run_logged for a kernel build, with progress.
# On a terminal one updating line: the objects kbuild reported so far (its
# "  CC  file.o" lines) out of what the largest earlier build of this tree
# did (kept in LOG.objects; for a tree never built, "~" the largest build
# of another tree as an estimate), and the elapsed time. Not on a terminal (CI):
# a plain line every two minutes. Failure shows the log tail as run_logged.
# PROGRESS=console: for a boot, the last line of LOG instead of objects.
run_progress() {
	local tag=$1 log=$2
	shift 2
	local counts=$log.objects expected= t0 now last n pid rc=0 start tty=
	mkdir -p "$(dirname "$log")"
	touch "$log"
	local est=
	if [ -s "$counts" ]; then
		expected=$(cat "$counts")
	else
		# no build of this tree yet: the largest of the other trees' builds
		# (another kernel or variant of a board) as an estimate
		# (none on a new machine: the glob stays unexpanded and cat fails)
		expected=$(cat "$BUILD"/*/*/kernel.log.objects 2>/dev/null | sort -n | tail -n 1 || true)
		[ -z "$expected" ] || est="~"
	fi
	[ -t 1 ] && tty=1
	start=$(wc -l <"$log")
	t0=$(date +%s)
	last=$t0
	"$@" >>"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		now=$(date +%s)
		local what
		if [ "${PROGRESS:-}" = console ]; then
			what="console: $(tail -n 1 "$log" | tr -cd '[:print:]' | cut -c1-60)"
		else
			n=$(tail -n "+$((start + 1))" "$log" | grep -c '^  [A-Z][A-Z0-9_]* ' || true)
			what="$n objects"
			if [ -n "$expected" ] && [ "$n" -le "$expected" ]; then
				what="$n/$est$expected objects ($est$((n * 100 / expected))%)"
			fi
		fi
		if [ -n "$tty" ]; then
			printf '\r[%s] %s, %s\033[K' "$tag" "$what" "$(elapsed "$t0")"
		elif [ $((now - last)) -ge 120 ]; then
			stage "$tag" "$what, $(elapsed "$t0")"
			last=$now
		fi
	done
	wait "$pid" || rc=$?
	[ -z "$tty" ] || printf '\n'
	[ "$rc" -eq 0 ] || failed_with_log "$tag" "$log" "$@"
	[ "${PROGRESS:-}" != console ] || return 0
	n=$(tail -n "+$((start + 1))" "$log" | grep -c '^  [A-Z][A-Z0-9_]* ' || true)
	if [ -n "$est" ] || [ -z "$expected" ] || [ "$n" -gt "$expected" ]; then echo "$n" >"$counts"; fi
}

elapsed() {
	local s=$(($(date +%s) - $1))
	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

check_board() {
	local b=$1
	[ -n "$b" ] && [ -f "$TOP/qemu-boards/$b/board.conf" ] && return 0
	die "unknown board '$b'; choose one of: $(cd "$TOP/qemu-boards" && ls -d */ | tr -d / | tr '\n' ' ')"
}

check_kernel() {
	case "$1" in
	ours | ref) ;;
	*) die "unknown KERNEL '$1'; choose one of: ours ref" ;;
	esac
}

# need CMD PACKAGE: fail with the package to install
need() {
	command -v "$1" >/dev/null 2>&1 || die "'$1' not found: run 'make setup' (or apt-get install $2)"
}

# load_board BOARD KERNEL: sets BOARD, KERNEL, OUT and the board variables.
# NVLAB_VARIANT=NAME builds the board's variant NAME instead (the kernel
# configured with qemu-boards/BOARD/config-NAME.fragment last, compiled
# with TOOLCHAIN_NAME of board.conf if set) into build/BOARD/KERNEL-NAME;
# the benchmarks use it to build both kernels alike.
load_board() {
	check_board "$1"
	check_kernel "$2"
	BOARD=$1 KERNEL=$2
	BOARD_DIR=$TOP/qemu-boards/$BOARD
	# shellcheck source=/dev/null
	. "$BOARD_DIR/board.conf"
	VARIANT=${NVLAB_VARIANT:-}
	OUT=$BUILD/$BOARD/$KERNEL${VARIANT:+-$VARIANT}
	KOUT=$OUT/kernel
	if [ "$KERNEL" = ours ]; then
		SRC=$BUILD/src/linux-6.1
		KMAKE_TC=$TOOLCHAIN_OURS
	else
		SRC=$BUILD/src/linux-6.12
		KMAKE_TC=$TOOLCHAIN_REF
	fi
	if [ -n "$VARIANT" ]; then
		[ -f "$BOARD_DIR/config-$VARIANT.fragment" ] ||
			die "variant '$VARIANT' of $BOARD: no qemu-boards/$BOARD/config-$VARIANT.fragment"
		local tc_var=TOOLCHAIN_${VARIANT^^}
		KMAKE_TC=${!tc_var:-$KMAKE_TC}
	fi
	mkdir -p "$OUT"
}

# kmake ARGS...: make in the board's kernel tree with its toolchain and ccache
kmake() {
	local tc=() cc
	if [ "$KMAKE_TC" = llvm ]; then
		tc=(LLVM=1 CC="ccache clang" HOSTCC="ccache clang")
	else
		cc=${KMAKE_TC#gcc:}
		tc=(CROSS_COMPILE="$cc" CC="ccache ${cc}gcc" HOSTCC="ccache gcc")
	fi
	# relative paths in ccache's keys: hits across clones in other places
	CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=true \
	make -C "$SRC" O="$KOUT" ARCH="$BOARD_ARCH" "${tc[@]}" \
		RUSTC=/usr/bin/rustc HOSTRUSTC=/usr/bin/rustc BINDGEN=/usr/bin/bindgen \
		-j"$(nproc)" "$@"
}

# The Rust toolchain of the host tools (eeprom-images/): a cargo from PATH
# when it is new enough, else Debian's current one unpacked into $HOST_RUST
# by scripts/host-rust.sh. The kernel build never uses it (kmake passes
# /usr/bin/rustc explicitly).
HOST_RUST=$BUILD/host-rust
host_rust_min() {
	sed -n 's/^rust-version *= *"\([0-9.]*\)"/\1/p' "$TOP/eeprom-images/nvmem-image/Cargo.toml"
}

# host_cargo ARGS...: run cargo of the host toolchain
host_cargo() {
	if [ -x "$HOST_RUST/usr/bin/cargo" ]; then
		local libdir
		libdir=$(echo "$HOST_RUST"/usr/lib/*-linux-gnu)
		PATH="$HOST_RUST/usr/bin:$PATH" \
			LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
			RUSTC="$HOST_RUST/usr/bin/rustc" RUSTDOC="$HOST_RUST/usr/bin/rustdoc" \
			cargo "$@"
	else
		cargo "$@"
	fi
}

# host_cargo_ok: the toolchain host_cargo would use builds, lints and
# formats the host tools (cargo >= rust-version, clippy and rustfmt there)
host_cargo_ok() {
	local v min
	v=$(host_cargo --version 2>/dev/null | awk '{print $2}') || return 1
	[ -n "$v" ] || return 1
	min=$(host_rust_min)
	[ "$(printf '%s\n%s\n' "$min" "${v%%-*}" | sort -V | head -n1)" = "$min" ] || return 1
	host_cargo clippy --version >/dev/null 2>&1 && host_cargo fmt --version >/dev/null 2>&1
}

# deb_version PACKAGE: the installed version of a Debian package (or "?")
deb_version() {
	dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "?"
}

# tree_kernelversion DIR: VERSION.PATCHLEVEL.SUBLEVEL of a kernel tree
tree_kernelversion() {
	awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2; print v "." p "." s; exit }' "$1/Makefile"
}

# source_version ours|ref: "<kernel version> (Debian linux-source-6.x <deb version>)"
# of the prepared tree, from what prepare-tree.sh recorded
source_version() {
	local f
	if [ "$1" = ours ]; then
		f=$BUILD/src/linux-6.1/.git/nvlab-source
	else
		f=$BUILD/src/linux-6.12/.nvlab-unpacked
	fi
	cat "$f" 2>/dev/null || echo "unknown (tree not prepared)"
}

# mirror_uri: the Debian mirror this machine's apt is configured with (never
# a hard-coded one), security archive excluded
mirror_uri() {
	local f u
	# deb822 sources first, then one-line sources
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		u=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f" |
			grep -v -- '-security' | head -n1)
		[ -n "$u" ] && { echo "$u"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		u=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' "$f" |
			grep -v -- '-security' | head -n1)
		[ -n "$u" ] && { echo "$u"; return; }
	done
}
