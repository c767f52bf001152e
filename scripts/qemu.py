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
  qemu.py run ENV.yaml LOG [ARGS]   non-interactive boot, console to LOG and
                                    stdout, QEMU exits when the guest reboots
"""
import os
import shlex
import subprocess
import sys

from labgrid import Environment
from labgrid.driver import QEMUDriver


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


def main(argv):
    if len(argv) < 3 or argv[1] not in ("cmd", "dumpdtb", "boot", "run"):
        print(__doc__, file=sys.stderr)
        return 2
    verb, env_path = argv[1], argv[2]
    if verb == "dumpdtb":
        cmd = drop_pair(base_args(env_path), "-dtb")
        m = cmd.index("-machine")
        cmd[m + 1] += f",dumpdtb={argv[3]}"
        cmd += ["-display", "none", "-serial", "null"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode or not os.path.exists(argv[3]):
            print(f"qemu.py: dumpdtb failed: {r.stderr.strip()}", file=sys.stderr)
            return 1
        return 0
    extra = " ".join(argv[4:] if verb == "run" else argv[3:])
    cmd = base_args(env_path, extra)
    if verb == "cmd":
        print(shlex.join(cmd))
        return 0
    if verb == "boot":
        # -nographic (from labgrid) muxes the console and monitor on stdio
        os.execvp(cmd[0], cmd)
    # run: console to stdout and to the log
    with open(argv[3], "wb") as log:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        for line in p.stdout:
            log.write(line)
            sys.stdout.buffer.write(line)
            sys.stdout.flush()
        return p.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
