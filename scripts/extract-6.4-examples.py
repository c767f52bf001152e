#!/usr/bin/env python3
"""Collect the doc examples of the upstream Linux 6.4 Rust commits.

Usage: extract-6.4-examples.py [UPSTREAM_DIR] [--check]

Reads the `git show` files of the 6.4 commits (default: ../shared/upstream-6.4
next to the repository, or $NVLAB_UPSTREAM_64), takes every ``` block of the
doc comments their added .rs lines contain, and writes them unchanged to
tests/rust-6.4/examples.txt, which scripts/rust-doctests.py compiles into
the in-guest doc-test module next to our own examples. They are inputs
written by others, kept verbatim on purpose: code written for 6.4 must
build and run on our series as it is. With --check, only compares the file
with a fresh extraction (exit 1 when they differ).
"""
import os
import re
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
OUT = TOP / "tests" / "rust-6.4" / "examples.txt"
HEADER = """\
# The doc examples of the Linux 6.4 Rust commits (pin-init and locking API),
# verbatim, as scripts/extract-6.4-examples.py took them from the commits.
# Upstream code (GPL-2.0), kept as test input: scripts/rust-doctests.py runs
# each in the guest, unchanged, to show that 6.4 code works on the series.
# A block starts with "@@ <commit file> <source file> #<n>".
"""


def blocks(patch):
    current = None
    block = None
    n = 0
    for line in patch.read_text().splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
            n = 0
            continue
        if not current or not current.endswith(".rs") or not line.startswith("+"):
            block = None if not line.startswith("+") else block
            continue
        m = re.match(r"\+\s*//[/!] ?(.*)$", line)
        if not m:
            block = None
            continue
        text = m.group(1)
        if block is None:
            f = re.match(r"```(.*)$", text.strip())
            if f:
                attrs = {a.strip() for a in f.group(1).split(",") if a.strip()}
                block = [] if not attrs or attrs <= {"rust"} else "skip"
            continue
        if text.strip() == "```":
            if block != "skip":
                n += 1
                yield current, n, block
            block = None
            continue
        if block != "skip":
            block.append(text)


def extract(src):
    out = [HEADER]
    for patch in sorted(src.glob("0*-*rust*.patch")):
        for path, n, lines in blocks(patch):
            out.append(f"@@ {patch.name} {path} #{n}\n")
            out.extend(f"{line}\n" for line in lines)
    return "".join(out)


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    default = os.environ.get("NVLAB_UPSTREAM_64", str(TOP.parent / "shared" / "upstream-6.4"))
    src = Path(args[0] if args else default)
    if not src.is_dir():
        sys.exit(f"extract-6.4-examples: no upstream 6.4 commits in {src}")
    text = extract(src)
    if "--check" in sys.argv:
        if OUT.read_text() != text:
            sys.exit(f"extract-6.4-examples: {OUT} differs from the examples in {src}")
        print(f"extract-6.4-examples: {OUT.name} matches {src}")
        return
    OUT.write_text(text)
    print(f"extract-6.4-examples: {text.count(chr(10) + '@@ ')} example(s) from {src} -> {OUT}")


if __name__ == "__main__":
    main()
