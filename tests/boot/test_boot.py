"""The board boots, and every image QEMU attaches is an nvmem device whose
raw content equals the host file."""
import os
import re

import lab


def test_kernel_under_test(shell, kernel_under_test):
    """The board runs the kernel this run built: its release is the prepared
    tree's version (NVLAB_KERNEL_VERSION, from scripts/test.sh), or at least
    the right series when the tests run against a board built elsewhere."""
    release = shell.run_check("uname -r")[0]
    version = os.environ.get("NVLAB_KERNEL_VERSION")
    if version:
        want = re.escape(version) + r"($|[-+])"
    else:
        want = {"ours": r"6\.1\.", "ref": r"6\.12\."}[kernel_under_test]
    assert re.match(want, release), f"booted {release}, expected the {kernel_under_test} kernel ({want})"


def test_image_is_nvmem_device(shell, attachment):
    data = attachment.file.read_bytes()
    dev = lab.find_device(shell, attachment)
    differ = lab.guest_bytes_differ(shell, f"/sys/bus/nvmem/devices/{dev}/nvmem", data)
    assert not differ, f"{dev} against {attachment.file}: {differ}"


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
        differ = lab.guest_bytes_differ(shell, f"/sys/bus/nvmem/devices/{name}/nvmem", data[off:off + size])
        assert not differ, f"{name} ({label}) against its slice of {flash.file}: {differ}"
        checked.append(label)
    assert "u-boot-env" in checked, f"no u-boot-env partition among {parts}"


def test_no_stale_nvmem_devices(shell):
    """Every entry of the nvmem bus is a live device. An nvmem device that
    was never unregistered while its parent went (as the layout KUnit
    helpers once left one per extra device a case made) stays on the bus
    as a link into nothing."""
    stale = shell.run_check("for d in /sys/bus/nvmem/devices/*; do "
                            "[ -e \"$d\" ] || echo \"${d##*/} -> $(readlink \"$d\")\"; done")
    assert not stale, f"nvmem bus entries without a device: {stale}"
