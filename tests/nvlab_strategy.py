"""A labgrid strategy for boards whose console exists only while they are
powered: a QEMU behind a remote place (scripts/remote.py), whose serial is
QEMU's own TCP server, waiting for its client before the guest runs.

labgrid's ShellStrategy opens the console before it powers the board on;
with such a console there is nothing to connect to yet. This strategy
powers on first, then connects the console (retrying until it accepts or
the timeout passes), then waits for the shell. Nothing of the boot is lost:
QEMU starts the guest only once the console is connected. Loaded by the
remote environment's `imports:`.
"""
import enum
import time

import attr
from labgrid.factory import target_factory
from labgrid.step import step
from labgrid.strategy import Strategy, StrategyError


class Status(enum.Enum):
    unknown = 0
    off = 1
    shell = 2


@target_factory.reg_driver
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
