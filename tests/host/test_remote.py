"""The labgrid remote place of scripts/remote.py, without booting a board:
a real labgrid coordinator and exporter on loopback, the place's locking,
the power commands' start and stop, the generated environment read by
labgrid, and the outcome comparison with the local session."""
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time

import pytest
from labgrid import Environment

import lab

_spec = importlib.util.spec_from_file_location("remote", lab.TOP / "scripts" / "remote.py")
remote = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(remote)

LISTENER = "import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); " \
           "s.listen(1); time.sleep(600)"


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie of ours is gone for every purpose here
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


def board_state(tmp_path, cmd, port):
    (tmp_path / "board.json").write_text(json.dumps({"qemu": cmd, "console_port": port}))
    return tmp_path


def test_power_on_waits_for_the_console_and_off_stops_it(tmp_path):
    port = remote.free_port()
    state = board_state(tmp_path, [sys.executable, "-c", LISTENER, str(port)], port)
    assert remote.power("on", state) == 0
    pid = int((state / "qemu.pid").read_text())
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
    # on again: the running board is stopped first, then started anew
    assert remote.power("on", state) == 0
    pid2 = int((state / "qemu.pid").read_text())
    assert pid2 != pid and not alive(pid)
    assert remote.power("off", state) == 0
    time.sleep(0.2)
    assert not alive(pid2) and not (state / "qemu.pid").exists()


def test_power_on_fails_when_the_board_never_listens(tmp_path, capsys):
    port = remote.free_port()
    state = board_state(tmp_path, [sys.executable, "-c", "import sys; print('no such machine'); sys.exit(1)"],
                        port)
    assert remote.power("on", state) == 1
    err = capsys.readouterr().err
    assert f"did not open its console port {port}" in err and "no such machine" in err
    remote.power("off", state)


@pytest.mark.timeout(120)
def test_place_on_a_loopback_coordinator(tmp_path):
    lb = remote.Lab(tmp_path, "riscv64-virt")
    try:
        lb.up()
        assert "nvlab-exporter/nvlab-riscv64-virt/NetworkSerialPort" in lb.client("resources").stdout
        lb.client("acquire")
        other = lb.client("acquire", user="second-client", check=False)
        assert other.returncode != 0 and "already acquired" in (other.stderr + other.stdout)
        lb.client("release")
        # released: now the second client can take it
        assert lb.client("acquire", user="second-client", check=False).returncode == 0
    finally:
        lb.stop()
    assert lb.procs and all(p.poll() is not None for _, p, _ in lb.procs)
    assert not (lab.TOP / "places.yaml").exists()


def test_remote_environment_read_by_labgrid(tmp_path, monkeypatch):
    monkeypatch.setenv("LG_COORDINATOR", "127.0.0.1:1")
    monkeypatch.setenv("LG_OUT", str(tmp_path))
    monkeypatch.setenv("LG_IMAGES", str(tmp_path))
    path = remote.remote_env(tmp_path, "ast2600-evb", "nvlab-ast2600-evb")
    cfg = Environment(str(path)).config
    main = cfg.data["targets"]["main"]
    assert main["resources"] == {"RemotePlace": {"name": "nvlab-ast2600-evb"}}
    assert set(main["drivers"]) == {"SerialDriver", "ExternalPowerDriver", "ShellDriver",
                                    "PowerFirstShellStrategy"}
    assert "power on" in main["drivers"]["ExternalPowerDriver"]["cmd_on"]
    # the shell as the board's own environment has it, options kept
    own = Environment(str(lab.TOP / "tests" / "env" / "ast2600-evb.yaml")).config.data["targets"]["main"]
    assert main["drivers"]["ShellDriver"] == own["drivers"]["ShellDriver"]
    assert main["options"]["mtd_devices"] == own["options"]["mtd_devices"]


def test_qemu_command_is_the_board_description(monkeypatch, tmp_path):
    monkeypatch.setenv("LG_OUT", str(tmp_path))
    monkeypatch.setenv("LG_IMAGES", str(tmp_path / "images"))
    cmd = remote.qemu_command("ast2600-evb", 4321)
    assert cmd[0].endswith("qemu-system-arm") and "-nographic" not in cmd
    assert cmd[-2:] == ["-serial", "tcp:127.0.0.1:4321,server=on,wait=on"]
    assert cmd[cmd.index("-machine") + 1] == "ast2600-evb"
    assert f"file={tmp_path}/images/onie-switch.bin" in " ".join(cmd)


def write_junit(path, cases):
    body = "".join(f'<testcase classname="tests.boot.t" name="{n}" time="1">'
                   + ("" if o == "passed" else f"<{o} message='m'/>") + "</testcase>"
                   for n, o in cases.items())
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{body}</testsuite></testsuites>')
    return path


def test_outcomes_compared_test_by_test(tmp_path):
    local = write_junit(tmp_path / "l.xml", {"a": "passed", "b": "skipped", "c": "passed"})
    same = write_junit(tmp_path / "s.xml", {"c": "passed", "a": "passed", "b": "skipped"})
    assert remote.compare(local, same)[2] == []
    other = write_junit(tmp_path / "o.xml", {"a": "passed", "b": "passed", "d": "passed"})
    diffs = remote.compare(local, other)[2]
    assert diffs == ["tests.boot.t::b: local skipped, remote passed",
                     "tests.boot.t::c: local passed, remote absent",
                     "tests.boot.t::d: local absent, remote passed"]


def test_no_local_results_is_a_failure(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(remote, "BUILD", tmp_path)
    assert remote.test("ast2600-evb", "ours", []) == 1
    assert "no local results to compare with" in capsys.readouterr().out
    assert not subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True).stdout
