"""The real-board environments (tests/env/real/) as labgrid loads them:
its own config parser and target factory build every resource and driver,
the strategy is bound to what a U-Boot + TFTP boot needs, drives U-Boot in
the right order, and the suite's helpers read which devices the board
holds (no host image: the oracle decodes what the device gives back)."""
import os
import sys
from pathlib import Path
from unittest import mock

import pytest
from labgrid import Environment

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import lab  # noqa: E402

REAL = sorted((lab.TOP / "tests" / "env" / "real").glob("*.yaml"))
# the kernel image each board's U-Boot boots, and its boot command
KERNEL_FORMAT = {"zImage": "bootz", "Image": "booti"}


@pytest.fixture(autouse=True)
def lg_out(tmp_path):
    with mock.patch.dict(os.environ, LG_OUT=str(tmp_path)):
        yield tmp_path


def test_both_board_kinds_are_there():
    assert {p.stem for p in REAL} >= {"ast2600-evb", "hifive-unmatched"}


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_environment_loads_and_binds(path, lg_out):
    env = Environment(str(path))
    target = env.get_target("main")
    strategy = target.get_driver("Strategy")
    assert type(strategy).__name__ == "TFTPUBootStrategy"
    # bound to a real serial port, a power switch, U-Boot, the shell and TFTP
    assert type(strategy.console).__name__ == "SerialDriver"
    assert type(strategy.power).__name__ in ("NetworkPowerDriver", "ManualPowerDriver",
                                             "ExternalPowerDriver")
    assert type(strategy.uboot).__name__ == "UBootDriver" and strategy.uboot.prompt
    assert type(strategy.tftp).__name__ == "TFTPProviderDriver"
    kernel = Path(env.config.get_image_path("kernel"))
    assert kernel.parent == lg_out and strategy.boot == KERNEL_FORMAT[kernel.name]
    for image in ("dtb", "initramfs"):
        assert Path(env.config.get_image_path(image)).parent == lg_out
    # the device tree it boots is built from options of the environment
    assert (lab.TOP / env.config.get_target_option("main", "overlay")).is_file()
    assert env.config.get_target_option("main", "base_dts").endswith(".dts")


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_devices_are_not_host_images(path):
    found = lab.attachments(path)
    assert found and all(not a.attached for a in found)
    assert all(a.kind == "at24" and a.where.count("-") == 1 for a in found)


def test_promises_narrowed_to_the_real_board():
    path = lab.TOP / "tests" / "env" / "real" / "ast2600-evb.yaml"
    config = mock.Mock()
    config.option.lg_env = str(path)
    config.getoption.return_value = "ours"
    with mock.patch.dict(os.environ, {"NVLAB_BOARD": "ast2600-evb"}):
        os.environ.pop("NVLAB_BOARD_ENV", None)
        promises = lab.session_promises(config)
    assert {p.image for p in promises.layouts} == {"onie-switch"}
    # the MACs of the other EEPROMs of the QEMU board are not on the real one
    assert {(m.consumer, m.image) for m in promises.macs} == {("/ahb/ftgmac@1e660000", "onie-switch")}


def test_bad_device_spec_is_named(tmp_path):
    env = tmp_path / "real.yaml"
    env.write_text("targets:\n  main:\n    resources: {}\n    drivers: {}\n"
                   "    options:\n      nvmem_devices:\n        onie-switch: i2c-7-50\n")
    with pytest.raises(ValueError, match=r"onie-switch: 'i2c-7-50' is not at24:"):
        lab.attachments(env)


class FakeUBoot:
    def __init__(self, log):
        self.log = log
        self.console = mock.Mock()
        self.console.sendline.side_effect = lambda cmd: log.append(("boot", cmd))

    def run_check(self, cmd, timeout=30):
        self.log.append(("run", cmd))
        return []

    def await_boot(self):
        self.log.append(("await", "Linux"))


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_strategy_boots_over_tftp_in_order(path):
    target = Environment(str(path)).get_target("main")
    strategy = target.get_driver("Strategy")
    log = []
    strategy.uboot = FakeUBoot(log)
    strategy.power = mock.Mock()
    strategy.power.cycle.side_effect = lambda: log.append(("power", "cycle"))
    strategy.tftp = mock.Mock()
    strategy.tftp.stage.side_effect = lambda f: log.append(("stage", Path(f).name)) or f"nvlab/{Path(f).name}"
    with mock.patch.object(target, "activate", lambda d: log.append(("activate", type(d).__name__))), \
            mock.patch.object(target, "deactivate", lambda d: None):
        strategy.transition("shell")
    steps = [s for s in log if s[0] != "activate"]
    kernel = Path(target.env.config.get_image_path("kernel")).name
    assert steps[0] == ("power", "cycle")
    assert [s[1] for s in steps if s[0] == "stage"] == [kernel, "real.dtb", "initramfs.cpio.gz"]
    runs = [s[1] for s in steps if s[0] == "run"]
    assert runs == ["dhcp", f"tftpboot ${{kernel_addr_r}} nvlab/{kernel}",
                    "tftpboot ${fdt_addr_r} nvlab/real.dtb",
                    "tftpboot ${ramdisk_addr_r} nvlab/initramfs.cpio.gz"]
    # the initramfs is loaded last: ${filesize} is its size
    assert steps[-2] == ("boot", f"{strategy.boot} ${{kernel_addr_r}} ${{ramdisk_addr_r}}:${{filesize}} "
                                 "${fdt_addr_r}")
    assert steps[-1] == ("await", "Linux")
    assert log[-1] == ("activate", "ShellDriver")
    assert strategy.status.name == "shell"
