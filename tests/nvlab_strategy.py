"""labgrid strategies of our environments.

PowerFirstShellStrategy: for boards whose console exists only while they are
powered: a QEMU behind a remote place (scripts/remote.py), whose serial is
QEMU's own TCP server, waiting for its client before the guest runs.

labgrid's ShellStrategy opens the console before it powers the board on;
with such a console there is nothing to connect to yet. This strategy
powers on first, then connects the console (retrying until it accepts or
the timeout passes), then waits for the shell. Nothing of the boot is lost:
QEMU starts the guest only once the console is connected. Loaded by the
remote environment's `imports:`.

TFTPUBootStrategy: for real boards (tests/env/real/), booted by their U-Boot
over TFTP.
"""
import enum
import time

import attr
from labgrid.factory import target_factory
from labgrid.step import step
from labgrid.strategy import Strategy, StrategyError


def _register(cls):
    """target_factory.reg_driver, once: labgrid runs an environment's
    imports each time it loads the environment, and the helpers load the
    board's environment more than once in a session"""
    known = target_factory.drivers.get(cls.__name__)
    if known is not None and known.__module__ == cls.__module__:
        return known
    return target_factory.reg_driver(cls)


class Status(enum.Enum):
    unknown = 0
    off = 1
    shell = 2


@_register
@attr.s(eq=False)
class PowerFirstShellStrategy(Strategy):
    """power on, then console, then shell; power off releases the console"""

    bindings = {
        "power": "PowerProtocol",
        "console": "ConsoleProtocol",
        "shell": "ShellDriver",
    }
    console_timeout = attr.ib(default=60.0, validator=attr.validators.instance_of(float))

    status = attr.ib(default=Status.unknown)

    def _connect_console(self):
        deadline = time.monotonic() + self.console_timeout
        while True:
            try:
                self.target.activate(self.console)
                return
            except Exception as e:  # the port does not accept yet
                if time.monotonic() > deadline:
                    raise StrategyError(
                        f"the console did not accept a connection within {self.console_timeout:.0f} s "
                        f"after power on: {e}") from e
                time.sleep(0.5)

    @step(args=["status"])
    def transition(self, status, *, step):  # pylint: disable=redefined-outer-name
        if not isinstance(status, Status):
            status = Status[status]
        if status == Status.unknown:
            raise StrategyError(f"can not transition to {status}")
        if status == self.status:
            step.skip("nothing to do")
            return
        if status == Status.off:
            self.target.deactivate(self.shell)
            self.target.deactivate(self.console)
            self.target.activate(self.power)
            self.power.off()
        elif status == Status.shell:
            self.transition(Status.off)
            self.power.on()
            self._connect_console()
            self.target.activate(self.shell)
        self.status = status


class BootStatus(enum.Enum):
    unknown = 0
    off = 1
    uboot = 2
    shell = 3


@_register
@attr.s(eq=False)
class TFTPUBootStrategy(Strategy):
    """A real board: power cycle into its U-Boot (autoboot stopped), load
    the kernel, the device tree with our overlays applied and the initramfs
    over TFTP from the lab's TFTP provider, boot them, wait for the shell.

    The files are the environment's images `kernel`, `dtb` and `initramfs`
    (the same build outputs QEMU boots). `boot` is U-Boot's command for the
    kernel's image format (`bootz` for a zImage, `booti` for an arm64 or
    RISC-V Image); the addresses are the board's U-Boot variables
    ${kernel_addr_r}, ${fdt_addr_r}, ${ramdisk_addr_r}; `net` gets U-Boot
    an address and the server ("dhcp", or setenv commands on a static lab
    network)."""

    bindings = {
        "power": "PowerProtocol",
        "console": "ConsoleProtocol",
        "uboot": "UBootDriver",
        "shell": "ShellDriver",
        "tftp": "TFTPProviderDriver",
    }
    boot = attr.ib(default="bootz", validator=attr.validators.in_(["bootz", "booti", "bootm"]))
    net = attr.ib(default="dhcp", validator=attr.validators.instance_of(str))
    tftp_timeout = attr.ib(default=120, validator=attr.validators.instance_of(int))

    status = attr.ib(default=BootStatus.unknown)

    def commands(self, kernel, dtb, initramfs):
        """the U-Boot commands that load and boot the staged files (paths as
        the TFTP server serves them)"""
        # U-Boot's bootz/booti take the initramfs as address:size
        return [
            self.net,
            f"tftpboot ${{kernel_addr_r}} {kernel}",
            f"tftpboot ${{fdt_addr_r}} {dtb}",
            f"tftpboot ${{ramdisk_addr_r}} {initramfs}",
            f"{self.boot} ${{kernel_addr_r}} ${{ramdisk_addr_r}}:${{filesize}} ${{fdt_addr_r}}",
        ]

    @step(args=["status"])
    def transition(self, status, *, step):  # pylint: disable=redefined-outer-name
        if not isinstance(status, BootStatus):
            status = BootStatus[status]
        if status == BootStatus.unknown:
            raise StrategyError(f"can not transition to {status}")
        if status == self.status:
            step.skip("nothing to do")
            return
        if status == BootStatus.off:
            self.target.deactivate(self.shell)
            self.target.deactivate(self.uboot)
            self.target.activate(self.power)
            self.power.off()
        elif status == BootStatus.uboot:
            self.transition(BootStatus.off)
            self.target.activate(self.console)
            self.power.cycle()
            self.target.activate(self.uboot)
        elif status == BootStatus.shell:
            self.transition(BootStatus.uboot)
            self.target.activate(self.tftp)
            staged = [self.tftp.stage(self.target.env.config.get_image_path(name))
                      for name in ("kernel", "dtb", "initramfs")]
            *loads, bootcmd = self.commands(*staged)
            for cmd in loads:
                self.uboot.run_check(cmd, timeout=self.tftp_timeout)
            # the boot command does not return to the prompt
            self.uboot.console.sendline(bootcmd)
            self.uboot.await_boot()
            self.target.activate(self.shell)
        self.status = status
