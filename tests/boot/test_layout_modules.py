"""Layouts built as modules, as distribution kernels build them: the module
is loaded without anyone naming it (the uevent of the nvmem-layout node's
device carries its MODALIAS, the guest's mdev runs modprobe: guest/init,
guest/mdev.conf), it binds to devices registered before it, consumers wait
for it, it cannot go while a consumer holds one of its cells, and without
consumers it goes with its cells and comes back with the same ones.

Which layouts are modules is the board's config fragments' word
(lab.LAYOUT_MODULES); the devices they serve are the board's LAYOUTS
promises with their compatible. The consumer that holds cells is the test
module nvmem_cell_holder (tests/guest/modules/), which takes the cells a
device tree node names in nvmem-cells, as a driver does at probe.

The reference kernel (6.12.117) runs what it supports: autoloading, late
binding and the refusal of rmmod while a cell is held. Unloading a layout
while its cells exist is ours only: 6.12 leaves the cells, and their read
hooks, behind (see kernel-patches/README.md)."""
import time

import pytest

import lab

READERS = 4
CYCLES = 100
REBINDS = 100
HOLDER = "nvmem_cell_holder"
EPROBE_DEFER = 517
# growth of the slab (caches shrunk, KASAN's quarantine drained) between
# the 10th and the last load/unload cycle that is still noise
SLAB_NOISE_KIB = 2048


def modular_layouts(config, kernel):
    """[(module, compatible)] the board's fragments build as modules"""
    opts = lab.fragment_options(lab.board_under_test(config), kernel)
    return [mc for opt, mc in lab.LAYOUT_MODULES.items() if opts.get(opt) == "m"]


@pytest.fixture(scope="module")
def layout_modules(pytestconfig, kernel_under_test):
    mods = modular_layouts(pytestconfig, kernel_under_test)
    if not mods:
        pytest.skip("the board's config fragments build no layout as a module for this kernel")
    return mods


@pytest.fixture(scope="module")
def module_shell(extra_boots):
    """a boot besides the session's: these tests unload and reload layouts
    and unbind providers (its kernel log is checked after each test and when
    the session ends)"""
    return extra_boots.get()


def layout_targets(pytestconfig, kernel, compatible):
    """the attachments whose whole device has a layout of `compatible`,
    bar the hostile images (eeprom-images/hostile/, held by test_cells.py):
    the module's life cycle is tested on the board's own images"""
    board = lab.board_under_test(pytestconfig)
    promises = lab.board_promises(board, kernel)
    by_image = {a.file.stem: a for a in lab.attachments(lab.board_env(pytestconfig))}
    hostile = {d.stem for d in lab.hostile_images.descriptions()}
    targets = [by_image[p.image] for p in promises.layouts
               if p.compatible == compatible and not p.partition and p.image not in hostile]
    assert targets, f"{board}: no LAYOUTS promise with {compatible} for kernel '{kernel}'"
    return targets


def devices_of(shell, targets):
    devs = lab.nvmem_devices(shell)
    return [lab.find_device(shell, a, devs) for a in targets]


def layout_device(shell, dev):
    """the nvmem-layout bus device of nvmem device `dev`, or None"""
    # one fork per device: 60 of them under KASAN beside another session
    # took more than run_check's 30 s
    out = shell.run_check(
        "for d in /sys/bus/nvmem-layout/devices/*; do [ -e \"$d\" ] || continue; "
        "p=$(readlink -f $d); p=${p%/*}; echo \"${d##*/} ${p##*/}\"; done", timeout=300)
    hits = [name for name, parent in (line.split() for line in out) if parent == dev]
    assert len(hits) <= 1, f"{dev}: several layout devices {hits}"
    return hits[0] if hits else None


def bound_driver(shell, ldev):
    out = shell.run(f"basename $(readlink /sys/bus/nvmem-layout/devices/{ldev}/driver) 2>/dev/null")[0]
    return out[0] if out else None


def loaded(shell, module):
    return shell.run(f"grep -q '^{module} ' /proc/modules")[2] == 0


def refcount(shell, module):
    return int(shell.run_check(f"cat /sys/module/{module}/refcnt")[0])


