"""Helpers shared by the boot tests: what QEMU attaches to a board, and how
to find it again inside the guest."""
import contextlib
import gzip
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from labgrid import Environment

TOP = Path(__file__).resolve().parent.parent
BUILD = TOP / "build"
sys.path.insert(0, str(TOP / "scripts"))
import qemu as qemu_helper  # noqa: E402  (scripts/qemu.py)
import hostile as hostile_images  # noqa: E402  (scripts/hostile.py)


@dataclass(frozen=True)
class Attachment:
    kind: str  # rmem | at24 | mtd
    file: Path  # the image; on a real board only its name (file.stem) counts
    where: str  # rmem: address (hex), at24: "<bus>-<addr>", mtd: sysfs device
    # the host attached `file` (QEMU); on a real board the device holds
    # whatever it holds
    attached: bool = True

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
    qemu_helper.export_rmem_env()
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
    specific). The rmem images are those $LG_RMEM loads (the labels of
    the board's device tree, scripts/qemu.py).
    A real board's environment (tests/env/real/) has no QEMUDriver: its
    target option nvmem_devices says which device holds what board.conf
    calls each image (label: "at24:<bus>-<addr>" or "mtd:<sysfs device>"),
    and nothing is attached by the host."""
    qemu_helper.export_rmem_env()
    config = Environment(str(env_path)).config
    mtd_devices = config.get_target_option("main", "mtd_devices", []) or []
    cfg = qemu_driver_config(env_path)
    if not cfg:
        real = config.get_target_option("main", "nvmem_devices", {}) or {}
        found = []
        for label, spec in real.items():
            kind, sep, where = str(spec).partition(":")
            if not sep or kind not in ("at24", "mtd", "rmem") or not where:
                raise ValueError(f"{env_path}: nvmem_devices: {label}: {spec!r} is not "
                                 "at24:<bus>-<addr>, mtd:<sysfs device> or rmem:<address>")
            found.append(Attachment(kind, Path(f"{label}.bin"), where, attached=False))
        return found
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


SPLAT_PATTERNS = TOP / "tests" / "splat-patterns.txt"


def splat_pattern_lines(path=SPLAT_PATTERNS):
    """The regular expressions of a splat-pattern file: one per line; blank
    lines and lines starting with '#' (after indentation) are not patterns,
    and surrounding white space is not part of one. A pattern that matches
    the empty string (it would match every line) is an error."""
    out = []
    for line in Path(path).read_text().splitlines():
        text = line.strip()
        if text and not text.startswith("#"):
            if re.search(text, ""):
                raise ValueError(f"{path}: pattern {text!r} matches the empty string, so every line")
            out.append(text)
    if not out:
        raise ValueError(f"{path}: no splat pattern")
    return out


def splat_patterns(path=SPLAT_PATTERNS):
    """One compiled regex: a line is a kernel splat if .search() finds any
    pattern of the file in it. The only reader of the file (the boot tests,
    lab.variant() and scripts/boot.sh all use it)."""
    return re.compile("|".join(f"(?:{p})" for p in splat_pattern_lines(path)))


# ---- in the guest, through a labgrid ShellDriver ----

def quiet_console(shell):
    """Keep late kernel messages (e.g. "random: crng init done") from landing
    in the middle of command output on the serial console: only emergencies
    go to the console from now on. The kernel log itself keeps everything;
    the splat checks read it with dmesg."""
    shell.run_check("dmesg -n 1")


def dmesg(shell):
    """The kernel log as lines. Hostile images can put any byte into it (a
    variable name, a MAC text): undecodable bytes become U+FFFD instead of
    failing the read."""
    return shell.run_check("dmesg", timeout=120, decodeerrors="replace")


def nvmem_devices(shell):
    """name -> (resolved sysfs path, of_node path or ''), listed by the
    guest program nvmem-sysfs (tests/guest/common/nvmem-sysfs.c)"""
    devs = {}
    for line in shell.run_check("nvmem-sysfs devices"):
        parts = line.split()
        devs[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return devs


def nvmem_cells(shell, *devs):
    """device -> {sysfs cell file -> (size, mode, hex content, "" when
    empty, None when the read fails)}, every device listed (no cells: an
    empty dict), read in one guest process"""
    cells = {dev: {} for dev in devs}
    if devs:
        # a 64 KiB U-Boot environment has 2000 cells: over 100 s on the KASAN
        # kernel next to other sessions
        for line in shell.run_check("nvmem-sysfs cells " + " ".join(devs), timeout=600):
            dev, name, size, mode, content = line.split(" ")
            cells[dev][name] = (int(size), mode,
                                None if content == "ERR" else ("" if content == "-" else content))
    return cells


def _guest_source(path, offset=None, size=None):
    if offset is None:
        return f"cat {path}"
    # dd in 4 KiB blocks when aligned: much faster than byte blocks
    bs = 4096 if offset % 4096 == 0 and size % 4096 == 0 else 1
    return f"dd if={path} bs={bs} skip={offset // bs} count={size // bs} 2>/dev/null"


def read_loop_results(lines):
    """sum the reports of `nvmem-sysfs read-loop` runs: (reads that gave the
    whole cell, {errno: count}, the lines of short reads)"""
    ok = sum(int(line.split()[1]) for line in lines if line.startswith("ok "))
    errors = {}
    for m in (re.match(r"errno (\d+) (\d+)", line) for line in lines):
        if m:
            errors[int(m.group(1))] = errors.get(int(m.group(1)), 0) + int(m.group(2))
    return ok, errors, [line for line in lines if line.startswith("short")]


def guest_read(shell, path, offset=None, size=None):
    """the bytes of a guest file (or of its byte range at `offset`), as the
    guest reads them: compressed in the guest (a flash partition is mostly
    erased bytes), sent as hex, checked against the guest's sha256"""
    src = _guest_source(path, offset, size)
    digest = shell.run_check(f"{src} | sha256sum", timeout=600)[0].split()[0]
    lines = shell.run_check(f"{src} | gzip -1 -c | od -An -v -tx1", timeout=600)
    data = gzip.decompress(bytes.fromhex("".join(lines)))
    if sha256(data) != digest:
        raise AssertionError(f"{path}: {len(data)} bytes came over the console, "
                             f"not those the guest read (sha256 {digest})")
    return data


def guest_bytes_differ(shell, path, data, offset=None):
    """None when the guest file (or its byte range at `offset`) holds
    exactly `data`, else what differs. Read once (the sha256 of the bytes
    read); only a difference costs a second read, for the length."""
    size = None if offset is None else len(data)
    src = _guest_source(path, offset, size)
    digest = shell.run_check(f"{src} | sha256sum", timeout=600)[0].split()[0]
    if digest == sha256(data):
        return None
    length = int(shell.run_check(f"{src} | wc -c", timeout=600)[0])
    if length != len(data):
        return f"{length} bytes read in the guest, {len(data)} expected"
    return f"same length ({length} bytes), other content (sha256 {digest})"


def find_device(shell, attachment, devs=None, mtd_partitions=None):
    """the nvmem device of an attachment (devs: a listing of
    nvmem_devices() to search instead of listing again; mtd_partitions:
    the names of the mtd devices made of a partition, instead of asking
    the guest; with both, shell may be None)"""
    if devs is None:
        devs = nvmem_devices(shell)
    if mtd_partitions is None:
        def is_partition(n):
            return shell.run(f"test -e /sys/class/mtd/{n}/offset")[2] == 0
    else:
        def is_partition(n):
            return n in mtd_partitions
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
        # (not a device some driver made of a partition, e.g. u-boot-env0)
        hits = [n for n, (real, _) in devs.items()
                if re.fullmatch(r"mtd\d+", n)
                and re.search(f"/{re.escape(attachment.where)}/mtd/mtd\\d+(/|$)", real)
                and not is_partition(n)]
    assert len(hits) == 1, f"{attachment.id}: expected one nvmem device, found {hits} among {sorted(devs)}"
    return hits[0]


def guest_mac_consumers(shell):
    """interfaces whose device node has nvmem-cells:
    iface -> (DT path of its node, address, nvmem-cells hex, nvmem-cell-names)"""
    out = shell.run_check(
        "for n in /sys/class/net/*; do o=$n/device/of_node; [ -e $o/nvmem-cells ] || continue; "
        "echo \"${n##*/} $(cd $o && pwd -P) $(cat $n/address) "
        "$(od -An -v -tx1 $o/nvmem-cells | tr -d ' \\n') $(tr '\\0' , < $o/nvmem-cell-names 2>/dev/null)\"; done")
    found = {}
    for line in out:
        iface, node, address, cells, *names = line.split()
        found[iface] = ("/" + re.sub(r"^/sys/firmware/devicetree/base/?", "", node), address, cells,
                        [n for n in "".join(names).split(",") if n])
    return found


# ---- boards started with other QEMU options ----

# labgrid names a console log after its target: boots that provoke a splat
# on purpose log under this name
EXPECTED_SPLAT_TARGET = "expected-splat"

# A KUnit suite glob no suite matches: the built-in KUnit suites run and are
# checked in the session's own boot (tests/boot/test_kunit.py); the extra
# boots below skip them (about 11 s of each riscv64-virt boot under KASAN)
NO_KUNIT = "kunit.filter_glob=nvlab-no-suite"


@contextlib.contextmanager
def variant(env_path, cpu=None, smp=None, append="", out=None, splat_ok=False):
    """Boot the environment's board with another -cpu, -smp, extra kernel
    arguments, or the build outputs of another kernel (out: a directory
    like $LG_OUT), through labgrid, without running the built-in KUnit
    suites. Yields the ShellDriver and powers the board off at the end. A
    kernel splat in the guest's log fails the caller, unless splat_ok (a
    boot for a test that provokes one and checks it itself)."""
    from labgrid.driver import QEMUDriver, ShellDriver
    from labgrid.strategy import ShellStrategy

    env = _load_env(env_path, out)
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
    qemu.boot_args = " ".join(a for a in (qemu.boot_args, append, NO_KUNIT) if a)
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
            # a QEMU that hangs here is killed (subprocess) after 120 s
            subprocess.run(cmd + ["-display", "none", "-serial", "null"], check=True,
                           capture_output=True, timeout=120)
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
            assert_no_splat(sh, "the extra boot")
    finally:
        target.deactivate_all_drivers()
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def assert_no_splat(sh, what):
    """the kernel log of the board behind `sh` is free of splats"""
    patterns = splat_patterns()
    bad = [line for line in dmesg(sh) if patterns.search(line)]
    assert not bad, f"kernel splat in {what}:\n" + "\n".join(bad[:40])


KMEMLEAK = "/sys/kernel/debug/kmemleak"


def kmemleak_promised(config, kernel):
    """the board's kernel is built with kmemleak (its config fragments)"""
    return fragment_options(board_under_test(config), kernel).get("CONFIG_DEBUG_KMEMLEAK") == "y"


def kmemleak_suspects(sh, scans=2):
    """{header: report lines} of the objects kmemleak reports after two
    scans (one scan may take an object in flight for a leak); the header
    "unreferenced object 0x... (size N):" names one object"""
    for _ in range(scans):
        sh.run_check(f"echo scan > {KMEMLEAK}", timeout=300)
    found, cur = {}, None
    for line in sh.run_check(f"cat {KMEMLEAK}", timeout=120, decodeerrors="replace"):
        if line.startswith("unreferenced object"):
            cur = line
            found[cur] = [line]
        elif cur:
            found[cur].append(line)
    return found


class ExtraBoots:
    """Boots of the board besides the session's own, started on demand and
    kept until close(): a test that needs the board with other options, or
    just some boot other than the session's, takes one that is already up
    instead of booting again. Their consoles log as EXPECTED_SPLAT_TARGET:
    the kernel log is checked here instead, when a boot is handed out, when
    it is handed out for a splat on purpose (taint: never handed out
    again), and at close() for the boots nobody tainted."""

    def __init__(self, env_path):
        self.env_path = env_path
        self.stack = contextlib.ExitStack()
        self.boots = []  # [options, shell, tainted]

    def get(self, cpu=None, smp=None, append="", out=None):
        """a clean boot with exactly these options (those of lab.variant)"""
        options = (cpu, smp, append, str(out) if out else None)
        for boot in self.boots:
            if boot[0] == options and not boot[2]:
                assert_no_splat(boot[1], f"the boot with {options}")
                return boot[1]
        sh = self.stack.enter_context(
            variant(self.env_path, cpu=cpu, smp=smp, append=append, out=out, splat_ok=True))
        self.boots.append([options, sh, False])
        return sh

    def for_splat(self):
        """any clean boot of the session's kernel, whatever its board
        options, for a test that provokes a splat and checks it itself"""
        for boot in self.boots:
            if boot[0][3] is None and not boot[2]:
                assert_no_splat(boot[1], f"the boot with {boot[0]} before its use for a splat")
                boot[2] = True
                return boot[1]
        sh = self.get()
        self.boots[-1][2] = True
        return sh

    def close(self):
        try:
            for options, sh, tainted in self.boots:
                if not tainted:
                    assert_no_splat(sh, f"the boot with {options}")
        finally:
            self.stack.close()


# ---- observations shared between test sessions ----
# The reference session compares the reference kernel with ours booted on
# the same board options. Ours is booted with those options in its own
# session already: what that boot observed is recorded under the identity
# of the boot, and a later session that needs the same boot reads it
# instead of booting again. Any difference in what the guest boots (kernel,
# initramfs, device tree and its overlays, attached images, QEMU options)
# is a different identity, hence a new boot.

def _load_env(env_path, out=None):
    """the labgrid environment, for the build directory `out` if given:
    its kernel and device tree, and (an environment that loads $LG_RMEM)
    the rmem images that device tree declares (another kernel's board may
    attach others: the hostile images are ours only)"""
    qemu_helper.export_rmem_env()
    saved = {k: os.environ.get(k) for k in ("LG_OUT", "LG_RMEM")}
    if out:
        os.environ["LG_OUT"] = str(out)
        dtb = Path(out) / "board.dtb"
        if dtb.exists() and "$LG_RMEM" in Path(env_path).read_text():
            os.environ["LG_RMEM"] = qemu_helper.rmem_args([str(dtb)], os.environ.get("LG_IMAGES", ""))
    try:
        return Environment(str(env_path))
    finally:
        if out:
            for k, v in saved.items():
                os.environ[k] = v or ""


def boot_identity(env_path, out=None, cpu=None, smp=None, append=""):
    """sha256 naming a boot: the QEMU command line labgrid builds for the
    environment with these options (out: build directory of the kernel,
    as $LG_OUT), and the contents of every file it or the device-tree
    recipe names."""
    from labgrid.driver import QEMUDriver

    env = _load_env(env_path, out)
    qemu = env.get_target("main").get_driver(QEMUDriver, activate=False)
    args = qemu.get_qemu_base_args()
    words = [*args, f"cpu={cpu}", f"smp={smp}", f"append={append}", f"boot_args={qemu.boot_args}"]
    recipe = Path(out or os.environ["LG_OUT"]) / "board.dtb.recipe"
    if recipe.exists():
        words += recipe.read_text().split("\n")
    h = hashlib.sha256()
    for word in words:
        h.update(word.encode() + b"\0")
        for path in re.findall(r"(/[^\s,=]+)", word):
            if os.path.isfile(path):
                h.update(hashlib.sha256(Path(path).read_bytes()).digest())
    return h.hexdigest()


def _record_path(out, what, identity):
    return Path(out) / "boot-records" / f"{what}-{identity[:32]}.json"


# A session that records observations of its boots (our kernel's) marks
# its build directory while it runs; a session started next to it (the
# reference session, scripts/test.sh) waits for what it will record rather
# than booting the same again.
RECORDS_WAIT_S = 1800


def _marker(out):
    return Path(out) / "boot-records" / "session-running"


def session_started(out):
    path = _marker(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{os.getpid()}\n")


def session_finished(out):
    path = _marker(out)
    try:
        if path.read_text().strip() == str(os.getpid()):
            path.unlink()
    except FileNotFoundError:
        pass


def _recording_session(out):
    """PID of another live session running on `out`, or None"""
    try:
        pid = int(_marker(out).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    if pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return pid


def recorded(out, what, identity, wait_s=RECORDS_WAIT_S):
    """What an earlier boot of this identity observed (`what`: a name for
    the observation), or None. While another session runs on `out`, waits
    (up to wait_s) for it to record this, and gives None if it ends
    without."""
    path = _record_path(out, what, identity)
    deadline = time.monotonic() + wait_s
    told = False
    while True:
        if path.exists():
            data = json.loads(path.read_text())
            if data.get("identity") == identity:
                print(f"\nnvlab: {what} of the same boot recorded in {path}")
                return data["value"]
        pid = _recording_session(out)
        if pid is None or time.monotonic() > deadline:
            return None
        if not told:
            print(f"\nnvlab: waiting for {what} from the session running on {out} (pid {pid})")
            told = True
        time.sleep(2)


def record(out, what, identity, value):
    """Keep an observation of a boot for later sessions (JSON-able value)."""
    path = _record_path(out, what, identity)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"identity": identity, "value": value}, sort_keys=True) + "\n")
    tmp.replace(path)


