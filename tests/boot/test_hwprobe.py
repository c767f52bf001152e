"""riscv_hwprobe in the guest: values against the QEMU -cpu configuration the
board was started with, the system call's semantics, the vDSO, the
kernel's own kselftest, and (on the reference kernel) the same answers from
our kernel on the same configurations.

The guest side is tests/guest/riscv/hwprobe.c (`hwprobe query|vdso|loop|bench|fuzz`)
and tests/guest/riscv/hwprobe-nokernel.c (the vDSO under a seccomp filter).
"""
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import lab

pytestmark = pytest.mark.needs("hwprobe")

# UAPI facts (spec/hwprobe.md, arch/riscv/include/uapi/asm/hwprobe.h)
MVENDORID, MARCHID, MIMPID, BASE_BEHAVIOR, IMA_EXT_0, CPUPERF_0 = range(6)
ZICBOZ_BLOCK_SIZE, HIGHEST_VIRT_ADDRESS, TIME_CSR_FREQ, MISALIGNED_SCALAR_PERF = range(6, 10)
KEYS_ALL = range(0, 10)  # the 6.4 keys 0-5 and the later 6-9, answered by both kernels
BASE_BEHAVIOR_IMA = 1 << 0
MISALIGNED_SLOW, MISALIGNED_FAST = 2, 3
EXT_BITS = {  # IMA_EXT_0 bit of each QEMU property
    "zba": 3, "zbb": 4, "zbs": 5, "zbc": 7, "zbkb": 8, "zbkc": 9, "zbkx": 10,
    "zknd": 11, "zkne": 12, "zknh": 13, "zksed": 14, "zksh": 15, "zkt": 16,
    "Zihintpause": 36,
}
FD, C, V = 1 << 0, 1 << 1, 1 << 2
ZFH, ZFHMIN, ZCA, ZCD = 1 << 27, 1 << 28, 1 << 43, 1 << 45
# Vector-related bits later kernels set (V, Zve*, Zvk*, Zvfh*): our 6.1 does
# not manage vector state, so it never reports them (see kernel-patches/0008).
VECTOR_BITS = V | sum(1 << b for b in (*range(17, 27), 30, 31, *range(37, 42)))
# QEMU 7.2's rv64 defaults for the properties above
QEMU_DEFAULTS = {"f": True, "d": True, "c": True, "v": False, "Zfh": False, "Zfhmin": False,
                 "zba": True, "zbb": True, "zbc": True, "zbs": True, "Zihintpause": True}
SATP_TASK_SIZE = {"sv39": 1 << 38, "sv48": 1 << 47, "sv57": 1 << 56}


@dataclass(frozen=True)
class CpuConfig:
    id: str
    cpu: str | None     # None: the environment's own -cpu
    smp: int = 2
    append: str = ""


def _props(cpu):
    out = {}
    for part in cpu.split(",")[1:]:
        k, _, v = part.partition("=")
        out[k] = v
    return out


CONFIGS = [
    # the board as the environment starts it (SiFive-like IDs, default extensions)
    CpuConfig("env", None),
    # everything the environment's board has off turned on and the other way
    # round, in one boot: other IDs, no Zb[abcs], scalar crypto, Zfh, a vector
    # unit, no Zihintpause, no hypervisor, three harts. Between the two
    # configurations each extension bit is seen both set and clear.
    CpuConfig("inverse",
              "rv64,mvendorid=0x489,marchid=0x8000000000000001,mimpid=0x1,zba=false,zbb=false,"
              "zbc=false,zbs=false,zbkb=true,zbkc=true,zbkx=true,zknd=true,zkne=true,zknh=true,"
              "zksed=true,zksh=true,zkt=true,Zfh=true,Zfhmin=true,v=true,vlen=256,"
              "Zihintpause=false,h=false", smp=3),
]


def _parse_query(lines):
    """'rc=R errno=E' then 'KEY VALUE' lines -> (rc, errno, [(key, value)])."""
    m = re.match(r"rc=(-?\d+) errno=(\S+)", lines[0])
    assert m, f"unexpected hwprobe output: {lines}"
    pairs = [(int(k), int(v, 16)) for k, v in (line.split() for line in lines[1:])]
    return int(m.group(1)), m.group(2), pairs


