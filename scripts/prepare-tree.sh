#!/usr/bin/env bash
# Prepare a kernel source tree under build/src:
#   ours: linux-source-6.1 as a git repository, kernel-patches/series applied
#         in order: patches with git am, "layouts/<group>" lines as commits
#         of layout drivers and bindings from layouts/;
#   ref:  linux-source-6.12, unpacked as shipped (the upstream oracle).
# Idempotent: nothing is redone while the inputs are unchanged. The Debian
# source package's version is recorded with the tree: a new one (Debian
# served a newer linux-source-6.x) is announced and the tree rebuilt.
#
# The patched tree is the series, nothing else: local commits or edits in
# build/src/linux-6.1 that are not in kernel-patches/ (or layouts/) stop the
# run with what differs and how to export or discard it, instead of being
# tested or wiped silently.
#   prepare-tree.sh ours|ref
#   prepare-tree.sh --discard     drop local changes of build/src/linux-6.1
#   NVLAB_LOCAL_TREE=1            test the local changes as they are (warned)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

which=ours
discard=
for arg in "$@"; do
	case "$arg" in
	--discard) discard=1 ;;
	*) which=$arg ;;
	esac
done
[ -z "$discard" ] || [ "$which" = ours ] || die "--discard applies to our tree (build/src/linux-6.1) only"
check_kernel "$which"
mkdir -p "$BUILD/src"
git_id=(-c user.name="nvmem-lab" -c user.email="nvmem-lab@localhost" -c core.autocrlf=false)

if [ "$which" = ref ]; then
	pkg=linux-source-6.12
	tar=/usr/src/$pkg.tar.xz
	dst=$BUILD/src/linux-6.12
	[ -e "$tar" ] || die "$tar missing: run 'make setup' (installs $pkg)"
	debv=$(deb_version "$pkg")
	if [ -e "$dst/.nvlab-unpacked" ]; then
		had=$(cat "$dst/.nvlab-unpacked")
		case "$had" in
		*"($pkg $debv)") exit 0 ;;
		esac
		stage "tree ref" "Debian's $pkg changed: tree made from ${had:-an unknown version}, installed now $debv: unpacking again"
	fi
	t0=$(date +%s)
	stage "tree ref" "unpacking $tar"
	rm -rf "$dst" && mkdir -p "$dst"
	tar -xf "$tar" -C "$dst" --strip-components=1
	echo "$(tree_kernelversion "$dst") ($pkg $debv)" >"$dst/.nvlab-unpacked"
	stage "tree ref" "ready in $(elapsed "$t0"): Linux $(source_version ref) in $dst"
	exit 0
fi

pkg=linux-source-6.1
tar=/usr/src/$pkg.tar.xz
dst=$BUILD/src/linux-6.1
log=$BUILD/logs/tree-ours.log
[ -e "$tar" ] || die "$tar missing: run 'make setup' (or apt-get install $pkg)"
debv=$(deb_version "$pkg")