# ---- what a board promises (qemu-boards/<board>/board.conf) ----

KERNELS = ("ours", "ref")

# The self-tests a kernel config option builds: KUnit suites that run at
# boot when the option is =y (tests/boot/test_kunit.py), Rust self-test
# modules the tests load when it is =m (tests/boot/test_rust.py). The
# board's config fragments ask for the options, scripts/build-kernel.sh
# makes sure every build has them.
KUNIT_SUITES = {
    "CONFIG_RISCV_HWPROBE_KUNIT_TEST": ("riscv_hwprobe", "riscv_misaligned"),
    "CONFIG_NVMEM_KUNIT_TEST": ("nvmem_layouts",),
    "CONFIG_NVMEM_LAYOUT_ONIE_TLV_KUNIT_TEST": ("nvmem_layout_onie_tlv",),
    "CONFIG_NVMEM_LAYOUT_SL28_VPD_KUNIT_TEST": ("nvmem_layout_sl28vpd",),
    "CONFIG_NVMEM_LAYOUT_U_BOOT_ENV_KUNIT_TEST": ("nvmem_layout_u_boot_env", "nvmem_layout_u_boot_env_of"),
}
RUST_SELFTESTS = {
    "CONFIG_RUST_SYNC_SELFTEST": ("rust_sync_selftest",),
    "CONFIG_RUST_NVMEM_SELFTEST": ("rust_nvmem_selftest",),
}

