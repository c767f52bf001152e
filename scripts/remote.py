#!/usr/bin/env python3
"""remote.py test BOARD KERNEL | power on|off STATE_DIR: the boot tests
through a labgrid remote place, on this machine's loopback.

`test` starts a labgrid coordinator and an exporter (labgrid 26, gRPC) on
127.0.0.1, exports the board's console as a NetworkSerialPort, creates the
place nvlab-BOARD and acquires it, shows that a second client cannot take
it while it is in use, then runs the unchanged boot tests (tests/boot)
against a RemotePlace environment, and compares every test's outcome with
the local session of the same board and kernel (build/BOARD/KERNEL/
test-logs/junit.xml): a difference fails. Everything it started is stopped
at the end, also on a failure or an interrupt.

The board behind the place is the QEMU that tests/env/BOARD.yaml describes
(its command line is labgrid's QEMUDriver's, from that one description),
with its serial on a TCP socket that QEMU itself serves. Its power is
labgrid's ExternalPowerDriver running `remote.py power on|off`, which
starts and stops that QEMU. On a rack, the place's resources are the
board's own (tests/env/real/), and nothing here is needed.
"""
import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("NVLAB_BUILD", TOP / "build"))
VENV = BUILD / "venv" / "bin"
HOST = "127.0.0.1"


