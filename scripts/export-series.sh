#!/usr/bin/env bash
# export-series.sh: the complete series (kernel-patches/ plus the layout
# drivers from layouts/) as git format-patch files in build/series/, with a
# series file, ready for `git am` on any linux-source-6.1 tree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$TOP/scripts/prepare-tree.sh" ours
src=$BUILD/src/linux-6.1
dst=$BUILD/series
rm -rf "$dst" && mkdir -p "$dst"
git -C "$src" format-patch -q --no-signature -o "$dst" nvlab-base..HEAD
base=$(source_version ours)
{
	echo "# against Linux $base"
	(cd "$dst" && ls -1 -- *.patch 2>/dev/null || true)
} >"$dst/series"
stage series "$(grep -c '\.patch$' "$dst/series") patch(es) against Linux $base in $dst (apply: git am $dst/*.patch)"