# The layouts a config option builds: option -> (module name, the
# compatible of the nvmem-layout nodes it binds to). Where a board's
# fragments set the option to m, tests/boot/test_layout_modules.py holds
# the module to autoloading, late binding and safe unloading.
LAYOUT_MODULES = {
    "CONFIG_NVMEM_LAYOUT_ONIE_TLV": ("onie_tlv", "onie,tlv-layout"),
    "CONFIG_NVMEM_LAYOUT_SL28_VPD": ("sl28vpd", "kontron,sl28-vpd"),
    "CONFIG_NVMEM_LAYOUT_U_BOOT_ENV": ("u_boot_env", "u-boot,env"),
}

# Layouts written in Rust: option -> (module name, the option of the C
# layout it stands in for). Where a board's fragments build both as
# modules, tests/boot/test_rust_layouts.py swaps one for the other.
RUST_LAYOUTS = {
    "CONFIG_NVMEM_LAYOUT_SL28_VPD_RUST": ("sl28vpd_rust", "CONFIG_NVMEM_LAYOUT_SL28_VPD"),
}


@dataclass(frozen=True)
class LayoutPromise:
    """The attachment of `image` (or its MTD partition `partition`) has a
    device-tree node with an nvmem-layout of `compatible`, and the kernel
    gives it the cells that layout makes of the image (none for an image
    the layout must reject)."""
    image: str
    partition: str  # "" for the whole device
    compatible: str

    @property
    def target(self):
        return f"{self.image}/{self.partition}" if self.partition else self.image

    @property
    def id(self):
        return f"{self.target}:{self.compatible}"


