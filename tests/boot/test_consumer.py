"""A cell read by a kernel consumer and through sysfs at the same time:
both keep getting the bytes they got first. The consumer is the test
module nvmem_cell_holder (tests/guest/modules/) holding the cells of the
board's consumer node, its kernel thread reading each READS times; two
`nvmem-sysfs read-loop`s read the sysfs file of each of those cells
meanwhile, each read compared with the file's first content. (The MAC
hooks post-process into the reader's buffer: a hook or a core path that
shared state between readers would show here as bytes that differ.)"""
import os
import re

import pytest

import lab

HOLDER = "nvmem_cell_holder"
# reads per cell and reader; NVLAB_CONSUMER_READS shortens a local run
READS = int(os.environ.get("NVLAB_CONSUMER_READS", "10000"))


def consumer_node(shell, promises):
    """the node nvmem_cell_holder takes cells of: a promised MAC consumer
    in the device tree (ast2600-evb), else /nvlab-consumer (riscv64-virt)"""
    nodes = [p.consumer for p in promises.macs if p.consumer.startswith("/")]
    node = nodes[0] if nodes else "/nvlab-consumer"
    rc = shell.run(f"test -e /proc/device-tree{node}/nvmem-cells")[2]
    assert rc == 0, f"{promises.board}: no consumer node {node} with nvmem-cells"
    return node


def consumer_cells(shell, node):
    """[(name in nvmem-cell-names, sysfs cell file)] of the node's cells"""
    names = [n for n in shell.run_check(f"tr '\\0' '\\n' < /proc/device-tree{node}/nvmem-cell-names") if n]
    raw = "".join(shell.run_check(f"od -An -v -tx1 /proc/device-tree{node}/nvmem-cells")).split()
    words = [int("".join(raw[i:i + 4]), 16) for i in range(0, len(raw), 4)]
    phandles = {}
    for line in shell.run_check("cd /proc/device-tree && find . -name phandle | while read p; do "
                                "echo \"$(od -An -tx1 $p | tr -d ' \\n') ${p%/phandle}\"; done", timeout=300):
        value, path = line.split(" ", 1)
        phandles[int(value, 16)] = path[1:]
    devs = {of.removeprefix("/sys/firmware/devicetree/base"): name
            for name, (_, of) in lab.nvmem_devices(shell).items() if of}
    found, i = [], 0
    while i < len(words):
        target = phandles[words[i]]
        nargs = shell.run(f"od -An -tx1 '/proc/device-tree{target}/#nvmem-cell-cells' 2>/dev/null")[0]
        i += 1 + (int("".join(nargs[0].split()), 16) if nargs else 0)
        cell, layout = target.rsplit("/", 1)[1], target.rsplit("/", 1)[0]
        device = devs.get(layout.rsplit("/", 1)[0] if layout.endswith("/nvmem-layout") else layout)
        assert device, f"{node}: cell {target} is on no nvmem device"
        files = shell.run_check(f"ls /sys/bus/nvmem/devices/{device}/cells | grep '^{cell}@' || true")
        assert len(files) == 1, f"{target}: sysfs cells {files} on {device}"
        found.append((names[len(found)], f"/sys/bus/nvmem/devices/{device}/cells/{files[0]}"))
    assert found and len(found) == len(names), f"{node}: cells {found}, names {names}"
    return found


@pytest.mark.timeout(1800)
def test_consumer_and_sysfs_read_alike(shell, pytestconfig):
    node = consumer_node(shell, lab.session_promises(pytestconfig))
    cells = consumer_cells(shell, node)
    seen = len(lab.dmesg(shell))
    loops = []
    for i, (_, path) in enumerate(cells):
        first = lab.guest_read(shell, path).hex()
        for r in range(2):
            out = f"/tmp/consumer-loop-{i}-{r}"
            shell.run_check(f"(nvmem-sysfs read-loop {path} {READS} {first} > {out} 2>&1; "
                            f"echo done >> {out}) &")
            loops.append((path, out))
    names = ",".join(n for n, _ in cells)
    out, _, rc = shell.run(f"insmod $(find /lib/modules -name {HOLDER}.ko) node={node} cells={names} "
                           f"reads={READS}", timeout=120)
    assert rc == 0, f"insmod {HOLDER} node={node} cells={names}: {out}"
    try:
        shell.run_check("i=0; until dmesg | grep -q 'nvmem_cell_holder: reads done'; do "
                        "i=$((i+1)); [ $i -lt 6000 ] || exit 1; sleep 0.25; done", timeout=1600)
        for _, out_file in loops:
            shell.run_check(f"i=0; until grep -q done {out_file}; do i=$((i+1)); "
                            f"[ $i -lt 6000 ] || exit 1; sleep 0.25; done", timeout=1600)
        kernel_lines = [line for line in lab.dmesg(shell)[seen:] if "nvmem_cell_holder:" in line]
    finally:
        shell.run(f"rmmod {HOLDER}")
    for name, _ in cells:
        want = rf"nvmem_cell_holder: {re.escape(node)} {re.escape(name)}: {READS} reads, 0 differ, 0 failed$"
        assert any(re.search(want, line) for line in kernel_lines), \
            f"{HOLDER} on {name}: {[line for line in kernel_lines if f' {name}:' in line]}"
    print(f"\nnvlab: consumer: {len(cells)} cell(s) of {node}, {READS} reads each by {HOLDER} "
          f"and by 2 sysfs readers: " + "; ".join(line.split("nvmem_cell_holder: ", 1)[1]
                                               for line in kernel_lines if " reads, " in line))
    for path, out_file in loops:
        lines = shell.run_check(f"cat {out_file}")
        ok, errors, short = lab.read_loop_results(lines)
        differ = [line for line in lines if line.startswith("differ")]
        print(f"nvlab: consumer: sysfs {path}: {ok} ok, errors {errors}, {len(short)} short, "
              f"{len(differ)} differ")
        assert (ok, errors, short, differ) == (READS, {}, [], []), f"{path} read by sysfs: {lines}"
