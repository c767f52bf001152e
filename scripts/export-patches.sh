#!/usr/bin/env bash
# export-patches.sh [TREE]: write the commits of a working tree of our
# kernel (default build/src/linux-6.1; any worktree of it, such as one a
# rebase happened in) back into kernel-patches/: each commit that is not a
# layouts/ group becomes a numbered patch (git format-patch --zero-commit, so
# unchanged commits give unchanged files), and kernel-patches/series lists
# them with the "layouts/<group>" lines where the tree has those commits. A
# layouts/ group commit is recognised by its subject (the first line of
# layouts/<group>.commit); its files must already be in layouts/.
# Run scripts/prepare-tree.sh afterwards: it rebuilds the tree from the
# export and stops if anything differs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tree=${1:-$BUILD/src/linux-6.1}
git -C "$tree" rev-parse --verify -q nvlab-base >/dev/null || die "$tree: no nvlab-base tag (not our kernel tree)"
[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] || die "$tree has uncommitted changes"

declare -A group_of
for msg in "$TOP"/layouts/*.commit; do
	g=$(basename "$msg" .commit)
	group_of["$(head -n1 "$msg")"]=$g
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$tree" format-patch -q --zero-commit --no-signature -o "$tmp" nvlab-base..HEAD
entries=()
for f in "$tmp"/*.patch; do
	subject=$(git mailinfo /dev/null /dev/null <"$f" | sed -n 's/^Subject: //p')
	if [ -n "${group_of[$subject]:-}" ]; then
		entries+=("layouts/${group_of[$subject]}")
		rm "$f"
	else
		entries+=("$(basename "$f")")
	fi
done

rm -f "$TOP"/kernel-patches/0*.patch
cp "$tmp"/*.patch "$TOP/kernel-patches/"
{
	grep '^#' "$TOP/kernel-patches/series"
	printf '%s\n' "${entries[@]}"
} >"$tmp/series"
mv "$tmp/series" "$TOP/kernel-patches/series"
stage export "$(ls "$TOP"/kernel-patches/0*.patch | wc -l) patch(es) and $(grep -c '^layouts/' "$TOP/kernel-patches/series") layout group(s) from $tree in kernel-patches/series"
