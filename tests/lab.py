"""Helpers shared by the boot tests: what QEMU attaches to a board, and how
to find it again inside the guest."""
import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from labgrid import Environment

TOP = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Attachment:
    kind: str  # rmem | at24 | mtd
    file: Path
    where: str  # rmem: address (hex), at24: "<bus>-<addr>", mtd: sysfs device

    @property
    def id(self):
        return f"{self.kind}:{self.where.rsplit('/', 1)[-1]}:{self.file.name}"


def _opts(s):
    """'a=b,c=d' -> dict (first element without '=' under key '')."""
    out = {}
    for part in s.split(","):
        k, sep, v = part.partition("=")
        if sep:
            out[k] = v
        else:
            out[""] = k
    return out


def qemu_driver_config(env_path):
    data = Environment(str(env_path)).config.data
    drivers = data["targets"]["main"]["drivers"]
    if isinstance(drivers, list):
        for d in drivers:
            if "QEMUDriver" in d:
                return d["QEMUDriver"]
    return drivers.get("QEMUDriver")


def attachments(env_path):
    """The images a QEMU board environment attaches, from its extra_args.
    For flash, `where` is the guest sysfs device of the chip, from the
    target option mtd_devices (QEMU's if=mtd index -> controller is board
    specific)."""
    config = Environment(str(env_path)).config
    mtd_devices = config.get_target_option("main", "mtd_devices", []) or []
    cfg = qemu_driver_config(env_path)
    if not cfg:
        return []
    args = shlex.split(cfg.get("extra_args", ""))
    pairs = [(args[i], args[i + 1]) for i in range(len(args) - 1) if args[i].startswith("-")]
    drives = {}
    found = []
    mtd_index = 0
    for opt, val in pairs:
        if opt != "-drive":
            continue
        o = _opts(val)
        if o.get("if") == "mtd":
            if mtd_index >= len(mtd_devices):
                raise ValueError(f"{env_path}: no mtd_devices option for if=mtd drive {mtd_index}")
            found.append(Attachment("mtd", Path(o["file"]), mtd_devices[mtd_index]))
            mtd_index += 1
        elif "id" in o:
            drives[o["id"]] = Path(o["file"])
    for opt, val in pairs:
        if opt != "-device":
            continue
        o = _opts(val)
        if o[""] == "loader" and "file" in o:
            found.append(Attachment("rmem", Path(o["file"]), f"{int(o['addr'], 0):x}"))
        elif o[""] == "at24c-eeprom":
            bus = int(re.search(r"(\d+)$", o["bus"]).group(1))
            addr = int(o["address"], 0)
            found.append(Attachment("at24", drives[o["drive"]], f"{bus}-{addr:04x}"))
    return found


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def kunit_parse(tree, log, json_path):
    """Parse a kernel log holding KTAP output with the tree's own
    tools/testing/kunit/kunit.py; returns its JSON result and its text
    report (for failure messages)."""
    r = subprocess.run([sys.executable, str(Path(tree) / "tools/testing/kunit/kunit.py"), "parse",
                        f"--json={json_path}", str(log)],
                       capture_output=True, text=True)
    return json.loads(Path(json_path).read_text()), r.stdout


def splat_patterns():
    lines = (TOP / "tests" / "splat-patterns.txt").read_text().splitlines()
    return re.compile("|".join(line for line in lines if line and not line.startswith("#")))


# ---- in the guest, through a labgrid ShellDriver ----

def quiet_console(shell):
    """Keep late kernel messages (e.g. "random: crng init done") from landing
    in the middle of command output on the serial console: only emergencies
    go to the console from now on. The kernel log itself keeps everything;
    the splat checks read it with dmesg."""
    shell.run_check("dmesg -n 1")