def settle(sh):
    """wait until mdev has handled every uevent so far, as udevadm settle
    would: each nvmem device a test registers announces its layout device,
    and mdev runs modprobe for it; one still running would race the test's
    own rmmod. A synthetic uevent (of the kernel's module kobject) marks the
    end of the queue; mdev logs the sequence numbers it handled
    (guest/mdev.conf) and handles them in order."""
    sh.run_check("s=$(cat /sys/kernel/uevent_seqnum); echo add > /sys/module/kernel/uevent; i=0; "
                 "while m=$(cat /run/nvlab-mdev-seqnum); [ \"${m:-0}\" -le $s ]; do "
                 "i=$((i+1)); [ $i -lt 3000 ] || exit 1; sleep 0.1; done", timeout=400)


def holder_args(shell, pytestconfig, kernel, compatible):
    """(node, cells) for nvmem_cell_holder: a device tree consumer of a cell
    of a `compatible` layout and its nvmem-cell-names, all of them: the node
    of a MAC_CELLS promise on such a layout (ast2600-evb), else
    /nvlab-consumer (dts/riscv64-virt-rmem.dtso)"""
    promises = lab.board_promises(lab.board_under_test(pytestconfig), kernel)
    compat = {p.target: p.compatible for p in promises.layouts}
    nodes = [p.consumer for p in promises.macs
             if p.consumer.startswith("/") and compat[p.target] == compatible]
    node = nodes[0] if nodes else "/nvlab-consumer"
    names = shell.run_check(f"tr '\\0' , < /sys/firmware/devicetree/base{node}/nvmem-cell-names")[0]
    return node, names.rstrip(",")


def test_autoloaded_at_boot(shell, layout_modules, pytestconfig, kernel_under_test):
    """every modular layout is loaded at boot, unasked: the uevent of each
    of its nvmem-layout devices carries the node's MODALIAS, mdev saw one
    and ran modprobe, and the layout is bound to every device"""
    events = shell.run("cat /run/nvlab-uevents")[0]
    for module, compatible in layout_modules:
        assert loaded(shell, module), f"{module} not loaded at boot; uevents with MODALIAS: {events}"
        for dev in devices_of(shell, layout_targets(pytestconfig, kernel_under_test, compatible)):
            ldev = layout_device(shell, dev)
            assert ldev, f"{dev}: no nvmem-layout device"
            uevent = shell.run_check(f"cat /sys/bus/nvmem-layout/devices/{ldev}/uevent")
            alias = [line.split("=", 1)[1] for line in uevent if line.startswith("MODALIAS=")]
            assert alias and alias[0].endswith("C" + compatible), f"{ldev} uevent: {uevent}"
            if kernel_under_test == "ours":
                # (6.12's layout devices have no modalias attribute)
                assert shell.run_check(f"cat /sys/bus/nvmem-layout/devices/{ldev}/modalias")[0] == alias[0]
            # mdev handled an event with this alias (the coldplug replay
            # skips devices that a module loaded meanwhile has bound, so
            # not every device has its own line)
            assert any(line.endswith(f" MODALIAS={alias[0]}") for line in events), \
                f"mdev logged no uevent with {alias[0]} ({ldev}): {events}"
            # ours binds to a device whose image it rejects too (no cells);
            # 6.12's probe fails there and leaves the device unbound
            if kernel_under_test == "ours" or lab.nvmem_cells(shell, dev)[dev]:
                assert bound_driver(shell, ldev), f"{ldev} ({compatible}) is not bound"


@pytest.fixture(scope="module")
def late_shell(extra_boots):
    """a boot without hotplug (nvlab.hotplug=0): nothing loads the layouts"""
    return extra_boots.get(append="nvlab.hotplug=0")