@dataclass(frozen=True)
class MacPromise:
    """The network interface `consumer` (an interface name, or the path of
    its device-tree node when it starts with '/') takes its address from the
    layout cell `cell` of `image`'s attachment (or of its MTD partition
    `partition`) with cell index `index` (negative: the phandle argument is
    its 32-bit two's complement, 0xffffffff for -1)."""
    consumer: str
    image: str
    partition: str
    cell: str
    index: int

    @property
    def target(self):
        return f"{self.image}/{self.partition}" if self.partition else self.image

    @property
    def id(self):
        return f"{self.consumer}:{self.target}:{self.cell}:{self.index}"


@dataclass(frozen=True)
class BoardPromises:
    board: str
    kernel: str
    layouts: tuple
    macs: tuple


_PROMISE_VARS = ("LAYOUTS", "MAC_CELLS")
_NAME = r"[A-Za-z0-9_.+-]+"
_NODE = r"[A-Za-z0-9_.,+@-]+"
_LAYOUT_RE = re.compile(rf"({_NAME})(?:/({_NAME}))?:([A-Za-z0-9_.,+-]+)")
_MAC_RE = re.compile(rf"({_NAME}|(?:/{_NODE})+):({_NAME})(?:/({_NAME}))?:({_NODE}):(-?\d+)")
_LAYOUT_FORM = "<image>[/<mtd partition>]:<layout compatible>"
_MAC_FORM = "<interface or /dt/node/path>:<image>[/<mtd partition>]:<cell>:<index>"


