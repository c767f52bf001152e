#!/usr/bin/env bash
# Prepare a kernel source tree under build/src:
#   ours: linux-source-6.1 as a git repository, kernel-patches/series applied
#         with git am, then the layout drivers from layouts/ committed on top;
#   ref:  linux-source-6.12, unpacked as shipped (the upstream oracle).
# Idempotent: nothing is redone while the inputs are unchanged.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

which=${1:-ours}
check_kernel "$which"
mkdir -p "$BUILD/src"
git_id=(-c user.name="nvmem-lab" -c user.email="nvmem-lab@localhost" -c core.autocrlf=false)

if [ "$which" = ref ]; then
	tar=/usr/src/linux-source-6.12.tar.xz
	dst=$BUILD/src/linux-6.12
	[ -e "$tar" ] || die "$tar missing: run 'make setup' (installs linux-source-6.12)"
	if [ -e "$dst/.nvlab-unpacked" ]; then
		exit 0
	fi
	t0=$(date +%s)
	stage "tree ref" "unpacking $tar"
	rm -rf "$dst" && mkdir -p "$dst"
	tar -xf "$tar" -C "$dst" --strip-components=1
	touch "$dst/.nvlab-unpacked"
	stage "tree ref" "ready in $(elapsed "$t0"): $dst"
	exit 0
fi

tar=/usr/src/linux-source-6.1.tar.xz
dst=$BUILD/src/linux-6.1
log=$BUILD/logs/tree-ours.log
[ -e "$tar" ] || die "$tar missing: run 'make setup' (or apt-get install linux-source-6.1)"

# What the patched tree depends on: the series and the layout sources.
inputs_hash() {
	(cd "$TOP" && find kernel-patches layouts -type f -print0 | sort -z |
		xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}
want=$(inputs_hash)
if [ -e "$dst/.git/nvlab-inputs" ] && [ "$(cat "$dst/.git/nvlab-inputs")" = "$want" ]; then
	exit 0
fi

t0=$(date +%s)
mkdir -p "$BUILD/logs"
: >"$log"
if [ ! -e "$dst/.git/nvlab-base-rev" ]; then
	stage "tree ours" "unpacking $tar (log: $log)"
	rm -rf "$dst" && mkdir -p "$dst"
	tar -xf "$tar" -C "$dst" --strip-components=1
	stage "tree ours" "creating the base git repository"
	run_logged "tree ours" "$log" git -C "$dst" init -q
	run_logged "tree ours" "$log" git -C "$dst" add -A -f
	run_logged "tree ours" "$log" git "${git_id[@]}" -C "$dst" commit -q -m "Debian linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)"
	git -C "$dst" tag -f nvlab-base >/dev/null
	git -C "$dst" rev-parse HEAD >"$dst/.git/nvlab-base-rev"
else
	stage "tree ours" "inputs changed: resetting to the base"
	git -C "$dst" am --abort >/dev/null 2>&1 || true
	run_logged "tree ours" "$log" git -C "$dst" reset -q --hard nvlab-base
	run_logged "tree ours" "$log" git -C "$dst" clean -qfdx
fi

n=0
if [ -f "$TOP/kernel-patches/series" ]; then
	while read -r p; do
		case "$p" in "" | \#*) continue ;; esac
		[ -f "$TOP/kernel-patches/$p" ] || die "kernel-patches/series names missing file '$p'"
		if ! git "${git_id[@]}" -C "$dst" am -q --keep-cr "$TOP/kernel-patches/$p" >>"$log" 2>&1; then
			git -C "$dst" am --abort >/dev/null 2>&1 || true
			tail -n 20 "$log" >&2
			die "patch $p does not apply (log: $log)"
		fi
		n=$((n + 1))
	done <"$TOP/kernel-patches/series"
fi
stage "tree ours" "applied $n patch(es) from kernel-patches/series"

# Layout drivers: layouts/drivers -> drivers/nvmem/layouts,
# layouts/bindings -> Documentation/devicetree/bindings/nvmem/layouts.
# layouts/: the bindings, then the drivers, each its own commit with the
# message in layouts/<dir>.commit, authored like the series
name=$(git -C "$TOP" config user.name 2>/dev/null || echo nvmem-lab)
email=$(git -C "$TOP" config user.email 2>/dev/null || echo nvmem-lab@localhost)
for pair in "bindings:Documentation/devicetree/bindings/nvmem/layouts" "drivers:drivers/nvmem/layouts"; do
	sub=${pair%%:*}
	from=$TOP/layouts/$sub
	to=$dst/${pair#*:}
	[ -d "$from" ] || continue
	mkdir -p "$to"
	cp -r "$from"/. "$to"/
	git -C "$dst" add -f "${pair#*:}"
	git -C "$dst" diff --cached --quiet && continue
	run_logged "tree ours" "$log" git -c user.name="$name" -c user.email="$email" \
		-c core.autocrlf=false -C "$dst" commit -q -s -F "$TOP/layouts/$sub.commit"
	stage "tree ours" "committed layouts/$sub into the tree"
done
echo "$want" >"$dst/.git/nvlab-inputs"
stage "tree ours" "ready in $(elapsed "$t0"): $dst"