def query(sh, args=""):
    return _parse_query(sh.run_check(f"hwprobe query {args}", timeout=120))


@dataclass
class Answers:
    syscall: dict
    vdso: dict
    isa: str
    mmu: str
    timebase: int
    misaligned_log: list
    cpus: int


def collect(sh):
    keys = " ".join(str(k) for k in range(0, 16))
    rc, err, pairs = query(sh, keys)
    assert rc == 0, err
    rc, err, vpairs = query(sh, "-v " + keys)
    assert rc == 0, err
    cpuinfo = sh.run_check("cat /proc/cpuinfo")
    isa = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("isa"))
    mmu = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("mmu"))
    tb = sh.run_check("od -An -tx1 /proc/device-tree/cpus/timebase-frequency")
    timebase = int("".join(" ".join(tb).split()), 16)
    log = sh.run_check("dmesg | grep -i misalign || true")
    cpus = int(sh.run_check("grep -c ^processor /proc/cpuinfo")[0])
    return Answers(dict((i, p) for i, p in enumerate(pairs)), dict((i, p) for i, p in enumerate(vpairs)),
                   isa, mmu, timebase, log, cpus)


_booted = {}


@pytest.fixture(scope="session")
def board_is_riscv(pytestconfig):
    env = lab.board_env(pytestconfig)
    if not env or "riscv" not in (lab.qemu_driver_config(env) or {}).get("qemu_bin", ""):
        pytest.skip("riscv_hwprobe exists on RISC-V boards only")
    return env


def _answers_json(a):
    return {"syscall": list(a.syscall.values()), "vdso": list(a.vdso.values()), "isa": a.isa,
            "mmu": a.mmu, "timebase": a.timebase, "misaligned_log": a.misaligned_log, "cpus": a.cpus}


def _answers_from_json(d):
    return Answers(dict(enumerate(tuple(p) for p in d["syscall"])),
                   dict(enumerate(tuple(p) for p in d["vdso"])),
                   d["isa"], d["mmu"], d["timebase"], d["misaligned_log"], d["cpus"])


def answers_for(request, config, kernel):
    """The answers of `kernel` (ours|ref, from the build directory next to
    $LG_OUT) booted with `config`, collected once per boot: the session's
    own boot where it is that boot, a boot of our kernel with the same
    identity recorded by an earlier session (lab.boot_identity), else a
    boot of its own. Also written to the test log directory."""
    env = lab.board_env(request.config)
    logdir = request.config.option.lg_log
    key = (config.id, kernel)
    if key not in _booted:
        out = Path(os.environ["LG_OUT"]).parent / kernel
        if not (out / "Image").exists():
            pytest.fail(f"no {kernel} kernel built in {out}")
        session = kernel == request.config.getoption("--nvlab-kernel")
        identity = lab.boot_identity(env, out, cpu=config.cpu, smp=config.smp, append=config.append)
        smp = re.search(r"-smp (\d+)", lab.qemu_driver_config(env)["extra_args"])
        if (session and config.cpu is None and smp and config.smp == int(smp.group(1))
                and not config.append):
            # the session's boot has exactly these options
            a = collect(request.getfixturevalue("shell"))
        else:
            seen = None if session else lab.recorded(out, f"hwprobe-{config.id}", identity)
            if seen is not None:
                a = _answers_from_json(seen)
            else:
                # kept up for other tests that need a second boot (lab.ExtraBoots)
                sh = request.getfixturevalue("extra_boots").get(
                    cpu=config.cpu, smp=config.smp, append=config.append, out=None if session else out)
                a = collect(sh)
        if kernel == "ours":
            lab.record(out, f"hwprobe-{config.id}", identity, _answers_json(a))
        _booted[key] = a
        if logdir:
            lines = [f"# {kernel} kernel, -cpu {config.cpu or '(environment)'} -smp {config.smp}",
                     f"# isa {a.isa}, mmu {a.mmu}"]
            lines += [f"{k} {key_} {v:#x} vdso {a.vdso[k][1]:#x}"
                      for k, (key_, v) in a.syscall.items()]
            (Path(logdir) / f"hwprobe-{config.id}-{kernel}.txt").write_text("\n".join(lines) + "\n")
    return _booted[key]


