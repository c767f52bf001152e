"""lab.boot_identity and the boot records: a record is only ever found for
a boot with the same command line and the same bytes in every file it names
(the reference session reads our kernel's answers from them instead of
booting it again, waiting for a session still running to record them)."""
import os
import subprocess
import textwrap
import threading
import time

import pytest

import lab

ENV = """\
targets:
  main:
    drivers:
      QEMUDriver:
        qemu_bin: qemu
        machine: virt
        cpu: rv64
        memory: 64M
        kernel: kernel
        dtb: dtb
        boot_args: console=ttyS0
        extra_args: !template >-
          -smp 2 -initrd $LG_OUT/initramfs.cpio.gz
          -device loader,file=$LG_OUT/eeprom.bin,addr=0x9f000000,force-raw=on
tools:
  qemu: !template $LG_OUT/../qemu
images:
  kernel: !template $LG_OUT/Image
  dtb: !template $LG_OUT/board.dtb
"""


@pytest.fixture
def board(tmp_path, monkeypatch):
    out = tmp_path / "ours"
    out.mkdir()
    for name in ("Image", "board.dtb", "initramfs.cpio.gz", "eeprom.bin", "overlay.dtbo"):
        (out / name).write_bytes(name.encode())
    (out / "board.dtb.recipe").write_text(f"qemu\n{out / 'overlay.dtbo'}\n")
    qemu = tmp_path / "qemu"
    qemu.write_text("#!/bin/sh\necho 'QEMU emulator version 7.2.0'\n")
    qemu.chmod(0o755)
    env = tmp_path / "env.yaml"
    env.write_text(textwrap.dedent(ENV))
    monkeypatch.setenv("LG_OUT", str(tmp_path / "elsewhere"))
    (tmp_path / "elsewhere").mkdir()
    return env, out


def test_same_boot_same_identity(board):
    env, out = board
    assert lab.boot_identity(env, out) == lab.boot_identity(env, out)
    assert lab.boot_identity(env, out, cpu="rv64,v=true", smp=3) == \
        lab.boot_identity(env, out, cpu="rv64,v=true", smp=3)


@pytest.mark.parametrize("name", ["Image", "board.dtb", "initramfs.cpio.gz", "eeprom.bin", "overlay.dtbo",
                                  "../qemu"])
def test_a_changed_file_is_another_boot(board, name):
    env, out = board
    before = lab.boot_identity(env, out)
    path = out / name
    path.write_bytes(path.read_bytes() + b"\n# changed\n")
    assert lab.boot_identity(env, out) != before, f"{name} is not part of the identity"


@pytest.mark.parametrize("options", [{"cpu": "rv64,v=true"}, {"smp": 3}, {"append": "nosmp"}])
def test_other_options_are_another_boot(board, options):
    env, out = board
    assert lab.boot_identity(env, out, **options) != lab.boot_identity(env, out)


def test_record_found_only_for_its_identity(board):
    env, out = board
    identity = lab.boot_identity(env, out)
    assert lab.recorded(out, "answers", identity) is None
    lab.record(out, "answers", identity, {"key": [1, 2]})
    assert lab.recorded(out, "answers", identity) == {"key": [1, 2]}
    (out / "eeprom.bin").write_bytes(b"another image")
    assert lab.recorded(out, "answers", lab.boot_identity(env, out)) is None
    assert lab.recorded(out, "other", identity) is None


@pytest.fixture
def other_session(tmp_path):
    """a live process standing for a session running on a build directory"""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


def _mark(out, pid):
    path = out / "boot-records" / "session-running"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{pid}\n")


def test_waits_for_a_running_session_to_record(board, other_session):
    env, out = board
    identity = lab.boot_identity(env, out)
    _mark(out, other_session.pid)
    timer = threading.Timer(1.0, lab.record, (out, "answers", identity, [7]))
    timer.start()
    t0 = time.monotonic()
    try:
        assert lab.recorded(out, "answers", identity, wait_s=30) == [7]
    finally:
        timer.cancel()
    assert time.monotonic() - t0 >= 0.9


def test_a_running_session_that_does_not_record_is_waited_for_until_the_limit(board, other_session):
    env, out = board
    _mark(out, other_session.pid)
    assert lab.recorded(out, "answers", lab.boot_identity(env, out), wait_s=1) is None


def test_no_wait_for_an_ended_session_or_for_itself(board, other_session):
    env, out = board
    identity = lab.boot_identity(env, out)
    other_session.kill()
    other_session.wait()
    _mark(out, other_session.pid)
    t0 = time.monotonic()
    assert lab.recorded(out, "answers", identity, wait_s=30) is None
    lab.session_started(out)
    assert (out / "boot-records" / "session-running").read_text().strip() == str(os.getpid())
    assert lab.recorded(out, "answers", identity, wait_s=30) is None
    assert time.monotonic() - t0 < 5, "waited for a session that has ended, or for itself"
    lab.session_finished(out)
    assert not (out / "boot-records" / "session-running").exists()
