// SPDX-License-Identifier: GPL-2.0
/*
 * hwprobe-nokernel: show that __vdso_riscv_hwprobe answers the all-CPU
 * query without entering the kernel, and that what it cannot answer really
 * goes to the system call. For tests/boot/test_hwprobe.py.
 *
 * Before: the answers of the system call for keys 0-15, all online CPUs,
 * and what the vDSO says (kernel reachable) to a query with a CPU set and
 * to one with a flag.
 *
 * Then a seccomp filter (no_new_privs first) that, for a RISC-V 64-bit
 * caller, makes riscv_hwprobe fail with EXFULL (an errno the system call
 * never gives), allows write, exit and exit_group and kills the process on
 * any other system call; any other architecture is killed too. From there
 * on the program only calls the vDSO and writes its results, so a vDSO
 * that enters the kernel at all either gets EXFULL or kills the program.
 *
 * After: the all-CPU query through the vDSO (once, compared with the
 * answers from before, then LOOPS more times), the CPU-set and the flag
 * query through the vDSO, and the system call itself.
 *
 * Output, one line per step: "STEP rc=R errno=E[ same=yes|no]" with STEP
 * one of before-syscall, before-vdso-cpuset, before-vdso-flags, vdso-all,
 * vdso-cpuset, vdso-flags, syscall; "vdso-all-loop calls=N failed=F
 * differ=D"; "filter ..." between before and after; "done" last.
 * Exit status 0 once all steps ran (the test judges the results), 2 on a
 * setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <asm/hwprobe.h>
#include <asm/unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "vdso-sym.h"

_Static_assert(__NR_riscv_hwprobe == 258, "syscall number");

#define NKEYS 16
#define LOOPS 10000
#define FILTER_ERRNO EXFULL
#define POISON 0x5a5a5a5a5a5a5a5aULL
#define NOBODYS_FLAG 0x2	/* no kernel defines it: the vDSO must ask */

typedef int (*hwprobe_fn)(struct riscv_hwprobe *, size_t, size_t, unsigned long *,
			  unsigned int);

static struct riscv_hwprobe before[NKEYS];

static void fresh(struct riscv_hwprobe *p)
{
	for (int i = 0; i < NKEYS; i++) {
		p[i].key = i;
		p[i].value = POISON;	/* whoever answers must overwrite */
	}
}

static const char *errname(int err)
{
	const char *n = err ? strerrorname_np(err) : "0";

	return n ? n : "?";
}

/* the vDSO returns 0 or -errno */
static void report_vdso(const char *step, int rc, const struct riscv_hwprobe *p)
{
	printf("%s rc=%d errno=%s", step, rc < 0 ? -1 : rc, errname(rc < 0 ? -rc : 0));
	if (rc == 0)
		printf(" same=%s", memcmp(p, before, sizeof(before)) ? "no" : "yes");
	printf("\n");
}

static long sys_hwprobe(struct riscv_hwprobe *p, size_t n, size_t setsize, void *cpus,
			unsigned int flags)
{
	return syscall(__NR_riscv_hwprobe, p, n, setsize, cpus, flags);
}

static int install_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_RISCV64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_riscv_hwprobe, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (FILTER_ERRNO & SECCOMP_RET_DATA)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(code) / sizeof(code[0]),
		.filter = code,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		printf("filter error: PR_SET_NO_NEW_PRIVS: %s\n", errname(errno));
		return -1;
	}
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		printf("filter error: seccomp: %s\n", errname(errno));
		return -1;
	}
	return 0;
}

int main(void)
{
	hwprobe_fn vdso = (hwprobe_fn)vdso_sym("__vdso_riscv_hwprobe");
	struct riscv_hwprobe p[NKEYS];
	cpu_set_t set;
	long failed = 0, differ = 0;
	int rc;

	/* stdout set up (buffer, line mode) before the filter forbids that */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!vdso) {
		printf("no __vdso_riscv_hwprobe in the vDSO\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);

	fresh(before);
	if (sys_hwprobe(before, NKEYS, 0, NULL, 0)) {
		printf("before-syscall rc=-1 errno=%s\n", errname(errno));
		return 2;
	}
	printf("before-syscall rc=0 errno=0\n");
	fresh(p);
	report_vdso("before-vdso-cpuset", vdso(p, NKEYS, sizeof(set), (unsigned long *)&set, 0), p);
	fresh(p);
	report_vdso("before-vdso-flags", vdso(p, NKEYS, 0, NULL, NOBODYS_FLAG), p);

	if (install_filter())
		return 2;
	printf("filter riscv_hwprobe=%s write,exit,exit_group=allow other=kill\n",
	       errname(FILTER_ERRNO));

	fresh(p);
	report_vdso("vdso-all", vdso(p, NKEYS, 0, NULL, 0), p);
	for (long i = 0; i < LOOPS; i++) {
		fresh(p);
		if (vdso(p, NKEYS, 0, NULL, 0))
			failed++;
		else if (memcmp(p, before, sizeof(before)))
			differ++;
	}
	printf("vdso-all-loop calls=%d failed=%ld differ=%ld\n", LOOPS, failed, differ);

	fresh(p);
	report_vdso("vdso-cpuset", vdso(p, NKEYS, sizeof(set), (unsigned long *)&set, 0), p);
	fresh(p);
	report_vdso("vdso-flags", vdso(p, NKEYS, 0, NULL, NOBODYS_FLAG), p);

	fresh(p);
	errno = 0;
	rc = sys_hwprobe(p, NKEYS, 0, NULL, 0);
	printf("syscall rc=%d errno=%s\n", rc, errname(rc ? errno : 0));
	printf("done\n");
	return 0;
}