def expected(config, env):
    cpu = config.cpu or lab.qemu_driver_config(env)["cpu"]
    props = dict(QEMU_DEFAULTS)
    for k, v in _props(cpu).items():
        props[k] = v if k in ("mvendorid", "marchid", "mimpid", "vlen") else v in ("true", "on")
    fd = props["f"] and props["d"]
    ext = FD if fd else 0
    if props["c"]:
        ext |= C | ZCA | (ZCD if fd else 0)
    for prop, bit in EXT_BITS.items():
        if props.get(prop):
            ext |= 1 << bit
    if fd and props["Zfh"]:
        ext |= ZFH
    if fd and props["Zfhmin"]:
        ext |= ZFHMIN
    # QEMU 7.2 cannot limit the MMU mode and our 6.1 has no no4lvl/no5lvl:
    # the kernel uses Sv57 on every configuration here
    satp = "sv57"
    return {
        MVENDORID: int(props.get("mvendorid", "0"), 0),
        MARCHID: int(props.get("marchid", "0"), 0),
        MIMPID: int(props.get("mimpid", "0"), 0),
        BASE_BEHAVIOR: BASE_BEHAVIOR_IMA,
        IMA_EXT_0: ext,
        "vector": bool(props["v"]),
        "satp": satp,
    }


@pytest.mark.timeout(1800)  # boots the board with this configuration
@pytest.mark.parametrize("config", CONFIGS, ids=[c.id for c in CONFIGS])
def test_values_match_board(board_is_riscv, config, kernel_under_test, request):
    """Every key's value follows from the -cpu/-smp/kernel options of the boot."""
    env = board_is_riscv
    a = answers_for(request, config, kernel_under_test)
    want = expected(config, env)
    got = {k: v for k, (key, v) in a.syscall.items() if key == k}
    assert a.cpus == config.smp
    for k in KEYS_ALL:
        assert k in got, f"key {k} unknown to the kernel: {a.syscall[k]}"
    for k in (MVENDORID, MARCHID, MIMPID, BASE_BEHAVIOR):
        assert got[k] == want[k], f"key {k}: {got[k]:#x}, board started with {want[k]:#x}"
    ext = got[IMA_EXT_0]
    if kernel_under_test == "ref":
        # later kernels add the vector bits; check V and compare the rest
        assert bool(ext & V) == want["vector"], f"IMA_V {ext:#x} for v={want['vector']}"
        ext &= ~VECTOR_BITS
    assert ext == want[IMA_EXT_0], (f"IMA_EXT_0 {ext:#x}, expected {want[IMA_EXT_0]:#x} "
                                    f"(isa {a.isa})")
    assert a.mmu == want["satp"]
    assert got[HIGHEST_VIRT_ADDRESS] == SATP_TASK_SIZE[want["satp"]]
    assert got[TIME_CSR_FREQ] == a.timebase, "time CSR frequency differs from the DT"
    assert got[ZICBOZ_BLOCK_SIZE] == 0, "QEMU 7.2 has no Zicboz"
    # measured at boot: fast or slow, both keys agree, and as the log says
    assert got[CPUPERF_0] in (MISALIGNED_SLOW, MISALIGNED_FAST)
    assert got[MISALIGNED_SCALAR_PERF] == got[CPUPERF_0]
    if kernel_under_test == "ours":
        word = "fast" if got[CPUPERF_0] == MISALIGNED_FAST else "slow"
        cpus_logged = [line for line in a.misaligned_log if re.search(r"CPU\d+: .*: (fast|slow)$", line)]
        assert len(cpus_logged) == config.smp, a.misaligned_log
        assert all(line.endswith(word) for line in cpus_logged), a.misaligned_log
    # keys nobody defines
    for k in range(10, 16):
        assert a.syscall[k] == (-1, 0)


