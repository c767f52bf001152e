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
  qemu.py rmem DTB|DTBO... IMAGES   print the loader options of the images
                                    the device tree places in RAM

RAM-backed EEPROMs have one description, the device tree: each nvmem-rmem
node whose `label` names an image (eeprom-images/<label>.toml) gets that
image loaded at its address. The environments refer to those options as
$LG_RMEM, which this helper (and tests/conftest.py) derive from
$LG_OUT/board.dtb and $LG_IMAGES when the caller has not set it.

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

import libfdt
from labgrid import Environment
from labgrid.driver import QEMUDriver

DUMPDTB_TIMEOUT = 120  # s; QEMU exits as soon as the machine is built
RUN_TIMEOUT = 600  # s, default of run
_LIBC = ctypes.CDLL(None, use_errno=True)


class RmemError(Exception):
    """A device tree whose RAM-backed EEPROMs cannot be attached as said."""


def _cells(prop, n, at):
    value = 0
    for i in range(n):
        value = (value << 32) | int.from_bytes(prop[(at + i) * 4:(at + i + 1) * 4], "big")
    return value


def rmem_regions(path):
    """(label, address, size) of each nvmem-rmem node with a label in the
    flattened tree at `path` (a board's dtb, or an overlay's dtbo), in tree
    order."""
    with open(path, "rb") as f:
        fdt = libfdt.Fdt(f.read())
    quiet = [libfdt.NOTFOUND]
    found = []
    off, depth = 0, 0
    while True:
        off, depth = fdt.next_node(off, depth, quiet)
        if off < 0 or depth <= 0:
            break
        compat = fdt.getprop(off, "compatible", quiet)
        if isinstance(compat, int) or "nvmem-rmem" not in compat.as_stringlist():
            continue
        node = fdt.get_path(off)
        label = fdt.getprop(off, "label", quiet)
        if isinstance(label, int):
            continue
        parent = fdt.parent_offset(off)
        acells = fdt.getprop(parent, "#address-cells", quiet)
        scells = fdt.getprop(parent, "#size-cells", quiet)
        reg = fdt.getprop(off, "reg", quiet)
        if isinstance(reg, int) or isinstance(acells, int) or isinstance(scells, int):
            raise RmemError(f"{path}: {node}: no reg, or no #address-cells/#size-cells in its parent")
        na, ns = acells.as_uint32(), scells.as_uint32()
        if len(reg) != 4 * (na + ns):
            raise RmemError(f"{path}: {node}: reg of {len(reg)} bytes, expected {4 * (na + ns)}")
        found.append((label.as_str(), _cells(reg, na, 0), _cells(reg, ns, na)))
    return found


def rmem_args(paths, images):
    """QEMU generic-loader options for the rmem EEPROMs of the device trees
    `paths`: each image (`images`/<label>.bin) must exist and fit its
    region, and no two regions may overlap."""
    regions = [r for p in paths for r in rmem_regions(p)]
    args = []
    spans = []
    for label, addr, size in regions:
        image = os.path.join(images, f"{label}.bin")
        try:
            length = os.path.getsize(image)
        except OSError as e:
            raise RmemError(f"rmem at {addr:#x} ({label}): {e.strerror}: {image} "
                            f"(make images builds it from eeprom-images/{label}.toml)") from None
        if length > size:
            raise RmemError(f"rmem at {addr:#x}: {image} is {length:#x} bytes, "
                            f"the region only {size:#x}")
        for other, a, s in spans:
            if addr < a + s and a < addr + size:
                raise RmemError(f"rmem regions of {label} and {other} overlap at {max(a, addr):#x}")
        spans.append((label, addr, size))
        args.append(f"-device loader,file={image},addr={addr:#x},force-raw=on")
    return " ".join(args)


def export_rmem_env(environ=os.environ):
    """Set LG_RMEM for the environments (tests/env/*.yaml) unless set: the
    loader options of $LG_OUT/board.dtb with the images in $LG_IMAGES, or
    nothing while that tree does not exist yet (dumping QEMU's base tree)."""
    if "LG_RMEM" in environ:
        return
    dtb = os.path.join(environ.get("LG_OUT", ""), "board.dtb")
    if environ.get("LG_OUT") and os.path.exists(dtb):
        environ["LG_RMEM"] = rmem_args([dtb], environ.get("LG_IMAGES", ""))
    else:
        environ["LG_RMEM"] = ""


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
    if len(argv) < 3 or argv[1] not in ("cmd", "dumpdtb", "boot", "run", "rmem"):
        print(__doc__, file=sys.stderr)
        return 2
    verb, env_path = argv[1], argv[2]
    try:
        if verb == "rmem":
            if len(argv) < 4:
                print(__doc__, file=sys.stderr)
                return 2
            print(rmem_args(argv[2:-1], argv[-1]))
            return 0
        export_rmem_env()
    except (RmemError, libfdt.FdtException) as e:
        print(f"qemu.py: {e}", file=sys.stderr)
        return 1
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