def test_late_binding(late_shell, shell, layout_modules, pytestconfig, kernel_under_test):
    """a layout loaded long after its devices registered gives them their
    cells, the same as at boot; until then a consumer is told to wait"""
    sh = late_shell
    for module, compatible in layout_modules:
        node, names = holder_args(sh, pytestconfig, kernel_under_test, compatible)
        assert not loaded(sh, module), f"{module} loaded without hotplug"
        targets = layout_targets(pytestconfig, kernel_under_test, compatible)
        devs = devices_of(sh, targets)
        before = lab.nvmem_cells(sh, *devs)
        assert not any(before.values()), f"cells without {module}: {before}"
        for dev in devs:
            ldev = layout_device(sh, dev)
            assert ldev and not bound_driver(sh, ldev), f"{dev}: layout device {ldev}"
        out, _, rc = insmod_holder(sh, node, names)
        # the consumer is told to wait: -EPROBE_DEFER (517) from its init
        log = "\n".join(lab.dmesg(sh)[-5:])
        if rc == 0:
            sh.run(f"rmmod {HOLDER}")
        assert rc != 0, f"{HOLDER} got the cells {names} of {node} before {module} was loaded"
        assert "-EPROBE_DEFER" in log or str(EPROBE_DEFER) in " ".join(out), (out, log)

        sh.run_check(f"modprobe {module}")
        after = lab.nvmem_cells(sh, *devs)
        want = lab.nvmem_cells(shell, *devices_of(shell, targets))
        assert list(after.values()) == list(want.values()), \
            f"late binding of {module}: {after} differ from the boot's {want}"
    lab.assert_no_splat(sh, "late binding")


def insmod_holder(sh, node, names):
    return sh.run(f"insmod $(find /lib/modules -name {HOLDER}.ko) node={node} cells={names}")


def test_unload_refused_while_held(module_shell, layout_modules, pytestconfig, kernel_under_test):
    """rmmod of a layout is refused while a consumer holds one of its
    cells; the cells stay readable. Ours: once released, rmmod removes the
    layout's cells and their files (the raw device stays), and loading it
    again gives the same cells, once"""
    sh = module_shell
    settle(sh)
    for module, compatible in layout_modules:
        node, names = holder_args(sh, pytestconfig, kernel_under_test, compatible)
        devs = devices_of(sh, layout_targets(pytestconfig, kernel_under_test, compatible))
        cells = lab.nvmem_cells(sh, *devs)
        out, _, rc = insmod_holder(sh, node, names)
        assert rc == 0, f"insmod {HOLDER} node={node} cells={names}: {out}"
        try:
            held = refcount(sh, module)
            assert held >= 1, f"{HOLDER} holds {names} of {node}, {module} has refcnt {held}"
            out, _, rc = sh.run(f"rmmod {module}")
            assert rc != 0, f"rmmod {module} while {HOLDER} holds its cell: {out}"
            print(f"rmmod {module} with {names} of {node} held (refcnt {held}): {' '.join(out)}")
            assert loaded(sh, module)
            assert lab.nvmem_cells(sh, *devs) == cells
        finally:
            sh.run_check(f"rmmod {HOLDER}")
        assert refcount(sh, module) == 0, f"{module} still held after {HOLDER} went"
        if kernel_under_test != "ours":
            continue
        sh.run_check(f"rmmod {module}")
        gone = lab.nvmem_cells(sh, *devs)
        assert not any(gone.values()), f"cells left after rmmod {module}: {gone}"
        for dev in devs:
            assert sh.run(f"cat /sys/bus/nvmem/devices/{dev}/nvmem | wc -c")[2] == 0
        sh.run_check(f"modprobe {module}")
        assert lab.nvmem_cells(sh, *devs) == cells, f"reloading {module} gave other cells"
    lab.assert_no_splat(sh, "rmmod refused while held, unload and reload")


def test_consumer_waits_for_layout(module_shell, layout_modules, pytestconfig, kernel_under_test):
    """ours, where a network interface takes its MAC from a modular
    layout's cell (MAC_CELLS of board.conf): with the layout gone the
    interface goes (the driver core unbinds the consumer of the layout's
    device), with it back the interface comes back with the same address"""
    if kernel_under_test != "ours":
        pytest.skip("unloading a layout with cells: ours only (6.12 leaves the cells behind)")
    sh = module_shell
    promises = lab.board_promises(lab.board_under_test(pytestconfig), kernel_under_test)
    compat = {p.target: p.compatible for p in promises.layouts}
    mods = dict((c, m) for m, c in layout_modules)
    cases = [(p, mods[compat[p.target]]) for p in promises.macs if compat[p.target] in mods]
    if not cases:
        pytest.skip("no MAC promise on a modular layout on this board")
    settle(sh)
    for p, module in cases:
        before = {node: (iface, addr) for iface, (node, addr, _, _) in lab.guest_mac_consumers(sh).items()}
        assert p.consumer in before, f"{p.consumer} has no interface: {before}"
        sh.run_check(f"rmmod {module}")
        during = {node for node, *_ in lab.guest_mac_consumers(sh).values()}
        assert p.consumer not in during, f"{p.consumer} kept its interface without {module}"
        sh.run_check(f"modprobe {module}")
        for _ in range(50):
            now = {node: (iface, addr) for iface, (node, addr, _, _) in lab.guest_mac_consumers(sh).items()}
            if p.consumer in now:
                break
            time.sleep(0.2)
        assert p.consumer in now, f"{p.consumer} did not come back after modprobe {module}"
        assert now[p.consumer][1] == before[p.consumer][1], \
            f"{p.consumer}: address {now[p.consumer][1]} after reload, {before[p.consumer][1]} before"
    lab.assert_no_splat(sh, "consumer waiting for its layout")