@pytest.mark.timeout(1800)  # boots the board unless test_values_match_board did
@pytest.mark.parametrize("config", CONFIGS, ids=[c.id for c in CONFIGS])
def test_vdso_equals_syscall(board_is_riscv, config, kernel_under_test, request):
    a = answers_for(request, config, kernel_under_test)
    assert a.vdso == a.syscall


@pytest.mark.timeout(2700)  # up to two boots (reference and ours)
@pytest.mark.parametrize("config", CONFIGS, ids=[c.id for c in CONFIGS])
def test_same_answers_as_ours(board_is_riscv, config, kernel_under_test, request):
    """Differential: on the reference kernel, boot our kernel with the same
    board options; every key both know gets the same answer (IMA_EXT_0
    without the vector bits our 6.1 cannot offer)."""
    if kernel_under_test != "ref":
        pytest.skip("differential runs in the reference kernel's session")
    ref = answers_for(request, config, "ref")
    ours = answers_for(request, config, "ours")
    diffs = []
    for k in range(16):
        (rk, rv), (ok, ov) = ref.syscall[k], ours.syscall[k]
        if rk == -1 or ok == -1:
            continue  # a key one of them does not know
        if k == IMA_EXT_0:
            rv &= ~VECTOR_BITS
        if rv != ov:
            diffs.append(f"key {k}: ref {rv:#x}, ours {ov:#x}")
    known_ours = {k for k, (key, _) in ours.syscall.items() if key != -1}
    known_ref = {k for k, (key, _) in ref.syscall.items() if key != -1}
    assert not diffs, "\n".join(diffs)
    assert known_ref <= known_ours, f"keys the reference knows and ours not: {known_ref - known_ours}"


# ---- semantics, on the session's board (environment -cpu, two harts) ----

def test_unknown_keys(board_is_riscv, shell):
    rc, err, pairs = query(shell, "-- 0 1000 -5 4 0x7fffffffffffffff")
    assert (rc, err) == (0, "0")
    assert pairs[0][0] == 0 and pairs[3][0] == 4
    for i in (1, 2, 4):
        assert pairs[i] == (-1, 0), f"unknown key answered {pairs[i]}"


def test_flags_rejected(board_is_riscv, shell):
    # bit 0 is RISCV_HWPROBE_WHICH_CPUS on later kernels; bit 1 is nobody's
    for flags in ("0x2", "0x80000000"):
        rc, err, _ = query(shell, f"-f {flags} 0")
        assert (rc, err) == (-1, "EINVAL"), f"flags {flags}"


def test_cpu_sets(board_is_riscv, shell):
    _, _, everything = query(shell)
    for cpus in ("0-1", "0", "1"):
        rc, err, pairs = query(shell, f"-c {cpus}")
        assert (rc, err) == (0, "0"), f"CPUs {cpus}"
        assert pairs == everything, f"CPUs {cpus} answer differently from all online CPUs"
    # a set much larger than the kernel's CPU mask
    rc, err, pairs = query(shell, "-c 0 -s 4096")
    assert (rc, err) == (0, "0") and pairs == everything
    # CPUs that do not exist
    rc, err, _ = query(shell, "-c 100-127")
    assert (rc, err) == (-1, "EINVAL")


def test_offline_cpus(board_is_riscv, shell):
    online = "/sys/devices/system/cpu/cpu1/online"
    _, _, before = query(shell)
    shell.run_check(f"echo 0 > {online}")
    try:
        assert shell.run_check(f"cat {online}")[0] == "0"
        rc, err, _ = query(shell, "-c 1")
        assert (rc, err) == (-1, "EINVAL"), "a set of only offline CPUs must be EINVAL"
        rc, err, pairs = query(shell, "-c 0-1")
        assert (rc, err, pairs) == (0, "0", before)
        # the vDSO's cached answers follow the online CPUs
        assert query(shell, "-v") == query(shell)
    finally:
        shell.run_check(f"echo 1 > {online}")
    assert query(shell, "-c 1")[:2] == (0, "0")
    assert query(shell, "-v") == (0, "0", before)