def nvmem_devices(shell):
    """name -> (resolved sysfs path, of_node path or '')"""
    out = shell.run_check(
        "for d in /sys/bus/nvmem/devices/*; do [ -e \"$d\" ] || continue; "
        "of=; [ -e $d/of_node ] && of=$(cd $d/of_node && pwd -P); "
        "echo \"${d##*/} $(cd $d && pwd -P) $of\"; done")
    devs = {}
    for line in out:
        parts = line.split()
        devs[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return devs


def guest_digest(shell, path, offset=None, size=None):
    """sha256 and length of a guest file (or a byte range of it)."""
    if offset is None:
        src = f"cat {path}"
    else:
        # dd in 4 KiB blocks when aligned: much faster than byte blocks
        bs = 4096 if offset % 4096 == 0 and size % 4096 == 0 else 1
        src = f"dd if={path} bs={bs} skip={offset // bs} count={size // bs} 2>/dev/null"
    digest = shell.run_check(f"{src} | sha256sum", timeout=600)[0].split()[0]
    length = int(shell.run_check(f"{src} | wc -c", timeout=600)[0])
    return digest, length


def find_device(shell, attachment):
    devs = nvmem_devices(shell)
    if attachment.kind == "rmem":
        hits = [n for n, (_, of) in devs.items()
                if "/reserved-memory/" in of and of.endswith("@" + attachment.where)]
    elif attachment.kind == "at24":
        bus, addr = attachment.where.split("-")
        hits = [n for n, (real, _) in devs.items()
                if f"/i2c-{bus}/{bus}-{addr}/" in real + "/"]
    else:
        # the whole flash chip: the MTD master (CONFIG_MTD_PARTITIONED_MASTER),
        # an mtd device of the chip's SPI device without an "offset" attribute
        hits = [n for n, (real, _) in devs.items()
                if re.search(f"/{re.escape(attachment.where)}/mtd/mtd\\d+(/|$)", real)
                and shell.run(f"test -e /sys/class/mtd/{n}/offset")[2] != 0]
    assert len(hits) == 1, f"{attachment.id}: expected one nvmem device, found {hits} among {sorted(devs)}"
    return hits[0]


# ---- boards started with other QEMU options ----

# labgrid names a console log after its target: boots that provoke a splat
# on purpose log under this name
EXPECTED_SPLAT_TARGET = "expected-splat"

@contextlib.contextmanager
def variant(env_path, cpu=None, smp=None, append="", out=None, splat_ok=False):
    """Boot the environment's board with another -cpu, -smp, extra kernel
    arguments, or the build outputs of another kernel (out: a directory
    like $LG_OUT), through labgrid. Yields the ShellDriver and powers the
    board off at the end. A kernel splat in the guest's log fails the
    caller, unless splat_ok (a boot for a test that provokes one and
    checks it itself)."""
    from labgrid.driver import QEMUDriver, ShellDriver
    from labgrid.strategy import ShellStrategy

    saved = os.environ.get("LG_OUT")
    if out:
        os.environ["LG_OUT"] = str(out)
    try:
        env = Environment(str(env_path))
    finally:
        if out:
            os.environ["LG_OUT"] = saved or ""
    target = env.get_target("main")
    if splat_ok:
        # its console goes to console_expected-splat, which the session's
        # splat check of the console logs leaves out
        target.name = EXPECTED_SPLAT_TARGET
    qemu = target.get_driver(QEMUDriver, activate=False)
    if cpu:
        qemu.cpu = cpu
    if smp:
        qemu.extra_args = re.sub(r"-smp \S+", f"-smp {smp}", qemu.extra_args)
    if append:
        qemu.boot_args = f"{qemu.boot_args} {append}"
    workdir = None
    if cpu or smp:
        # QEMU generates the board's device tree from -cpu and -smp: redo
        # board.dtb's recipe on a tree dumped with the new options
        recipe = Path(out or os.environ["LG_OUT"]) / "board.dtb.recipe"
        lines = recipe.read_text().split("\n") if recipe.exists() else []
        if lines and lines[0] == "qemu":
            workdir = Path(tempfile.mkdtemp(prefix="nvlab-variant-"))
            base, board = workdir / "base.dtb", workdir / "board.dtb"
            cmd = qemu.get_qemu_base_args()
            if "-dtb" in cmd:
                i = cmd.index("-dtb")
                del cmd[i:i + 2]
            m = cmd.index("-machine")
            cmd[m + 1] += f",dumpdtb={base}"
            subprocess.run(cmd + ["-display", "none", "-serial", "null"], check=True,
                           capture_output=True)
            subprocess.run(["fdtoverlay", "-i", str(base), "-o", str(board),
                            *[x for x in lines[1:] if x]], check=True, capture_output=True)
            env.config.data["images"][qemu.dtb] = str(board)
    strategy = target.get_driver(ShellStrategy)
    try:
        strategy.transition("shell")
        sh = target.get_driver(ShellDriver)
        quiet_console(sh)
        yield sh
        if not splat_ok:
            patterns = splat_patterns()
            bad = [line for line in sh.run_check("dmesg", timeout=120) if patterns.search(line)]
            assert not bad, "kernel splat:\n" + "\n".join(bad[:40])
    finally:
        target.deactivate_all_drivers()
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