def board_conf_path(board):
    """qemu-boards/<board>/board.conf, or `board` itself when it is a path"""
    p = Path(board) if isinstance(board, Path) else TOP / "qemu-boards" / board / "board.conf"
    if not p.is_file():
        boards = sorted(d.name for d in (TOP / "qemu-boards").iterdir() if (d / "board.conf").is_file())
        raise ValueError(f"no board description {p} (boards: {' '.join(boards)})")
    return p


def board_conf(board, kernel):
    """The variables of a board.conf as the scripts see them (sourced by
    bash with BOARD and KERNEL set, like scripts/lib.sh load_board):
    every OVERLAYS*, LAYOUTS*, MAC_CELLS* and HOSTILE_RMEM* variable."""
    path = board_conf_path(board)
    script = ('. "$1" || exit 1; '
              'for v in $(compgen -v | grep -E "^(OVERLAYS|LAYOUTS|MAC_CELLS|HOSTILE_RMEM)(_|$)"); do '
              'printf "%s=%s\\0" "$v" "${!v}"; done')
    r = subprocess.run(["bash", "--noprofile", "--norc", "-c", script, "board.conf", str(path)],
                       capture_output=True, text=True,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                            "BOARD": path.parent.name, "KERNEL": kernel})
    if r.returncode != 0:
        raise ValueError(f"{path}: bash cannot source it: {r.stderr.strip()}")
    return dict(item.split("=", 1) for item in r.stdout.split("\0") if item)