def readers_start(sh, path, reads=None):
    """READERS readers of `path`: `reads` reads each, or (None) batches of
    500 until readers_stop()"""
    sh.run_check("rm -f /tmp/lreader.* /tmp/ldone.* /tmp/lstop")
    if reads is None:
        loop = f"while [ ! -e /tmp/lstop ]; do nvmem-sysfs read-loop {path} 500; done"
    else:
        loop = f"nvmem-sysfs read-loop {path} {reads}"
    sh.run_check(" ".join(f"({loop} > /tmp/lreader.{i}; : > /tmp/ldone.{i}) &"
                          for i in range(READERS)) + " true")


def readers_stop(sh):
    sh.run_check(": > /tmp/lstop")


def readers_result(sh):
    sh.run_check(f"while [ $(ls /tmp/ldone.* 2>/dev/null | wc -l) -lt {READERS} ]; do sleep 0.2; done",
                 timeout=600)
    return lab.read_loop_results(sh.run_check("cat /tmp/lreader.*"))


def layout_cell_file(sh, devs):
    """a cell file of the first device with cells (one with a read hook,
    a MAC address, when there is one)"""
    cells = lab.nvmem_cells(sh, *devs)
    for dev in devs:
        names = sorted(cells[dev], key=lambda n: ("mac" not in n, n))
        if names:
            return dev, names[0], cells[dev]
    pytest.fail(f"no cells on {devs}")


def test_provider_rebind_with_reader(module_shell, layout_modules, pytestconfig, kernel_under_test):
    """ours: the provider of a modular layout's device unbound and bound
    while readers loop on a layout cell file: data or a clean error, the
    same cells once afterwards (6.12's known race there: test_unbind.py)"""
    if kernel_under_test != "ours":
        pytest.skip("6.12's race of cell reads with unbind is test_unbind.py's known failure")
    sh = module_shell
    module, compatible = layout_modules[0]
    devs = devices_of(sh, layout_targets(pytestconfig, kernel_under_test, compatible))
    dev, cell, cells = layout_cell_file(sh, devs)
    pdev = sh.run_check(f"dirname $(readlink -f /sys/bus/nvmem/devices/{dev})")[0]
    name = pdev.rsplit("/", 1)[1]
    drv = sh.run_check(f"readlink -f {pdev}/driver")[0]
    readers_start(sh, f"/sys/bus/nvmem/devices/{dev}/cells/{cell}", 2000)
    sh.run_check(f"for i in $(seq {REBINDS}); do echo {name} > {drv}/unbind; echo {name} > {drv}/bind; done",
                 timeout=600)
    ok, errors, short = readers_result(sh)
    print(f"\nnvlab: race: {REBINDS} unbind/bind cycles of {name} ({module}) under {READERS} readers "
          f"x 2000 reads of {cell}: {ok} ok, errors {errors}, {len(short)} short")
    settle(sh)
    lab.assert_no_splat(sh, f"{REBINDS} unbind/bind cycles of {name} under {READERS} readers")
    assert not short and set(errors) <= {2, 5, 19, 22}, (errors, short)
    assert ok > 0
    dev_now = sh.run_check(f"basename $(dirname $(ls -d {pdev}/*/nvmem))")[0]
    assert lab.nvmem_cells(sh, dev_now)[dev_now] == cells


def slab_kib(sh):
    """the slab's size after every cache is shrunk: a shrink also frees
    what KASAN's quarantine holds of the cache, which otherwise grows with
    the objects freed (every unbind of every device of the layout)"""
    sh.run_check("for f in /sys/kernel/slab/*/shrink; do echo 1 > $f; done", timeout=120)
    return int(sh.run_check("sed -n 's/^Slab: *\\([0-9]*\\) kB/\\1/p' /proc/meminfo")[0])