def test_bad_pointers(board_is_riscv, shell, kernel_under_test):
    assert query(shell, "-P 0 1")[:2] == (-1, "EFAULT")
    assert query(shell, "-C -s 128 0")[:2] == (-1, "EFAULT")
    # nothing to read or write: the bad pointer is never touched
    assert query(shell, "-P -n 0") == (0, "0", [])
    if kernel_under_test == "ours":
        # through the vDSO, a CPU set goes to the kernel and faults there.
        # (6.12's vDSO answers any CPU set from its cache when all harts
        # are alike, without reading the set.)
        assert query(shell, "-v -C -s 128 0")[:2] == (-1, "EFAULT")


def test_vdso_symbol_and_fallback(board_is_riscv, shell, kernel_under_test):
    assert shell.run_check("hwprobe vdso")[0].startswith("__vdso_riscv_hwprobe 0x")
    for args in ("-c 0", "-c 1", "-c 0 -s 4096"):
        assert query(shell, "-v " + args) == query(shell, args), args
    assert query(shell, "-v -f 0x2 0")[:2] == (-1, "EINVAL")
    if kernel_under_test == "ours":
        # a set without online CPUs goes to the kernel (see test_bad_pointers)
        assert query(shell, "-v -c 100-127")[:2] == (-1, "EINVAL")


FILTER_ERRNO = "EXFULL"  # what hwprobe-nokernel's seccomp filter makes riscv_hwprobe return


def _nokernel(sh):
    """Run hwprobe-nokernel -> ({step: (rc, errno, same)}, (calls, failed, differ), output)."""
    out, _, rc = sh.run("hwprobe-nokernel", timeout=300)
    text = "\n".join(out)
    # killed by the filter (a system call other than riscv_hwprobe, write
    # or exit) or a setup error: no "done", non-zero status
    assert rc == 0 and out and out[-1] == "done", f"hwprobe-nokernel exited {rc}:\n{text}"
    steps = {}
    for line in out:
        m = re.fullmatch(r"(\S+) rc=(-?\d+) errno=(\S+)(?: same=(yes|no))?", line)
        if m:
            steps[m.group(1)] = (int(m.group(2)), m.group(3), m.group(4))
    loop = next(m for m in (re.fullmatch(r"vdso-all-loop calls=(\d+) failed=(\d+) differ=(\d+)", line)
                            for line in out) if m)
    return steps, tuple(int(x) for x in loop.groups()), text


def test_vdso_answers_without_kernel(board_is_riscv, shell, kernel_under_test):
    """Under a seccomp filter (riscv_hwprobe -> EXFULL, write/exit allowed,
    any other system call kills the program): the vDSO still answers the
    all-CPU query, with the system call's answers from before the filter,
    so it never entered the kernel; what it must pass on (a flag nobody
    defines; on our kernel also a CPU set) gets the filter's EXFULL, so the
    fallback really is the system call."""
    steps, (calls, failed, differ), text = _nokernel(shell)
    # before the filter: the kernel answers, and rejects the flag itself
    assert steps["before-syscall"] == (0, "0", None), text
    assert steps["before-vdso-cpuset"] == (0, "0", "yes"), text
    assert steps["before-vdso-flags"] == (-1, "EINVAL", None), text
    # the filter is in force: the system call is refused
    assert steps["syscall"] == (-1, FILTER_ERRNO, None), text
    # fast path: no system call, and the answers from before the filter
    assert steps["vdso-all"] == (0, "0", "yes"), text
    assert calls > 0 and (failed, differ) == (0, 0), text
    # fallback: to the system call, hence the filter's errno
    assert steps["vdso-flags"] == (-1, FILTER_ERRNO, None), text
    if kernel_under_test == "ours":
        # our vDSO answers only the all-CPU query
        assert steps["vdso-cpuset"] == (-1, FILTER_ERRNO, None), text
    else:
        # 6.12 answers any CPU set itself when the harts' IDs say they are
        # alike (the three IDs OR-ed together neither 0 nor all ones)
        _, _, ids = query(shell, "0 1 2")
        smash = ids[0][1] | ids[1][1] | ids[2][1]
        alike = smash not in (0, (1 << 64) - 1)
        want = (0, "0", "yes") if alike else (-1, FILTER_ERRNO, None)
        assert steps["vdso-cpuset"] == want, text