def board_overlays(board, kernel, variant=None):
    """The overlay sources scripts/build-dtb.sh applies for the board on
    `kernel` (and its `variant`'s OVERLAYS_<VARIANT>): dts/<name>-<kernel>.dtso
    where it exists, else dts/<name>.dtso."""
    found = []
    conf = board_conf(board, kernel)
    names = conf.get("OVERLAYS", "").split()
    if variant:
        names += conf.get(f"OVERLAYS_{variant.upper()}", "").split()
    for name in names:
        for f in (TOP / "dts" / f"{name}-{kernel}.dtso", TOP / "dts" / f"{name}.dtso"):
            if f.exists():
                found.append(f)
                break
        else:
            raise ValueError(f"{board_conf_path(board)}: OVERLAYS: no dts/{name}.dtso")
    return found


def hostile_rmem(board, kernel):
    """the address from which the board attaches the hostile images on
    `kernel` (HOSTILE_RMEM_<KERNEL>, else HOSTILE_RMEM), or None (never in
    a variant: scripts/build-dtb.sh)"""
    conf = board_conf(board, kernel)
    value = conf.get(f"HOSTILE_RMEM_{kernel.upper()}") or conf.get("HOSTILE_RMEM")
    if not value:
        return None
    try:
        return int(value, 0)
    except ValueError:
        raise ValueError(f"{board_conf_path(board)}: HOSTILE_RMEM: '{value}' is no address") from None


def description_path(image):
    """eeprom-images/<image>.toml, or the hostile description of that name"""
    for d in (TOP / "eeprom-images", hostile_images.DIR):
        if (d / f"{image}.toml").exists():
            return d / f"{image}.toml"
    raise ValueError(f"no description {image}.toml in eeprom-images/ or {hostile_images.DIR.name}/")


def compile_overlays(board, kernel, outdir, variant=None):
    """the board's overlays for `kernel` compiled with dtc into `outdir`
    (as scripts/build-dtb.sh does, the hostile images' last): the .dtbo
    paths, in order"""
    dtbos = []
    sources = board_overlays(board, kernel, variant)
    address = hostile_rmem(board, kernel)
    if address is not None and not variant:
        generated = Path(outdir) / "hostile.dtso"
        # reg in the cells of the board's base tree, once built (the
        # addresses and sizes are the same in any cells)
        base = BUILD / board_conf_path(board).parent.name / kernel / "base.dtb"
        cells = hostile_images.cells_of(base) if base.exists() else hostile_images.DEFAULT_CELLS
        options = tuple(sorted(fragment_options(board, kernel).items()))
        generated.write_text(hostile_images.overlay(address, cells, options))
        sources.append(generated)
    for src in sources:
        out = Path(outdir) / (src.stem + ".dtbo")
        r = subprocess.run(["dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", str(out), str(src)],
                           capture_output=True, text=True)
        if r.returncode:
            raise ValueError(f"dtc {src}: {r.stderr.strip()}")
        dtbos.append(out)
    return dtbos


def rmem_regions(board, kernel, variant=None):
    """(image, address, size) of the RAM-backed EEPROMs the board's
    overlays declare on `kernel` (read as scripts/qemu.py reads the
    board's dtb)"""
    with tempfile.TemporaryDirectory(prefix="nvlab-dtbo-") as tmp:
        return [r for dtbo in compile_overlays(board, kernel, tmp, variant)
                for r in qemu_helper.rmem_regions(dtbo)]


# A kernel message on the console ("[  185.798297] random: crng init done").
# The console is shared, so one can land inside a line a payload prints.
_KMSG_ON_CONSOLE = re.compile(r"\[ *\d+\.\d{6}\] [^\n]*\n")


