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
import importlib.util
import os
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
# the doc-block reader of scripts/rust-doctests.py (a file name with a dash)
_spec = importlib.util.spec_from_file_location("rust_doctests", TOP / "scripts" / "rust-doctests.py")
DOCTESTS = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(DOCTESTS)
OUT = TOP / "tests" / "rust-6.4" / "examples.txt"
HEADER = """\
# The doc examples of the Linux 6.4 Rust commits (pin-init and locking API),
# verbatim, as scripts/extract-6.4-examples.py took them from the commits.
# Upstream code (GPL-2.0), kept as test input: scripts/rust-doctests.py runs
# each in the guest, unchanged, to show that 6.4 code works on the series.
# A block starts with "@@ <commit file> <source file> #<n>".
"""


def added_rust_lines(patch):
    """{file: its lines as the patch shows them, added lines with the "+"
    taken off and every other line blank (so no doc block spans them)},
    for the .rs files the patch touches."""
    files, current = {}, None
    for line in patch.read_text().splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") and line.endswith(".rs") else None
            if current:
                files.setdefault(current, [])
        elif current:
            files[current].append(line[1:] if line.startswith("+") else "")
    return files


def blocks(patch):
    for path, lines in added_rust_lines(patch).items():
        for n, (_, block) in enumerate(DOCTESTS.doc_examples(lines), 1):
            yield path, n, block


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