def slab_objects(sh):
    """/proc/slabinfo: cache name -> active objects"""
    objs = {}
    for line in sh.run_check("cat /proc/slabinfo", timeout=120)[2:]:
        fields = line.split()
        objs[fields[0]] = objs.get(fields[0], 0) + int(fields[1])
    return objs


def assert_no_growth(before, after, objects, per, processes):
    """no slab cache gained `objects` objects (one per `per`) between the
    slab_objects() `before` and `after`; each (rss0, rss1, slab0, slab1) of
    `processes` kept its RSS and the kernel's slab within noise"""
    grown = {name: after[name] - before.get(name, 0) for name in after
             if after[name] - before.get(name, 0) >= objects}
    assert not grown, f"slab caches grew by at least one object per {per}: {grown}"
    for rss0, rss1, slab0, slab1 in processes:
        assert rss1 <= rss0, f"process grew from {rss0} to {rss1} kB"
        # coarse: pages taken by the slab caches (noise: a few hundred kB)
        assert slab1 - slab0 < 512, f"kernel slab grew from {slab0} to {slab1} kB"


LOOP_CALLS = 15000  # per process


@pytest.mark.patched  # a property of our implementation
@pytest.mark.timeout(1200)  # the loop may take up to 900 s under TCG
def test_many_calls_no_memory_growth(board_is_riscv, shell, pytestconfig):
    """3*10^4 system calls (two processes, one per hart, one key per call):
    every call succeeds, answers do not change, the process does not grow,
    and no slab cache gains anywhere near one object per call. Objects, not
    kB: the kernel's slab total moves by some hundred kB either way in such
    a window (freed slabs, per-CPU partial lists), an object count per cache
    by a few slabs' worth at most, while a leak of one allocation per call
    adds 3*10^4 objects to one cache."""
    before = slab_objects(shell)
    out = shell.run_check(f"hwprobe loop {LOOP_CALLS} & hwprobe loop {LOOP_CALLS}; wait", timeout=900)
    after = slab_objects(shell)
    results = [re.search(r"calls=(\d+) rss_kb=(\d+)->(\d+) slab_kb=(\d+)->(\d+)", line) for line in out]
    results = [m for m in results if m]
    assert len(results) == 2, out
    calls = sum(int(m.group(1)) for m in results)
    assert calls == 2 * LOOP_CALLS
    logdir = pytestconfig.option.lg_log
    if logdir:
        growth = sorted(((after[n] - before.get(n, 0), n) for n in after), reverse=True)[:5]
        (Path(logdir) / "hwprobe-loop.txt").write_text(
            "\n".join(out) + "\nlargest slab growth (objects): "
            + ", ".join(f"{n} {d:+d}" for d, n in growth) + "\n")
    assert_no_growth(before, after, calls // 2, "two calls",
                     [tuple(int(m.group(i)) for i in (2, 3, 4, 5)) for m in results])


# the campaign's figure; NVLAB_HWPROBE_FUZZ_CALLS sets another
FUZZ_CALLS = int(os.environ.get("NVLAB_HWPROBE_FUZZ_CALLS", 100_000))


