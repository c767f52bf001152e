"""The board boots, and every image QEMU attaches is an nvmem device whose
raw content equals the host file."""
import re

import lab


def test_kernel_under_test(shell, kernel_under_test):
    release = shell.run_check("uname -r")[0]
    want = {"ours": r"^6\.1\.", "ref": r"^6\.12\."}[kernel_under_test]
    assert re.match(want, release), f"booted {release}, expected the {kernel_under_test} kernel"


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


def test_image_is_nvmem_device(shell, attachment):
    data = attachment.file.read_bytes()
    dev = find_device(shell, attachment)
    digest, length = guest_digest(shell, f"/sys/bus/nvmem/devices/{dev}/nvmem")
    assert length == len(data), f"{dev}: {length} bytes in the guest, {len(data)} in {attachment.file}"
    assert digest == lab.sha256(data), f"{dev}: content differs from {attachment.file}"


def test_mtd_partitions_match_image(shell, flash):
    """Each flash partition's nvmem device holds its slice of the image."""
    data = flash.file.read_bytes()
    parts = shell.run_check(
        "for m in /sys/class/mtd/mtd*; do case ${m##*/} in *ro) continue;; esac; "
        "[ -e $m/offset ] && echo ${m##*/} $(cat $m/offset) $(cat $m/size) $(cat $m/name); done")
    checked = []
    for line in parts:
        name, off, size, label = line.split(maxsplit=3)
        off, size = int(off), int(size)
        if size == len(data) or size > 4 * 1024 * 1024:
            continue  # the master (whole chip) is the test above; big ones are slow
        digest, length = guest_digest(shell, f"/sys/bus/nvmem/devices/{name}/nvmem")
        assert length == size
        assert digest == lab.sha256(data[off:off + size]), f"{name} ({label}) differs from the image"
        checked.append(label)
    assert "u-boot-env" in checked, f"no u-boot-env partition among {parts}"
