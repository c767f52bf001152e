"""test_unbind.known_ref_splat: which kernel reports count as 6.12's known
race (a sysfs cell read during unbind touching a freed cell) on the
reference kernel. data/ref-unbind-kasan-strlen.txt is such a report from a
CI run, where the faulting function was strlen (kstrdup of the cell name)
rather than an nvmem_cell_* function; data/ref-unbind-arm-alloc-warning.txt
is the same race on ast2600-evb (no KASAN): the page allocator's warning
about the garbage length of a freed cell; data/ref-unbind-arm-oops.txt
again on ast2600-evb (CI of c7d7cde): the freed cell's name pointer held
bytes of another cell's name and the read oopsed in strlen."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "boot"))
from test_unbind import known_ref_splat  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.timeout(30)
def test_report_from_a_callee_of_the_cell_read_is_known():
    log = (DATA / "ref-unbind-kasan-strlen.txt").read_text().splitlines()
    assert "slab-use-after-free in strlen" in log[0]
    assert known_ref_splat(log, 0)


@pytest.mark.timeout(30)
def test_report_in_the_cell_read_itself_is_known():
    log = ["[ 1.0] BUG: KASAN: slab-use-after-free in nvmem_cell_attr_read+0x3c/0xe0",
           "[ 1.0] Call Trace:", "[ 1.0] [<ffffffff80499ada>] nvmem_cell_attr_read+0x3c/0xe0"]
    assert known_ref_splat(log, 0)


@pytest.mark.timeout(30)
def test_other_reports_are_not():
    log = (DATA / "ref-unbind-kasan-strlen.txt").read_text().splitlines()
    # the same report without the cell read in its trace
    stripped = [line for line in log if "nvmem_cell_attr_read" not in line]
    assert not known_ref_splat(stripped, 0)
    # not a use-after-free
    assert not known_ref_splat(["[ 1.0] BUG: KASAN: slab-out-of-bounds in strlen+0x3e/0x58"]
                               + log[1:], 0)
    # an oops is known only with the cell read in its trace
    assert not known_ref_splat(["[ 1.0] Unable to handle kernel paging request"] + stripped[1:], 0)


@pytest.mark.timeout(30)
def test_oops_in_the_cell_read_is_known():
    log = (DATA / "ref-unbind-arm-oops.txt").read_text().splitlines()
    assert "Internal error: Oops" in log[0]
    oopses = [i for i, line in enumerate(log) if "Internal error: Oops" in line
              or "Unable to handle kernel paging request" in line]
    assert oopses and all(known_ref_splat(log, i) for i in oopses)
    # the trace is past the registers and the stack dump
    assert min(i for i, line in enumerate(log) if "nvmem_cell_attr_read" in line) > 40
    stripped = [line for line in log if "nvmem_cell_attr_read" not in line]
    assert not any(known_ref_splat(stripped, i) for i in oopses)


@pytest.mark.timeout(30)
def test_allocation_warning_from_the_cell_read_is_known():
    log = (DATA / "ref-unbind-arm-alloc-warning.txt").read_text().splitlines()
    assert "cut here" in log[0] and "page_alloc.c" in log[1]
    assert known_ref_splat(log, 0) and known_ref_splat(log, 1)
    # without the cell read in the trace, it is some other allocation
    stripped = [line for line in log if "nvmem_cell_attr_read" not in line]
    assert not known_ref_splat(stripped, 0) and not known_ref_splat(stripped, 1)
    # another warning after a "cut here" is not
    other = [log[0], "[ 1.0] WARNING: CPU: 1 PID: 1 at kernel/foo.c:1 foo+0x0/0x4"] + log[2:]
    assert not known_ref_splat(other, 0)