def slab_caches(sh):
    """{cache: KiB its active objects take} from /proc/slabinfo"""
    sizes = {}
    for line in sh.run_check("tail -n +3 /proc/slabinfo"):
        f = line.split()
        if len(f) > 3 and f[1].isdigit():
            sizes[f[0]] = int(f[1]) * int(f[3]) // 1024
    return sizes


def grown(before, after, n=8):
    """the n caches that grew most from `before` to `after`"""
    diff = sorted(((after[c] - before.get(c, 0), c) for c in after), reverse=True)[:n]
    return ", ".join(f"{c} +{d} KiB" for d, c in diff if d > 0)


def test_load_unload_cycles(module_shell, layout_modules, pytestconfig, kernel_under_test):
    """ours, on a kernel with kmemleak (riscv64-virt: KASAN and lockdep
    too): 100 unload/load cycles of a layout while 4 readers loop on one of
    its cell files: no splat, no new leak in kmemleak's scan, the slab not
    growing beyond noise, the same cells at the end"""
    opts = lab.fragment_options(lab.board_under_test(pytestconfig), kernel_under_test)
    if kernel_under_test != "ours" or opts.get("CONFIG_DEBUG_KMEMLEAK") != "y":
        pytest.skip("the load/unload loop runs on our debug kernel (CONFIG_DEBUG_KMEMLEAK=y)")
    sh = module_shell
    settle(sh)
    module, compatible = layout_modules[0]
    devs = devices_of(sh, layout_targets(pytestconfig, kernel_under_test, compatible))
    dev, cell, _ = layout_cell_file(sh, devs)
    cells = lab.nvmem_cells(sh, *devs)
    kml = lab.KMEMLEAK
    assert sh.run(f"test -w {kml}")[2] == 0, "no kmemleak"
    # compared, not cleared: what kmemleak held before the loop is not the loop's
    known = lab.kmemleak_suspects(sh)
    cycle = f"rmmod {module} && modprobe {module}"
    # mdev (hotplug) stopped for the loop: each cycle sends dozens of
    # uevents, which queue in its netlink socket faster than it handles
    # them under TCG (megabytes of slab, freed as it catches up), and the
    # loop loads and unloads the module itself
    sh.run_check("kill $(pidof mdev); while pidof mdev >/dev/null; do sleep 0.1; done", timeout=60)
    try:
        sh.run_check(f"for i in $(seq 10); do {cycle} || exit 1; done", timeout=300)
        slab0, caches0 = slab_kib(sh), slab_caches(sh)
        readers_start(sh, f"/sys/bus/nvmem/devices/{dev}/cells/{cell}")
        t0 = time.monotonic()
        n = sh.run_check(f"n=0; while [ $n -lt {CYCLES - 10} ]; do {cycle} || break; n=$((n+1)); done; echo $n",
                         timeout=1200)[-1]
        elapsed = time.monotonic() - t0
        readers_stop(sh)
        ok, errors, short = readers_result(sh)
        slab1, caches1 = slab_kib(sh), slab_caches(sh)
        assert int(n) == CYCLES - 10, f"cycle {int(n) + 11} of rmmod/modprobe {module} failed"
        lab.assert_no_splat(sh, f"{CYCLES} unload/load cycles of {module} under {READERS} readers")
        new = {h: r for h, r in lab.kmemleak_suspects(sh).items() if h not in known}
        print(f"\nnvlab: race: {CYCLES} unload/load cycles of {module} in {elapsed:.0f} s; readers: {ok} reads ok, errors {errors}; "
              f"slab {slab0} -> {slab1} KiB; kmemleak: {len(new)} new")
        assert not new, "kmemleak after the loop:\n" + "\n".join(line for r in new.values() for line in r)[:6000]
        assert not short and set(errors) <= {2, 5, 19, 22}, (errors, short)
        assert ok > 0, "no read got the cell while the layout came and went"
        assert slab1 - slab0 < SLAB_NOISE_KIB, \
            f"slab grew by {slab1 - slab0} KiB in {CYCLES - 10} cycles: {grown(caches0, caches1)}"
    finally:
        sh.run_check("mdev -d")
    assert lab.nvmem_cells(sh, *devs) == cells