def payload_output(text):
    """What the guest's payloads (guest/init's nvlab.run) printed in a
    console log: each block from its '=== NVLAB-BEGIN' line to its
    '=== NVLAB-END' line, carriage returns dropped and kernel messages
    taken out, also from inside a payload's line (which they split)"""
    text = _KMSG_ON_CONSOLE.sub("", text.replace("\r", ""))
    # a block the payload did not finish runs to the end of the log
    return "".join(re.findall(r"^=== NVLAB-BEGIN .*?(?:^=== NVLAB-END [^\n]*\n?|\Z)", text,
                              re.S | re.M))


def fru_descriptions():
    """the IPMI FRU layout's images: the good ones of eeprom-images/, the
    malformed ones of eeprom-images/hostile-fru/ and nvmem-image's
    descriptions of the images frutool made from eeprom-images/frutool/
    (build/images/frutool-*.toml, written by scripts/build-images.sh)"""
    return tuple(sorted((TOP / "eeprom-images").glob("ipmi-fru-*.toml"))
                 + sorted((TOP / "eeprom-images" / "hostile-fru").glob("*.toml"))
                 + sorted(BUILD / "images" / f"frutool-{f.name}"
                          for f in (TOP / "eeprom-images" / "frutool").glob("*.toml")))


def rmem_boot_dir(board, kernel, descs, workdir):
    """A build directory (for $LG_OUT) in `workdir` that boots the board's
    kernel and initramfs of `kernel` with the board's device tree minus the
    hostile images, plus the images of the descriptions `descs` attached as
    rmem EEPROMs from the hostile images' address (6.1 keeps at most 64
    reserved-memory regions: images that do not fit beside the hostile ones
    get a boot of their own). Returns {image: address}."""
    address = hostile_rmem(board, kernel)
    if address is None:
        raise ValueError(f"{board}: no HOSTILE_RMEM for kernel '{kernel}' to attach images from")
    out = BUILD / board_conf_path(board).parent.name / kernel
    work = Path(workdir)
    cells = hostile_images.cells_of(out / "base.dtb")
    (work / "extra.dtso").write_text(hostile_images.overlay(address, cells, paths=tuple(descs)))
    subprocess.run(["dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", str(work / "extra.dtbo"),
                    str(work / "extra.dtso")], check=True, capture_output=True)
    recipe = (out / "board.dtb.recipe").read_text().split("\n")
    own = [x for x in recipe[1:] if x and not x.endswith("/hostile.dtbo")]
    subprocess.run(["fdtoverlay", "-i", str(out / "base.dtb"), "-o", str(work / "board.dtb"),
                    *own, str(work / "extra.dtbo")], check=True, capture_output=True)
    for f in ("Image", "initramfs.cpio.gz"):
        (work / f).unlink(missing_ok=True)
        (work / f).symlink_to(out / f)
    return {label: addr for label, addr, _ in qemu_helper.rmem_regions(work / "extra.dtbo")}


def board_images(board, kernel):
    """The images the board attaches on `kernel`: the labels of its
    nvmem-rmem nodes, and the files its environment attaches otherwise
    (I2C EEPROMs, flash)."""
    images = {label for label, _, _ in rmem_regions(board, kernel)}
    env = TOP / "tests" / "env" / f"{board_conf_path(board).parent.name}.yaml"
    if env.exists():
        # the environment's templates need these, whatever their value
        blank = {k: os.environ.get(k, "") for k in ("LG_OUT", "LG_IMAGES")}
        with mock.patch.dict(os.environ, LG_RMEM="", **blank):
            images |= {a.file.stem for a in attachments(env) if a.kind != "rmem"}
    return images