def say(msg):
    print(f"[remote] {msg}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_port(port, timeout, proc=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex((HOST, port)) == 0:
                return True
        time.sleep(0.2)
    return False


# ---- the board: QEMU started and stopped by labgrid's ExternalPowerDriver ----

def qemu_command(board, console_port):
    """the QEMU command line labgrid's QEMUDriver builds from the board's
    environment, with the serial on QEMU's own TCP server (waiting for the
    console before the guest runs) instead of labgrid's local socket"""
    sys.path.insert(0, str(TOP / "tests"))
    import lab  # noqa: E402  (sets $LG_RMEM for the environment's templates)
    from labgrid.driver import QEMUDriver

    env = lab._load_env(TOP / "tests" / "env" / f"{board}.yaml")
    qemu = env.get_target("main").get_driver(QEMUDriver, activate=False)
    cmd = qemu.get_qemu_base_args()
    # -nographic would put QEMU's monitor on a stdio nobody reads
    cmd = [a for a in cmd if a != "-nographic"] + ["-display", "none", "-monitor", "none"]
    return cmd + ["-serial", f"tcp:{HOST}:{console_port},server=on,wait=on"]


def power(action, state):
    """power on: start the QEMU of the state directory (detached; returns
    once its console port listens); power off: stop it"""
    state = Path(state)
    pidf = state / "qemu.pid"
    cfg = json.loads((state / "board.json").read_text())
    if pidf.exists():
        pid = int(pidf.read_text())
        try:
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                os.kill(pid, 0)
                time.sleep(0.1)
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        pidf.unlink()
    if action == "off":
        return 0
    log = open(state / "qemu.log", "ab")
    p = subprocess.Popen(cfg["qemu"], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True)
    pidf.write_text(str(p.pid))
    if not wait_port(cfg["console_port"], 30, p):
        tail = (state / "qemu.log").read_text(errors="replace").splitlines()[-10:]
        print(f"power on: QEMU did not open its console port {cfg['console_port']} "
              f"(log {state / 'qemu.log'}):\n" + "\n".join(tail), file=sys.stderr)
        return 1
    return 0


# ---- coordinator, exporter, place ----

class Lab:
    """a coordinator and an exporter on loopback with one place; stop()
    ends everything it started"""

    def __init__(self, state, board):
        self.state = state
        self.board = board
        self.place = f"nvlab-{board}"
        self.procs = []
        self.coordinator = f"{HOST}:{free_port()}"
        self.console_port = free_port()

    def start(self, name, cmd, log):
        f = open(self.state / log, "wb")
        # in the state directory: the coordinator keeps its places.yaml and
        # resources.yaml in its working directory
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                             start_new_session=True, cwd=self.state)
        self.procs.append((name, p, self.state / log))
        return p

    def client(self, *args, user=None, check=True):
        env = dict(os.environ, LG_COORDINATOR=self.coordinator)
        if user:
            env["LG_USERNAME"] = user
        r = subprocess.run([str(VENV / "labgrid-client"), "-p", self.place, *args],
                           env=env, capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError(f"labgrid-client {' '.join(args)}: {(r.stderr or r.stdout).strip()}")
        return r

    def up(self):
        port = int(self.coordinator.rsplit(":", 1)[1])
        p = self.start("coordinator", [str(VENV / "labgrid-coordinator"), "-l", self.coordinator],
                       "coordinator.log")
        if not wait_port(port, 30, p):
            raise RuntimeError(f"the coordinator did not listen on {self.coordinator}")
        (self.state / "exporter.yaml").write_text(json.dumps({
            self.place: {"NetworkSerialPort": {"host": HOST, "port": self.console_port,
                                               "speed": 115200, "protocol": "raw"}}}, indent=1))
        self.start("exporter", [str(VENV / "labgrid-exporter"), "-c", self.coordinator,
                                "-n", "nvlab-exporter", "--hostname", HOST,
                                str(self.state / "exporter.yaml")], "exporter.log")
        deadline = time.monotonic() + 60
        while self.place not in self.client("resources", check=False).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError("the exporter's resources did not reach the coordinator "
                                   f"(log {self.state / 'exporter.log'})")
            time.sleep(0.5)
        self.client("create")
        self.client("add-match", f"nvlab-exporter/{self.place}/*")
        say(f"coordinator {self.coordinator}, exporter nvlab-exporter, place {self.place} "
            f"(console: NetworkSerialPort {HOST}:{self.console_port})")

    def stop(self):
        for name, p, _ in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def remote_env(state, board, place):
    """the environment of the remote place: the board's shell as its own
    environment has it, the console and power of the place"""
    from labgrid import Environment

    own = Environment(str(TOP / "tests" / "env" / f"{board}.yaml")).config.data["targets"]["main"]
    me = shlex.quote(sys.executable) + " " + shlex.quote(str(Path(__file__).resolve()))
    env = {
        "imports": [str(TOP / "tests" / "nvlab_strategy.py")],
        "targets": {"main": {
            "features": ["remote"],
            "resources": {"RemotePlace": {"name": place}},
            "options": own.get("options") or {},
            "drivers": {
                "SerialDriver": {},
                "ExternalPowerDriver": {
                    "cmd_on": f"{me} power on {shlex.quote(str(state))}",
                    "cmd_off": f"{me} power off {shlex.quote(str(state))}",
                    "delay": 0.0},
                "ShellDriver": own["drivers"]["ShellDriver"],
                "PowerFirstShellStrategy": {},
            },
        }},
    }
    path = state / "env.yaml"
    path.write_text(json.dumps(env, indent=1))  # JSON is YAML
    return path


def outcomes(junit):
    """test id -> outcome of a pytest JUnit file"""
    out = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        kinds = [c.tag for c in tc if c.tag in ("failure", "error", "skipped")]
        out[f"{tc.get('classname')}::{tc.get('name')}"] = kinds[0] if kinds else "passed"
    return out


def compare(local, remote):
    a, b = outcomes(local), outcomes(remote)
    diffs = [f"{t}: local {a.get(t, 'absent')}, remote {b.get(t, 'absent')}"
             for t in sorted(set(a) | set(b)) if a.get(t) != b.get(t)]
    return a, b, diffs


def test(board, kernel, pytest_args):
    out = BUILD / board / kernel
    local_junit = out / "test-logs" / "junit.xml"
    # the local session of this board and kernel still running (make test
    # runs the two side by side): its results are what this run compares with
    sys.path.insert(0, str(TOP / "tests"))
    import lab  # noqa: E402
    deadline = time.monotonic() + lab.RECORDS_WAIT_S
    if pid := lab._recording_session(out):
        say(f"waiting for the local session (pid {pid}) of {board} {kernel} to finish")
    while lab._recording_session(out) and time.monotonic() < deadline:
        time.sleep(5)
    if not local_junit.exists():
        say(f"FAILED: no local results to compare with ({local_junit}): "
            f"run 'make test KERNEL={kernel}' (or its session of {board}) first")
        return 1
    # what the board's environment names (as scripts/test.sh sets them)
    os.environ.update(LG_OUT=str(out), LG_IMAGES=str(BUILD / "images"))
    logdir = out / "test-logs-remote"
    state = BUILD / "remote" / f"{board}-{kernel}"
    for d in (logdir, state):
        subprocess.run(["rm", "-rf", str(d)], check=True)
        d.mkdir(parents=True)
    place = Lab(state, board)
    interrupted = []

    def on_signal(signum, _frame):
        interrupted.append(signum)
        raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    rc = 1
    try:
        (state / "board.json").write_text(json.dumps(
            {"qemu": qemu_command(board, place.console_port), "console_port": place.console_port}))
        place.up()
        place.client("acquire")
        other = place.client("acquire", user="second-client", check=False)
        if other.returncode == 0:
            say("FAILED: a second client acquired the place while it was in use")
            return 1
        say(f"a second client cannot take the place in use: "
            f"{(other.stderr or other.stdout).strip().splitlines()[-1]}")
        env = remote_env(state, board, place.place)
        say(f"testing {board} {kernel} through the place (log: {logdir}/pytest.log)")
        penv = dict(os.environ, LG_COORDINATOR=place.coordinator, LG_OUT=str(out),
                    LG_IMAGES=str(BUILD / "images"), NVLAB_BOARD=board, NVLAB_KERNEL=kernel,
                    NVLAB_BOARD_ENV=str(TOP / "tests" / "env" / f"{board}.yaml"))
        with open(logdir / "pytest.log", "wb") as log:
            r = subprocess.run([str(VENV / "pytest"), "-c", str(TOP / "pytest.ini"), "--rootdir", str(TOP),
                                str(TOP / "tests" / "boot"), "--lg-env", str(env), "--lg-log", str(logdir),
                                "--nvlab-kernel", kernel, "--junitxml", str(logdir / "junit.xml"),
                                "-q", *pytest_args], env=penv, stdout=log, stderr=subprocess.STDOUT)
        summary = (logdir / "pytest.log").read_text(errors="replace").strip().splitlines()[-1:]
        a, b, diffs = compare(local_junit, logdir / "junit.xml") if (logdir / "junit.xml").exists() \
            else ({}, {}, ["no remote results"])
        if r.returncode != 0 or diffs:
            say(f"FAILED: pytest exit {r.returncode}; {' '.join(summary)}")
            for d in diffs[:40]:
                say(f"  differs: {d}")
            for line in (logdir / "pytest.log").read_text(errors="replace").splitlines():
                if line.startswith(("FAILED", "ERROR", "E  ")):
                    print("  " + line)
            return 1
        counts = {}
        for v in b.values():
            counts[v] = counts.get(v, 0) + 1
        say(f"passed: {' '.join(summary)}; every one of the {len(b)} tests has the local "
            f"session's outcome ({', '.join(f'{n} {k}' for k, n in sorted(counts.items()))})")
        rc = 0
    except KeyboardInterrupt:
        say("interrupted")
        rc = 130
    except Exception as e:  # noqa: BLE001  (named, and everything is still stopped)
        say(f"FAILED: {e}")
        for name, _, log in place.procs:
            tail = log.read_text(errors="replace").splitlines()[-5:]
            if tail:
                print(f"---- last lines of {log} ----\n" + "\n".join(tail))
    finally:
        try:
            if place.procs:
                place.client("release", check=False)
        finally:
            if (state / "board.json").exists():
                power("off", state)
            place.stop()
            say(f"stopped the coordinator, the exporter and the board (logs: {state})")
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("test")
    t.add_argument("board")
    t.add_argument("kernel", choices=["ours", "ref"])
    t.add_argument("pytest_args", nargs="*")
    p = sub.add_parser("power")
    p.add_argument("action", choices=["on", "off"])
    p.add_argument("state")
    a = ap.parse_args()
    if a.cmd == "power":
        return power(a.action, a.state)
    return test(a.board, a.kernel, a.pytest_args)


if __name__ == "__main__":
    sys.exit(main())