@pytest.mark.timeout(1500)
def test_fuzz_arguments(board_is_riscv, shell, pytestconfig):
    """10^5 calls with random arguments (tests/guest/riscv/hwprobe.c
    cmd_fuzz: pair counts, keys, CPU set sizes and contents, flags, and
    pointers fine, misaligned, NULL, unmapped, read-only or the kernel's),
    half through the vDSO: each result 0, EINVAL or EFAULT; 0 with the
    right answers wherever the arguments are fine; no process or slab
    growth; no splat (the session's console check). The seed is new each
    run and printed, so a failure can be replayed."""
    seed = int.from_bytes(os.urandom(4), "little") | 1
    before = slab_objects(shell)
    out, _, rc = shell.run(f"hwprobe fuzz {FUZZ_CALLS} {seed}", timeout=1200)
    after = slab_objects(shell)
    text = "\n".join(out)
    assert rc == 0, f"hwprobe fuzz (seed {seed}) exited {rc}:\n{text[-2000:]}"
    m = re.search(r"fuzz calls=(\d+) vdso=(\d+) ok=(\d+) EINVAL=(\d+) EFAULT=(\d+) "
                  r"rss_kb=(\d+)->(\d+) slab_kb=(\d+)->(\d+) seconds=([\d.]+)", text)
    assert m, text[-2000:]
    calls, vdso, ok, einval, efault, rss0, rss1, slab0, slab1 = map(int, m.groups()[:-1])
    print(f"\nnvlab: hwprobe fuzz: {calls} calls ({vdso} through the vDSO) in {m.group(10)} s: "
          f"{ok} answered, {einval} EINVAL, {efault} EFAULT; RSS {rss0}->{rss1} kB, "
          f"slab {slab0}->{slab1} kB (seed {seed})")
    assert calls == FUZZ_CALLS and ok + einval + efault == calls
    # the mix is wide enough to mean something: each outcome, both paths
    assert vdso == calls // 2 and min(ok, einval, efault) > calls // 50, text
    logdir = pytestconfig.option.lg_log
    if logdir:
        (Path(logdir) / "hwprobe-fuzz.txt").write_text(text + "\n")
    assert_no_growth(before, after, calls // 20, "20 calls", [(rss0, rss1, slab0, slab1)])


@pytest.mark.timeout(1800)  # each program may take up to 600 s
def test_kselftest(board_is_riscv, shell, subtests):
    """The kernel's own riscv hwprobe kselftests, KTAP parsed per case."""
    progs = shell.run_check("ls /usr/bin | grep '^kselftest-riscv-hwprobe-' || true")
    assert "kselftest-riscv-hwprobe-hwprobe" in progs, f"no hwprobe kselftest in the initramfs: {progs}"
    for prog in progs:
        out, _, rc = shell.run(prog, timeout=600)
        plan = next((int(m.group(1)) for m in (re.match(r"1\.\.(\d+)", line) for line in out) if m), None)
        cases = [m for m in (re.match(r"(not ok|ok) (\d+) (.*)", line) for line in out) if m]
        totals = next((line for line in out if line.startswith("# Totals:")), "")
        for m in cases:
            with subtests.test(msg=f"{prog} {m.group(2)} {m.group(3)}"):
                assert m.group(1) == "ok" or "# SKIP" in m.group(3), "\n".join(out[-20:])
        with subtests.test(msg=f"{prog} summary"):
            assert rc == 0, f"{prog} exited {rc}: " + "\n".join(out[-20:])
            assert re.search(r"fail:0 .*error:0", totals), f"{prog}: {totals!r}"
            if plan is None:
                # a program that enables no test on this CPU (the 6.12 cbo
                # test without Zicbom/Zicboz) prints no plan and no result
                assert not cases, f"{prog}: results without a plan"
            else:
                assert len(cases) == plan, f"{prog}: plan {plan}, {len(cases)} results"


@pytest.mark.timeout(1800)  # the benchmark may take up to 1200 s
def test_benchmark(board_is_riscv, shell, pytestconfig):
    """Figures only (no timing assertion): ns per call of the vDSO, the
    system call and parsing /proc/cpuinfo, with their ratios. A short run
    (a system call takes most of a millisecond under KASAN and TCG);
    `make bench-hwprobe` takes its time for steadier figures."""
    out = shell.run_check("hwprobe bench 2000", timeout=1200)
    print("\n" + "\n".join(out))
    logdir = pytestconfig.option.lg_log
    if logdir:
        (Path(logdir) / "hwprobe-bench.txt").write_text("\n".join(out) + "\n")
    assert any(line.startswith("bench vdso_ns=") for line in out)