# What the patched tree depends on: the series and the layout sources (not
# their READMEs).
inputs_hash() {
	(cd "$TOP" && find kernel-patches layouts -type f ! -name README.md -print0 | sort -z |
		xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}

# local_changes: print what the tree has that the series does not, nothing
# when it is exactly as prepare-tree.sh left it (or its commits were
# exported to kernel-patches/ since, compared by patch ID).
local_changes() {
	local prepared head
	prepared=$(cat "$dst/.git/nvlab-prepared-head" 2>/dev/null || true)
	git -C "$dst" status --porcelain --untracked-files=normal | sed 's/^/  uncommitted: /'
	[ -e "$dst/.git/MERGE_HEAD" ] || [ -d "$dst/.git/rebase-apply" ] || [ -d "$dst/.git/rebase-merge" ] &&
		echo "  a git am/rebase/merge is in progress"
	head=$(git -C "$dst" rev-parse HEAD)
	[ -n "$prepared" ] && [ "$head" = "$prepared" ] && return 0
	# commits the prepared tree did not have, unless the series has them now
	local ids c id
	ids=$(for f in "$TOP"/kernel-patches/*.patch; do git patch-id --stable <"$f"; done | cut -d' ' -f1)
	for c in $(git -C "$dst" rev-list --reverse "nvlab-base..HEAD"); do
		if [ -n "$prepared" ] && git -C "$dst" merge-base --is-ancestor "$c" "$prepared" 2>/dev/null; then
			continue
		fi
		id=$(git -C "$dst" show "$c" | git patch-id --stable | cut -d' ' -f1)
		grep -qxF "$id" <<<"$ids" && continue
		# a commit of layouts/ files only: exported when layouts/ has them
		if ! git -C "$dst" diff-tree --no-commit-id --name-only -r "$c" |
			grep -qvE '^(drivers/nvmem/layouts|Documentation/devicetree/bindings/nvmem/layouts)/' &&
			layouts_match; then
			continue
		fi
		echo "  commit not in kernel-patches/: $(git -C "$dst" log -1 --format='%h %s' "$c")"
	done
	if [ -n "$prepared" ] && ! git -C "$dst" merge-base --is-ancestor "$prepared" HEAD 2>/dev/null; then
		echo "  history rewritten since preparation (HEAD does not contain the prepared $(git -C "$dst" rev-parse --short "$prepared"))"
	fi
	return 0
}

# layouts_match: the tree's layout drivers are those of layouts/drivers,
# and its layout bindings directory holds those of layouts/bindings (and
# those the numbered patches add)
layouts_match() {
	local f
	diff -rq "$TOP/layouts/drivers" "$dst/drivers/nvmem/layouts" >/dev/null 2>&1 || return 1
	for f in "$TOP"/layouts/bindings/*; do
		cmp -s "$f" "$dst/Documentation/devicetree/bindings/nvmem/layouts/${f##*/}" || return 1
	done
}

if [ -e "$dst/.git/nvlab-base-rev" ]; then
	# trees prepared before the head was recorded: their HEAD is the
	# prepared one while the inputs are unchanged
	if [ ! -e "$dst/.git/nvlab-prepared-head" ] && [ "$(cat "$dst/.git/nvlab-inputs" 2>/dev/null)" = "$(inputs_hash)" ]; then
		git -C "$dst" rev-parse HEAD >"$dst/.git/nvlab-prepared-head"
	fi
	changes=$(local_changes)
	if [ -n "$changes" ]; then
		if [ -n "$discard" ]; then
			stage "tree ours" "discarding local changes of $dst:"
			echo "$changes"
			rm -f "$dst/.git/nvlab-inputs"
		elif [ "${NVLAB_LOCAL_TREE:-}" = 1 ]; then
			stage "tree ours" "WARNING: testing $dst with local changes not in the series (NVLAB_LOCAL_TREE=1):"
			echo "$changes"
			exit 0
		else
			echo "$changes" >&2
			die "$dst has changes that are not in kernel-patches/ (above); it is neither tested nor wiped.
  keep them:    git -C $dst format-patch -o kernel-patches/ <first>^..<last>, list the files in
                kernel-patches/series (layout driver edits: copy them to layouts/), then run again;
  test as is:   NVLAB_LOCAL_TREE=1 make …
  discard them: scripts/prepare-tree.sh --discard"
		fi
	fi
	had=$(cat "$dst/.git/nvlab-source" 2>/dev/null || true)
	case "$had" in
	*"($pkg $debv)") ;;
	*)
		stage "tree ours" "Debian's $pkg changed: tree made from ${had:-an unknown version}, installed now $debv: rebuilding the tree"
		rm -rf "$dst"
		;;
	esac
fi

want=$(inputs_hash)
if [ -z "$discard" ] && [ -e "$dst/.git/nvlab-inputs" ] && [ "$(cat "$dst/.git/nvlab-inputs")" = "$want" ]; then
	exit 0
fi

t0=$(date +%s)
mkdir -p "$BUILD/logs"
: >"$log"
if [ ! -e "$dst/.git/nvlab-base-rev" ]; then
	stage "tree ours" "unpacking $tar ($pkg $debv, log: $log)"
	rm -rf "$dst" && mkdir -p "$dst"
	tar -xf "$tar" -C "$dst" --strip-components=1
	stage "tree ours" "creating the base git repository"
	run_logged "tree ours" "$log" git -C "$dst" init -q
	run_logged "tree ours" "$log" git -C "$dst" add -A -f
	run_logged "tree ours" "$log" git "${git_id[@]}" -C "$dst" commit -q -m "Debian $pkg $debv"
	git -C "$dst" tag -f nvlab-base >/dev/null
	git -C "$dst" rev-parse HEAD >"$dst/.git/nvlab-base-rev"
	echo "$(tree_kernelversion "$dst") ($pkg $debv)" >"$dst/.git/nvlab-source"
else
	stage "tree ours" "inputs changed: resetting to the base"
	git -C "$dst" am --abort >/dev/null 2>&1 || true
	run_logged "tree ours" "$log" git -C "$dst" reset -q --hard nvlab-base
	run_logged "tree ours" "$log" git -C "$dst" clean -qfdx
fi
rm -f "$dst/.git/nvlab-inputs" "$dst/.git/nvlab-prepared-head"

