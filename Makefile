# nvmem-lab: thin entry points; the work is in scripts/.
#   make run                    build and boot the default board, print its nvmem devices and cells
#   make test [KERNEL=ours|ref] every test (both boards on our 6.1, riscv64-virt on the 6.12 reference)
#   make boot BOARD=…           interactive shell on the board's console (Ctrl-A X leaves)
#   make cells [JSON=1] [LISTING=file]  the last run's nvmem devices and cells, decoded (all cells)
#   make report                 build/report/index.html: test outcomes, boot times, KUnit counts, benchmark plots
#   make kernel|dtb|initramfs|images BOARD=… KERNEL=…, make series, make setup, make clean
#   make check-series           checkpatch --strict every patch and build the kernel after each
#   make test-remote [BOARD=…] [KERNEL=…]  the boot tests through a labgrid remote place on loopback, compared with the local session
#   make test-lava [BOARD=…]    the board's LAVA job (from its environment) in lava-run, held to the last local session
#   make check-fresh [STAGES="run test"]  the README commands in a new Debian 12 root (debootstrap, chroot; root)
#   make bench-images, make fuzz [FUZZ_SECONDS=600]   (image tool benchmark and fuzzing)
#   make fuzz-kernel [SECONDS=600]                      the kernel's layout parsers under libFuzzer + ASan/UBSan, held to nvmem-image
#   make bench-hwprobe [KERNEL=ours|ref]                riscv_hwprobe: vDSO vs system call vs /proc/cpuinfo
#   make bench-layouts                                  nvmem layouts: registration to cells, ours vs ref (bench variant)
#   make bench-rust-locks                               Rust Mutex/SpinLock vs C mutex/spinlock, same kernel
#   make bench-rust-layouts [ROUNDS=11] [BINDS=10]      nvmem layouts in Rust vs C (sl28 VPD; IPMI FRU vs ONIE), same kernel
#   make rusttest                                       kernel Rust compile-fail suite (builds the riscv64-virt kernel)
BOARD  ?= riscv64-virt
KERNEL ?= ours
BOARDS := $(notdir $(patsubst %/,%,$(dir $(wildcard qemu-boards/*/board.conf))))
S := scripts

.PHONY: help setup images kernel dtb initramfs board boot run cells report test test-remote test-lava series check-series clean bench-images bench-hwprobe bench-layouts bench-rust-locks bench-rust-layouts rusttest fuzz fuzz-kernel check-fresh
help:
	@sed -n 's/^#   //p' Makefile
	@echo "boards: $(BOARDS)"

setup:
	@$(S)/setup.sh

images: setup
	@$(S)/build-images.sh

kernel: setup
	@$(S)/build-kernel.sh $(BOARD) $(KERNEL)

initramfs: kernel
	@$(S)/build-initramfs.sh $(BOARD) $(KERNEL)

dtb: kernel images
	@$(S)/build-dtb.sh $(BOARD) $(KERNEL)

board: setup
	@$(S)/build-board.sh $(BOARD) $(KERNEL)

boot: board
	@$(S)/boot.sh boot $(BOARD) $(KERNEL)

run: board
	@$(S)/boot.sh run $(BOARD) $(KERNEL) nvmem-list

# the last `make run`'s listing (or LISTING=a file of nvmem-list output
# from any board) decoded; JSON=1 for machines
cells:
	@build/venv/bin/python $(S)/cells.py $(BOARD) $(KERNEL) $(LISTING) $(if $(JSON),--json)

# build/report/index.html (+ index.md, plots) from the last make test and
# benchmarks, checked in headless Chromium (screenshot.png next to it)
report: setup
	@build/venv/bin/python $(S)/report.py --check

test: setup
	@$(S)/test.sh $(if $(filter command line,$(origin KERNEL)),$(KERNEL),all)

test-remote: board
	@build/venv/bin/python $(S)/remote.py test $(BOARD) $(KERNEL)

test-lava: board
	@build/venv/bin/python $(S)/lava.py run $(BOARD) $(KERNEL)

bench-images: setup
	@$(S)/cargo.sh run -q --release -p nvmem-image --example env_bench

bench-hwprobe:
	@$(MAKE) --no-print-directory board BOARD=riscv64-virt
	@$(S)/boot.sh run riscv64-virt $(KERNEL) hwprobe-bench

bench-layouts:
	@$(S)/bench-layouts.sh

bench-rust-locks: setup
	@$(S)/bench-rust-locks.sh

bench-rust-layouts: setup
	@$(S)/bench-rust-layouts.sh $(or $(ROUNDS),11) $(or $(BINDS),10)

rusttest: setup
	@$(S)/build-kernel.sh riscv64-virt ours
	@$(S)/rust-compile-fail.sh

fuzz: setup
	@$(S)/fuzz.sh $(FUZZ_SECONDS)

# the layout drivers of layouts/drivers/ compiled unmodified for the host
# (tests/fuzz-kernel/), each fuzzed SECONDS, then the regression pass that
# make test runs (scripts/fuzz-kernel.py check)
fuzz-kernel: setup
	@build/venv/bin/python $(S)/fuzz-kernel.py run $(or $(SECONDS),600)

series: setup
	@$(S)/export-series.sh

check-series: setup
	@$(S)/check-series.sh --build

check-fresh:
	@$(S)/check-fresh.sh $(STAGES)

clean:
	rm -rf build
