"""tests/rust-6.4/examples.txt holds the doc examples of the Linux 6.4 Rust
commits verbatim (scripts/extract-6.4-examples.py): checked against the
commits wherever they are at hand (../shared/upstream-6.4 or
$NVLAB_UPSTREAM_64), so the file cannot drift into our own edits."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
UPSTREAM = Path(os.environ.get("NVLAB_UPSTREAM_64", TOP.parent / "shared" / "upstream-6.4"))


@pytest.mark.timeout(60)
def test_examples_file_is_the_upstream_text():
    if not UPSTREAM.is_dir():
        pytest.skip(f"no upstream 6.4 commits at {UPSTREAM} to compare with")
    r = subprocess.run([sys.executable, str(TOP / "scripts" / "extract-6.4-examples.py"),
                        str(UPSTREAM), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.timeout(60)
def test_examples_file_has_the_six_examples():
    heads = [line for line in (TOP / "tests" / "rust-6.4" / "examples.txt").read_text().splitlines()
             if line.startswith("@@ ")]
    assert len(heads) == 6, heads
    assert {h.split()[2] for h in heads} == {
        "rust/kernel/sync/lock/mutex.rs", "rust/kernel/sync/lock/spinlock.rs",
        "rust/kernel/sync/locked_by.rs", "rust/kernel/sync/condvar.rs"}