# Layout drivers and bindings live in layouts/ as files; a series line
# "layouts/<group>" commits the files that layouts/<group>.files lists
# (paths under layouts/: bindings/* go to the bindings' nvmem/layouts
# directory, drivers/* to drivers/nvmem/layouts) with the message
# layouts/<group>.commit, authored and signed off like the rest of the
# series. drivers/Kconfig and drivers/Makefile belong to no group: each
# commit gets them cut down to the entries whose sources it has so far.
name=$(git -C "$TOP" config user.name 2>/dev/null || echo nvmem-lab)
email=$(git -C "$TOP" config user.email 2>/dev/null || echo nvmem-lab@localhost)
layouts_done=$BUILD/logs/tree-ours-layouts.list
: >"$layouts_done"
layout_path() {
	case "$1" in
	bindings/*) echo "Documentation/devicetree/bindings/nvmem/layouts/${1#bindings/}" ;;
	drivers/*) echo "drivers/nvmem/layouts/${1#drivers/}" ;;
	*) return 1 ;;
	esac
}
# compose_layouts_build: drivers/Makefile without the lines building
# objects whose source is not committed yet, drivers/Kconfig without the
# symbols that no remaining Makefile line uses
compose_layouts_build() {
	local to=$dst/drivers/nvmem/layouts
	awk -v done="$layouts_done" '
		BEGIN { while ((getline f < done) > 0) have[f] = 1 }
		/^obj-/ && /\+=/ {
			keep = 1
			n = split(substr($0, index($0, "+=") + 2), objs, " ")
			for (i = 1; i <= n; i++) {
				o = objs[i]
				if (o ~ /\.dtb\.o$/) { sub(/\.dtb\.o$/, "", o); ok = ("drivers/" o ".dts" in have) }
				else { sub(/\.o$/, "", o); ok = ("drivers/" o ".c" in have) || ("drivers/" o ".rs" in have) }
				if (!ok) keep = 0
			}
			if (!keep) next
		}
		{ print }' "$TOP/layouts/drivers/Makefile" >"$to/Makefile"
	awk -v mk="$to/Makefile" '
		BEGIN { while ((getline l < mk) > 0) used = used l "\n" }
		/^(menu)?config / { skip = (index(used, "$(CONFIG_" $2 ")") == 0) }
		/^(menu |endmenu|if |endif|source |comment )/ { skip = 0 }
		!skip { print }' "$TOP/layouts/drivers/Kconfig" >"$to/Kconfig"
	# no blank line left at the end of either
	sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$to/Makefile" "$to/Kconfig"
}
commit_layouts() {
	local g=$1 f to drivers=
	[ -f "$TOP/layouts/$g.commit" ] && [ -f "$TOP/layouts/$g.files" ] ||
		die "kernel-patches/series names layouts/$g: layouts/$g.commit and layouts/$g.files must exist"
	while read -r f; do
		case "$f" in "" | \#*) continue ;; esac
		to=$(layout_path "$f") || die "layouts/$g.files: $f is neither under bindings/ nor drivers/"
		[ -f "$TOP/layouts/$f" ] || die "layouts/$g.files names missing file layouts/$f"
		grep -qxF "$f" "$layouts_done" && die "layouts/$f is listed by two groups (the second: $g)"
		mkdir -p "$(dirname "$dst/$to")"
		cp "$TOP/layouts/$f" "$dst/$to"
		echo "$f" >>"$layouts_done"
		case "$f" in drivers/*) drivers=1 ;; esac
	done <"$TOP/layouts/$g.files"
	[ -z "$drivers" ] || compose_layouts_build
	git -C "$dst" add -f Documentation/devicetree/bindings/nvmem drivers/nvmem/layouts
	git -C "$dst" diff --cached --quiet && die "layouts/$g adds nothing"
	run_logged "tree ours" "$log" git -c user.name="$name" -c user.email="$email" \
		-c core.autocrlf=false -C "$dst" commit -q -s -F "$TOP/layouts/$g.commit"
}

n=0
if [ -f "$TOP/kernel-patches/series" ]; then
	while read -r p; do
		case "$p" in "" | \#*) continue ;; esac
		case "$p" in
		layouts/*)
			commit_layouts "${p#layouts/}"
			n=$((n + 1))
			continue
			;;
		esac
		[ -f "$TOP/kernel-patches/$p" ] || die "kernel-patches/series names missing file '$p'"
		if ! git "${git_id[@]}" -C "$dst" am -q --keep-cr "$TOP/kernel-patches/$p" >>"$log" 2>&1; then
			git -C "$dst" am --abort >/dev/null 2>&1 || true
			tail -n 20 "$log" >&2
			die "patch $p does not apply on Linux $(source_version ours) (log: $log)"
		fi
		n=$((n + 1))
	done <"$TOP/kernel-patches/series"
fi
# every file of layouts/ went into the tree with some group
for f in "$TOP"/layouts/bindings/* "$TOP"/layouts/drivers/*; do
	f=${f#"$TOP"/layouts/}
	case "$f" in drivers/Kconfig | drivers/Makefile) continue ;; esac
	grep -qxF "$f" "$layouts_done" ||
		die "layouts/$f is in no group: list it in one of layouts/*.files (and the group in kernel-patches/series)"
done
layouts_match || die "the tree's layout directories differ from layouts/ after the series (log: $log)"
stage "tree ours" "applied $n patch(es) and layout commits from kernel-patches/series"
git -C "$dst" rev-parse HEAD >"$dst/.git/nvlab-prepared-head"
echo "$want" >"$dst/.git/nvlab-inputs"
stage "tree ours" "ready in $(elapsed "$t0"): Linux $(source_version ours) + the series in $dst"
