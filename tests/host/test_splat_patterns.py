"""tests/splat-patterns.txt against kernel splat lines and clean boot logs.

data/splat-samples.txt: splat lines as the 6.1/6.12 kernels print them.
data/boot-<arch>-<board>-<kernel>.log: the start of the labgrid console log
(console_main) of a passing `make test` run: firmware, kernel boot, login
and the first commands of the tests; our 6.1 on both boards and the 6.12
reference on riscv64-virt."""
import re
from pathlib import Path

import pytest

import lab

DATA = Path(__file__).resolve().parent / "data"


def _lines(path):
    return [line for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


SAMPLES = _lines(DATA / "splat-samples.txt")
BOOT_LOGS = sorted(DATA.glob("boot-*.log"))


def test_every_pattern_catches_a_sample():
    idle = [p for p in lab.splat_pattern_lines() if not any(re.search(p, s) for s in SAMPLES)]
    assert not idle, f"patterns without a sample line in data/splat-samples.txt: {idle}"


def test_every_sample_is_caught():
    rx = lab.splat_patterns()
    missed = [s for s in SAMPLES if not rx.search(s)]
    assert not missed, "splat lines no pattern catches:\n" + "\n".join(missed)


def test_boot_logs_are_real_boots():
    """The clean logs below are worth something only if they are whole
    boots to a shell, of both architectures and both kernels."""
    assert {"riscv64", "arm"} <= {p.stem.split("-")[1] for p in BOOT_LOGS}, BOOT_LOGS
    versions = set()
    for log in BOOT_LOGS:
        text = log.read_text(errors="replace")
        m = re.search(r"Linux version (6\.\d+)\.", text)
        assert m, log.name
        versions.add(m.group(1))
        assert "Run /init as init process" in text, log.name
        assert len(text.splitlines()) > 100, log.name
    assert versions == {"6.1", "6.12"}, versions


@pytest.mark.parametrize("log", BOOT_LOGS, ids=[p.name for p in BOOT_LOGS])
def test_clean_boot_has_no_splat(log):
    rx = lab.splat_patterns()
    bad = [f"{n}: {line}" for n, line in enumerate(log.read_text(errors="replace").splitlines(), 1)
           if rx.search(line)]
    assert not bad, f"{log.name}: normal boot lines taken for splats:\n" + "\n".join(bad)


def test_blank_and_comment_lines_are_not_patterns(tmp_path):
    f = tmp_path / "patterns.txt"
    f.write_text("# a comment\n\nBUG:\n   \n\t\n  # indented comment\n  Kernel panic  \n")
    assert lab.splat_pattern_lines(f) == ["BUG:", "Kernel panic"]
    rx = lab.splat_patterns(f)
    assert rx.search("[    7.1] Kernel panic - not syncing: Fatal exception")
    assert rx.search("[    4.5] BUG: KASAN: slab-out-of-bounds in f+0x1/0x2")
    for line in ("[    0.000000] Linux version 6.1.0", "", "Run /init as init process",
                 "# a comment"):
        assert not rx.search(line), repr(line)


@pytest.mark.parametrize("text", ["BUG:\n.*\n", "BUG:\n(WARNING:)?\n", "# only a comment\n\n"])
def test_patterns_that_match_everything_are_refused(tmp_path, text):
    f = tmp_path / "patterns.txt"
    f.write_text(text)
    with pytest.raises(ValueError):
        lab.splat_patterns(f)
