"""scripts/lib.sh run_progress: the progress of long builds, on a new machine
(no earlier build to estimate from), on a terminal and in a log."""
import os
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]

# a stand-in for kbuild: N object lines, a little apart so that the
# progress loop sees it running
FAKE_BUILD = 'for i in $(seq 1 {n}); do echo "  CC      obj$i.o"; sleep 0.05; done; exit {rc}'


def run_progress(build, log, n=20, rc=0, tty=False):
    """run_progress over FAKE_BUILD from a script of its own; tty: under a
    pseudo-terminal, as a user's shell runs it (util-linux script)"""
    sh = Path(build) / "run-progress.sh"
    sh.parent.mkdir(parents=True, exist_ok=True)
    sh.write_text(f"set -euo pipefail\nBUILD={build}\n. {TOP}/scripts/lib.sh\n"
                  f"run_progress kernel-test {log} bash -c '{FAKE_BUILD.format(n=n, rc=rc)}'\n"
                  "echo 'after: ok'\n")
    cmd = ["script", "-qec", f"bash {sh}", "/dev/null"] if tty else ["bash", str(sh)]
    env = dict(os.environ, TERM="dumb")
    # bytes, decoded by hand: text mode would turn the updating line's
    # carriage returns into newlines
    r = subprocess.run(cmd, capture_output=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    r.stdout, r.stderr = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    return r


@pytest.mark.timeout(60)
def test_first_build_on_a_new_machine(tmp_path):
    """nothing built before, nothing to estimate from: the build still runs
    and its object count is kept for the next one"""
    build = tmp_path / "build"
    build.mkdir()
    log = build / "b" / "ours" / "kernel.log"
    r = run_progress(build, log)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "after: ok" in r.stdout
    assert (Path(str(log) + ".objects")).read_text().strip() == "20"


@pytest.mark.timeout(60)
def test_terminal_shows_objects_out_of_the_last_build(tmp_path):
    build = tmp_path / "build"
    log = build / "b" / "ours" / "kernel.log"
    log.parent.mkdir(parents=True)
    Path(str(log) + ".objects").write_text("40\n")
    r = run_progress(build, log, n=20, tty=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # one updating line: carriage returns, a count out of 40, a percentage
    assert "\r[kernel-test] " in r.stdout
    assert "/40 objects (" in r.stdout
    # a smaller build does not lower the expected total
    assert Path(str(log) + ".objects").read_text().strip() == "40"


@pytest.mark.timeout(60)
def test_first_build_estimates_from_another_tree(tmp_path):
    build = tmp_path / "build"
    other = build / "b" / "ref" / "kernel.log.objects"
    other.parent.mkdir(parents=True)
    other.write_text("30\n")
    log = build / "b" / "ours" / "kernel.log"
    r = run_progress(build, log, n=10, tty=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "/~30 objects (~" in r.stdout
    # its own count replaces the estimate
    assert Path(str(log) + ".objects").read_text().strip() == "10"


@pytest.mark.timeout(60)
def test_not_a_terminal_stays_quiet_and_failure_shows_the_tail(tmp_path):
    build = tmp_path / "build"
    log = build / "b" / "ours" / "kernel.log"
    r = run_progress(build, log, n=5, rc=3)
    assert r.returncode != 0
    assert "after: ok" not in r.stdout
    assert "\r" not in r.stdout  # no updating line in a log
    assert "[kernel-test] FAILED" in r.stderr
    assert f"last lines of {log}" in r.stderr
    assert "obj5.o" in r.stderr
