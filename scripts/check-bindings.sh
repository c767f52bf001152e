#!/usr/bin/env bash
# check-bindings.sh [DTB...]: the nvmem layout binding schemas of our tree
# (kernel-patches/ + layouts/bindings/) with dtschema:
#   - every schema passes dt-doc-validate (meta-schema);
#   - every schema's examples compile and pass dt-validate;
#   - every DTB given (the boards' device trees with their dts/ overlays)
#     passes dt-validate against the layout schemas;
#   - so does each real board's DTB (tests/env/real/, scripts/real_dtb.py).
# dt-validate reports problems on its output but exits 0: any report fails.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$TOP/scripts/prepare-tree.sh" ours
bindings=$BUILD/src/linux-6.1/Documentation/devicetree/bindings
layouts=$bindings/nvmem/layouts
tmp=$BUILD/bindings
rm -rf "$tmp" && mkdir -p "$tmp"
fail=0

# validate FILE.dtb: layout schemas only; prints what dt-validate reports
validate() {
	"$VENV/bin/dt-validate" -s "$tmp/processed.json" -l nvmem/layouts "$1" 2>&1
}

# check WHAT FILE.dtb: validate, report under WHAT, note a failure
check() {
	local out
	out=$(validate "$2")
	if [ -n "$out" ]; then
		echo "[bindings] $1: $out" >&2
		fail=1
	fi
}

for s in "$layouts"/*.yaml "$bindings/nvmem/nvmem.yaml"; do
	if ! "$VENV/bin/dt-doc-validate" -u "$bindings" "$s" >"$tmp/doc.log" 2>&1 || [ -s "$tmp/doc.log" ]; then
		echo "[bindings] ${s#"$bindings"/}: dt-doc-validate:" >&2
		cat "$tmp/doc.log" >&2
		fail=1
	fi
done
"$VENV/bin/dt-mk-schema" -j -o "$tmp/processed.json" "$layouts" || die "dt-mk-schema failed"

n=0
for s in "$layouts"/*.yaml; do
	name=$(basename "$s" .yaml)
	"$VENV/bin/dt-extract-example" "$s" >"$tmp/$name.dts"
	if ! dtc -q -I dts -O dtb -o "$tmp/$name.dtb" "$tmp/$name.dts"; then
		echo "[bindings] $name: the example does not compile" >&2
		fail=1
		continue
	fi
	check "$name: example" "$tmp/$name.dtb"
	n=$((n + 1))
done

# a board's device tree as the board has it: without the hostile images'
# overlay (scripts/hostile.py), whose cells break the binding on purpose
# (a bit offset past 7, no bits): the DTB rebuilt from its recipe without it
hostile=0
for dtb in "$@"; do
	recipe=$dtb.recipe
	if [ -e "$recipe" ] && grep -q '/hostile\.dtbo$' "$recipe"; then
		dir=$(dirname "$dtb")
		own=$tmp/$(basename "$(dirname "$dir")")-$(basename "$dir")-without-hostile.dtb
		mapfile -t dtbos < <(tail -n +2 "$recipe" | grep -v '/hostile\.dtbo$' | grep .)
		fdtoverlay -i "$dir/base.dtb" -o "$own" "${dtbos[@]}" || die "fdtoverlay for $own failed"
		check "$dtb (hostile overlay left out)" "$own"
		hostile=$((hostile + 1))
		continue
	fi
	check "$dtb" "$dtb"
done
# the real boards' device trees (tests/env/real/): each board's own DTS
# with our overlay for it (its targets must exist there), valid too
real=0
for env in "$TOP"/tests/env/real/*.yaml; do
	name=$(basename "$env" .yaml)
	if ! "$VENV/bin/python" "$TOP/scripts/real_dtb.py" "$env" "$tmp/real-$name.dtb" >/dev/null; then
		fail=1
		continue
	fi
	check "real board $name" "$tmp/real-$name.dtb"
	real=$((real + 1))
done
[ "$fail" = 0 ] || die "binding check failed"
stage bindings "$n schema(s) and their examples valid; $# board DTB(s) ($hostile without the hostile overlay) and $real real-board DTB(s) valid against them"
