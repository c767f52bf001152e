#!/usr/bin/env python3
"""QEMU command lines from a board's labgrid environment (tests/env/*.yaml).

The labgrid environment is the single description of how a board is started:
the tests use it through labgrid's QEMUDriver, and this helper builds the same
command line (with labgrid's own code) for the other uses:

  qemu.py cmd ENV.yaml              print the command line
  qemu.py dumpdtb ENV.yaml OUT.dtb  dump QEMU's generated device tree
  qemu.py boot ENV.yaml [ARGS]      interactive boot, console on stdio
                                    (Ctrl-A X leaves); ARGS append to the
                                    kernel command line
  qemu.py run [--timeout S] ENV.yaml LOG [ARGS]
                                    non-interactive boot, console to LOG and
                                    stdout, QEMU exits when the guest reboots;
                                    fails after S seconds (default 600)

No QEMU outlives this helper: run and dumpdtb stop QEMU when they time out,
on Ctrl-C, SIGTERM or SIGHUP, and on any error; QEMU also gets SIGKILL from
the kernel should the helper itself be killed. boot replaces the helper with
QEMU (exec).
"""
import ctypes
import os
import shlex
import signal
import subprocess
import sys
import threading

from labgrid import Environment
from labgrid.driver import QEMUDriver

DUMPDTB_TIMEOUT = 120  # s; QEMU exits as soon as the machine is built
RUN_TIMEOUT = 600  # s, default of run
_LIBC = ctypes.CDLL(None, use_errno=True)


def base_args(env_path, extra_append=""):
    env = Environment(env_path)
    target = env.get_target("main")
    drv = target.get_driver(QEMUDriver, activate=False)
    if extra_append:
        drv.boot_args = f"{drv.boot_args or ''} {extra_append}".strip()
    return drv.get_qemu_base_args()


def drop_pair(cmd, opt):
    out, skip = [], False
    for i, a in enumerate(cmd):
        if skip:
            skip = False
            continue
        if a == opt:
            skip = True
            continue
        out.append(a)
    return out


def _die_with_parent():
    """In the child, before exec: SIGKILL when the parent dies (Linux)."""
    PR_SET_PDEATHSIG = 1
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class _Stop(BaseException):
    """A termination signal arrived."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum, _frame):
    raise _Stop(signum)


def _stop_qemu(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run_qemu(cmd, log_path, timeout):
    """Console to log_path and stdout until QEMU exits; its exit status, or
    an error after `timeout` seconds. QEMU is stopped whatever happens."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_stop)
    timed_out = threading.Event()
    with open(log_path, "wb") as log:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             preexec_fn=_die_with_parent)

        def expire():
            timed_out.set()
            _stop_qemu(p)

        timer = threading.Timer(timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            for line in p.stdout:
                log.write(line)
                sys.stdout.buffer.write(line)
                sys.stdout.flush()
            rc = p.wait()
        except _Stop as e:
            print(f"qemu.py: {signal.Signals(e.signum).name}: stopping QEMU", file=sys.stderr)
            return 128 + e.signum
        except KeyboardInterrupt:
            print("qemu.py: interrupted: stopping QEMU", file=sys.stderr)
            return 130
        finally:
            timer.cancel()
            _stop_qemu(p)
    if timed_out.is_set():
        print(f"qemu.py: QEMU still running after {timeout:g} s: stopped it (console: {log_path})",
              file=sys.stderr)
        return 124
    return rc


def dump_dtb(cmd, out, timeout=DUMPDTB_TIMEOUT):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    except subprocess.TimeoutExpired:  # subprocess.run has killed QEMU
        print(f"qemu.py: dumpdtb: QEMU did not exit within {timeout} s (killed): {shlex.join(cmd)}",
              file=sys.stderr)
        return 1
    if r.returncode or not os.path.exists(out):
        print(f"qemu.py: dumpdtb failed (exit {r.returncode}): {r.stderr.strip()}", file=sys.stderr)
        return 1
    return 0


def main(argv):
    timeout = RUN_TIMEOUT
    if len(argv) > 2 and argv[1] == "run" and argv[2].startswith("--timeout"):
        opt = argv.pop(2)
        value = opt.partition("=")[2] if "=" in opt else argv.pop(2)
        timeout = float(value)
    if len(argv) < 3 or argv[1] not in ("cmd", "dumpdtb", "boot", "run"):
        print(__doc__, file=sys.stderr)
        return 2
    verb, env_path = argv[1], argv[2]
    if verb == "dumpdtb":
        cmd = drop_pair(base_args(env_path), "-dtb")
        m = cmd.index("-machine")
        cmd[m + 1] += f",dumpdtb={argv[3]}"
        cmd += ["-display", "none", "-serial", "null"]
        return dump_dtb(cmd, argv[3])
    extra = " ".join(argv[4:] if verb == "run" else argv[3:])
    cmd = base_args(env_path, extra)
    if verb == "cmd":
        print(shlex.join(cmd))
        return 0
    if verb == "boot":
        # -nographic (from labgrid) muxes the console and monitor on stdio
        os.execvp(cmd[0], cmd)
    return run_qemu(cmd, argv[3], timeout)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