def board_promises(board, kernel, images=None):
    """What the board promises on `kernel` (ours|ref): the entries of
    LAYOUTS and MAC_CELLS (every kernel) plus those of LAYOUTS_<KERNEL> and
    MAC_CELLS_<KERNEL> (that kernel only), each about an image the board
    attaches (board_images(), or `images`). A malformed entry raises
    ValueError naming the file, the variable and the entry."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel '{kernel}' (one of {', '.join(KERNELS)})")
    path = board_conf_path(board)
    conf = board_conf(board, kernel)
    if images is None:
        images = board_images(board, kernel)

    def bad(var, entry, why):
        return ValueError(f"{path}: {var}: '{entry}' {why}")

    entries = {var: [] for var in _PROMISE_VARS}
    for var in sorted(conf):
        base = next((b for b in _PROMISE_VARS if var == b or var.startswith(b + "_")), None)
        if base is None:
            continue
        suffix = var[len(base) + 1:]
        if suffix and suffix.lower() not in KERNELS:
            raise ValueError(f"{path}: {var}: unknown kernel suffix '{suffix}' "
                             f"(use {base} or {', '.join(f'{base}_{k.upper()}' for k in KERNELS)})")
        if not suffix or suffix.lower() == kernel:
            entries[base] += [(var, e) for e in conf[var].split()]

    layouts = []
    for var, entry in entries["LAYOUTS"]:
        m = _LAYOUT_RE.fullmatch(entry)
        if not m:
            raise bad(var, entry, f"is not {_LAYOUT_FORM}")
        p = LayoutPromise(m.group(1), m.group(2) or "", m.group(3))
        if p.image not in images:
            raise bad(var, entry, f"names image '{p.image}', which the board does not attach "
                                  f"on kernel '{kernel}'")
        if any(q.target == p.target for q in layouts):
            raise bad(var, entry, f"promises a second layout on {p.target} for kernel '{kernel}'")
        layouts.append(p)

    # each hostile image the board attaches: the layout its description names
    if hostile_rmem(board, kernel) is not None:
        for desc in hostile_images.descriptions(fragment_options(board, kernel)):
            if desc.stem not in images:
                continue
            compatible, _ = hostile_images.meta(desc)
            if any(q.target == desc.stem for q in layouts):
                raise bad("HOSTILE_RMEM", desc.stem, "is promised in LAYOUTS too")
            layouts.append(LayoutPromise(desc.stem, "", compatible))

    macs = []
    for var, entry in entries["MAC_CELLS"]:
        m = _MAC_RE.fullmatch(entry)
        if not m:
            raise bad(var, entry, f"is not {_MAC_FORM}")
        p = MacPromise(m.group(1), m.group(2), m.group(3) or "", m.group(4), int(m.group(5)))
        if not any(q.target == p.target for q in layouts):
            raise bad(var, entry, f"takes a cell of '{p.target}', which has no LAYOUTS promise "
                                  f"for kernel '{kernel}'")
        if any(q.consumer == p.consumer for q in macs):
            raise bad(var, entry, f"promises a second MAC for {p.consumer}")
        macs.append(p)
    return BoardPromises(path.parent.name, kernel, tuple(layouts), tuple(macs))


def session_promises(config):
    """What the session holds its board to: board_promises() of the board
    under test on the session's kernel; on a real board (an environment
    with nvmem_devices, tests/env/real/) only the promises about the
    devices it lists, and the MACs taken from those."""
    promises = board_promises(board_under_test(config), config.getoption("--nvlab-kernel"))
    env = board_env(config)
    real = [a for a in attachments(env) if not a.attached] if env else []
    if not real:
        return promises
    labels = {a.file.stem for a in real}
    layouts = tuple(p for p in promises.layouts if p.image in labels)
    targets = {p.target for p in layouts}
    macs = tuple(m for m in promises.macs if m.target in targets)
    return BoardPromises(promises.board, promises.kernel, layouts, macs)


def board_env(config):
    """The board's own environment (tests/env/<board>.yaml: what QEMU
    attaches, the options of extra boots): $NVLAB_BOARD_ENV when the
    session's target is elsewhere (--lg-env a remote place, scripts/remote.py),
    else --lg-env itself."""
    return os.environ.get("NVLAB_BOARD_ENV") or config.option.lg_env


def board_under_test(config):
    """The board a pytest session tests: $NVLAB_BOARD (scripts/test.sh sets
    it), else the name of the --lg-env file (tests/env/<board>.yaml)."""
    board = os.environ.get("NVLAB_BOARD")
    if not board and config.option.lg_env:
        board = Path(config.option.lg_env).stem
    if not board:
        raise ValueError("which board? set NVLAB_BOARD or pass --lg-env tests/env/<board>.yaml")
    board_conf_path(board)
    return board


def fragment_options(board, kernel):
    """option -> value ('y', 'm', 'n', ...) the board's config fragments
    ask for on `kernel`, in scripts/build-kernel.sh's order (config.fragment,
    then config-<kernel>.fragment; a later line wins)."""
    bdir = board_conf_path(board).parent
    opts = {}
    for frag in (bdir / "config.fragment", bdir / f"config-{kernel}.fragment"):
        if not frag.exists():
            continue
        for line in frag.read_text().splitlines():
            m = re.fullmatch(r"(CONFIG_\w+)=(.*)", line.strip()) or \
                re.fullmatch(r"# (CONFIG_\w+) is not set", line.strip())
            if m:
                opts[m.group(1)] = m.group(2) if m.lastindex == 2 else "n"
    return opts


def fragment_selftests(board, kernel, table, value):
    """names from `table` (KUNIT_SUITES or RUST_SELFTESTS) whose option
    the fragments set to `value`"""
    opts = fragment_options(board, kernel)
    return {name for opt, names in table.items() if opts.get(opt) == value for name in names}
