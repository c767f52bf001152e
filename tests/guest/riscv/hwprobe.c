// SPDX-License-Identifier: GPL-2.0
/*
 * hwprobe: drive riscv_hwprobe from the guest, for tests/boot/test_hwprobe.py.
 *
 * Built static against the UAPI headers of the kernel under test
 * (make headers_install), so it also checks that <asm/hwprobe.h> and
 * <asm/unistd.h> carry the ABI values.
 *
 *   hwprobe query [-v] [-c CPULIST] [-s SETSIZE] [-f FLAGS] [-n COUNT]
 *                 [-P] [-C] [KEY...]
 *       one call (-v: through the vDSO); prints "rc=R errno=E" then
 *       "KEY VALUE" per pair (VALUE in hex). KEYs default to 0..15.
 *       -c: CPU list ("0", "1", "0-1", "0,3"); -s: cpusetsize in bytes
 *       (default: the cpu_set_t size when -c is given, else 0);
 *       -P/-C: pass an unmapped pointer as pairs/cpus; -n: pair_count.
 *   hwprobe vdso       prints the address of __vdso_riscv_hwprobe or fails
 *   hwprobe loop N     N calls; prints kB of RSS and of kernel slab before
 *                      and after, fails if any call fails or answers change
 *   hwprobe bench N    ns per call: vDSO, system call, /proc/cpuinfo parse
 *   hwprobe fuzz N SEED
 *                      N calls with random arguments, alternately through
 *                      the system call and the vDSO (see cmd_fuzz)
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <asm/hwprobe.h>
#include <asm/unistd.h>

#include "vdso-sym.h"

/* The 6.4 ABI, bit for bit. */
_Static_assert(__NR_riscv_hwprobe == 258, "syscall number");
_Static_assert(sizeof(struct riscv_hwprobe) == 16, "pair size");
_Static_assert(RISCV_HWPROBE_KEY_MVENDORID == 0 && RISCV_HWPROBE_KEY_MARCHID == 1 &&
	       RISCV_HWPROBE_KEY_MIMPID == 2 && RISCV_HWPROBE_KEY_BASE_BEHAVIOR == 3 &&
	       RISCV_HWPROBE_KEY_IMA_EXT_0 == 4 && RISCV_HWPROBE_KEY_CPUPERF_0 == 5, "keys");
_Static_assert(RISCV_HWPROBE_BASE_BEHAVIOR_IMA == 1 && RISCV_HWPROBE_IMA_FD == 1 &&
	       RISCV_HWPROBE_IMA_C == 2, "bits");
_Static_assert(RISCV_HWPROBE_MISALIGNED_UNKNOWN == 0 && RISCV_HWPROBE_MISALIGNED_EMULATED == 1 &&
	       RISCV_HWPROBE_MISALIGNED_SLOW == 2 && RISCV_HWPROBE_MISALIGNED_FAST == 3 &&
	       RISCV_HWPROBE_MISALIGNED_UNSUPPORTED == 4 && RISCV_HWPROBE_MISALIGNED_MASK == 7,
	       "misaligned values");

#define MAX_PAIRS 64
#define BAD_PTR ((void *)16)

typedef long (*hwprobe_fn)(struct riscv_hwprobe *, size_t, size_t, void *, unsigned int);

static long sys_hwprobe(struct riscv_hwprobe *p, size_t n, size_t setsize, void *cpus,
			unsigned int flags)
{
	return syscall(__NR_riscv_hwprobe, p, n, setsize, cpus, flags);
}

static void die(const char *msg)
{
	fprintf(stderr, "hwprobe: %s\n", msg);
	exit(2);
}

/* ---- finding __vdso_riscv_hwprobe in the vDSO image (vdso-sym.h) ---- */

static hwprobe_fn vdso_hwprobe(void)
{
	hwprobe_fn f = (hwprobe_fn)vdso_sym("__vdso_riscv_hwprobe");

	if (!f)
		die("__vdso_riscv_hwprobe not found in the vDSO");
	return f;
}

/* ---- query ---- */

static void parse_cpus(const char *list, cpu_set_t *set)
{
	char *copy = strdup(list), *save = NULL, *tok;

	CPU_ZERO(set);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long a = strtol(tok, &end, 10), b = a;

		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (*end || a < 0 || b < a || b >= CPU_SETSIZE)
			die("bad CPU list");
		for (long c = a; c <= b; c++)
			CPU_SET(c, set);
	}
	free(copy);
}

static int cmd_query(int argc, char **argv)
{
	struct riscv_hwprobe pairs[MAX_PAIRS];
	static char setbuf[8192];
	size_t n = 0, count, setsize = 0;
	long flags = 0, count_override = -1;
	int use_vdso = 0, bad_pairs = 0, bad_cpus = 0, have_set = 0, have_size = 0;
	hwprobe_fn fn = sys_hwprobe;
	void *cpus = NULL;
	long rc;
	int opt, err;

	while ((opt = getopt(argc, argv, "vc:s:f:n:PC")) != -1) {
		switch (opt) {
		case 'v': use_vdso = 1; break;
		case 'c': parse_cpus(optarg, (cpu_set_t *)setbuf); have_set = 1; break;
		case 's': setsize = strtoul(optarg, NULL, 0); have_size = 1; break;
		case 'f': flags = strtol(optarg, NULL, 0); break;
		case 'n': count_override = strtol(optarg, NULL, 0); break;
		case 'P': bad_pairs = 1; break;
		case 'C': bad_cpus = 1; break;
		default: die("usage: hwprobe query [-v] [-c CPUS] [-s SIZE] [-f FLAGS] [-n COUNT] [-P] [-C] [KEY...]");
		}
	}
	if (setsize > sizeof(setbuf))
		die("set size too large");
	if (have_set) {
		cpus = setbuf;
		if (!have_size)
			setsize = sizeof(cpu_set_t);
	}
	if (bad_cpus)
		cpus = BAD_PTR;
	for (int i = optind; i < argc && n < MAX_PAIRS; i++)
		pairs[n++].key = strtoll(argv[i], NULL, 0);
	if (optind == argc)
		for (n = 0; n < 16; n++)
			pairs[n].key = n;
	for (size_t i = 0; i < n; i++)
		pairs[i].value = 0x5a5a5a5a5a5a5a5aULL;	/* the kernel must overwrite */
	count = count_override >= 0 ? (size_t)count_override : n;
	if (use_vdso)
		fn = vdso_hwprobe();
	errno = 0;
	rc = fn(bad_pairs ? BAD_PTR : pairs, count, setsize, cpus, flags);
	/* the vDSO returns -errno like the raw call; syscall(2) sets errno */
	if (use_vdso && rc < 0) {
		err = -rc;
		rc = -1;
	} else {
		err = rc < 0 ? errno : 0;
	}
	printf("rc=%ld errno=%s\n", rc, err ? strerrorname_np(err) : "0");
	if (rc == 0)
		for (size_t i = 0; i < count && i < n; i++)
			printf("%lld 0x%llx\n", (long long)pairs[i].key,
			       (unsigned long long)pairs[i].value);
	return 0;
}

/* ---- loop: no memory growth over many calls ---- */

static long meminfo_kb(const char *file, const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long v = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		die("cannot open /proc files");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':')
			v = strtol(line + len + 1, NULL, 10);
	fclose(f);
	if (v < 0)
		die("field missing in /proc file");
	return v;
}

static int cmd_loop(long n)
{
	struct riscv_hwprobe first[10], p;
	cpu_set_t set;
	long rss0, slab0, rss1, slab1;

	for (int i = 0; i < 10; i++)
		first[i].key = i;
	if (sys_hwprobe(first, 10, 0, NULL, 0))
		die("first call failed");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	rss0 = meminfo_kb("/proc/self/status", "VmRSS");
	slab0 = meminfo_kb("/proc/meminfo", "Slab");
	for (long i = 0; i < n; i++) {
		/* one key per call, cycling; the all-CPU and explicit-set paths alternate */
		p.key = i % 10;
		if (sys_hwprobe(&p, 1, i & 1 ? sizeof(set) : 0, i & 1 ? &set : NULL, 0)) {
			printf("call %ld failed: %s\n", i, strerror(errno));
			return 1;
		}
		if (!(i & 1) && memcmp(&p, &first[i % 10], sizeof(p))) {
			printf("call %ld: key %lld answer changed\n", i, (long long)p.key);
			return 1;
		}
	}
	rss1 = meminfo_kb("/proc/self/status", "VmRSS");
	slab1 = meminfo_kb("/proc/meminfo", "Slab");
	printf("calls=%ld rss_kb=%ld->%ld slab_kb=%ld->%ld\n", n, rss0, rss1, slab0, slab1);
	return 0;
}

/* ---- fuzz: random arguments, every answer one the ABI allows ---- */

static double now_ns(void);

static uint64_t fuzz_state;

static uint64_t fuzz_rand(void)
{
	/* xorshift64*: reproducible from the seed printed */
	fuzz_state ^= fuzz_state >> 12;
	fuzz_state ^= fuzz_state << 25;
	fuzz_state ^= fuzz_state >> 27;
	return fuzz_state * 0x2545f4914f6cdd1dULL;
}

#define PICK(v) ((v)[fuzz_rand() % (sizeof(v) / sizeof((v)[0]))])
#define FUZZ_KNOWN 64		/* keys below this: answered as the first call did */
#define FUZZ_PAIRS 256		/* pairs the writable area holds (a page) */
#define PAGE 4096

enum { PTR_FINE, PTR_MISALIGNED, PTR_NULL, PTR_UNMAPPED, PTR_READ_ONLY, PTR_KERNEL };

/*
 * N calls, each with random: pair count (0, small, the area's size, past
 * it, huge), keys (known, unknown, negative, extreme), CPU set size (0,
 * short, the kernel's, larger, huge), CPU set (random bits, with or
 * without an online CPU), flags (mostly 0), and pointers for pairs and set
 * that are fine, misaligned, NULL, unmapped, read-only or in the kernel's
 * half; every other call goes through the vDSO. The vDSO works in user
 * mode, where a bad pointer is the caller's SIGSEGV as for any vDSO
 * function, so it gets pairs it can write, and with flags a CPU set it can
 * read and write (its fallback to the system call still sees bad CPU sets
 * without flags, and bad flags).
 * Every result must be 0, EINVAL or EFAULT. Where nothing is wrong with
 * the arguments (pairs fine and large enough, flags 0, no set or a set
 * with an online CPU) it must be 0, with each pair answered as the first
 * call answered that key for all CPUs (all harts of the board are alike).
 * Prints counts per outcome and kB of RSS and slab before and after.
 */
static int cmd_fuzz(long n, uint64_t seed)
{
	static const uint64_t counts[] = { 0, 1, 2, 7, 10, 64, FUZZ_PAIRS - 1, FUZZ_PAIRS,
					   FUZZ_PAIRS + 1, 1ULL << 32, SIZE_MAX / 16, SIZE_MAX };
	static const uint64_t setsizes[] = { 0, 1, 4, 7, 8, 16, 128, PAGE,
					     1ULL << 32, SIZE_MAX };
	static const int64_t odd_keys[] = { -1, -2, 64, 1000, INT64_MIN, INT64_MAX,
					    1LL << 32 };
	static const unsigned int flag_values[] = { 1, 2, 3, 0x80000000, 0xffffffff };
	static int64_t asked[FUZZ_PAIRS];
	struct riscv_hwprobe want[FUZZ_KNOWN];
	long outcome[3] = { 0 }, rss0, slab0, rss1, slab1, vdso_calls = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t online_bits;
	double t0;
	hwprobe_fn vdso = vdso_hwprobe();
	uint8_t *area, *pairs_end, *ro;
	static const char *const names[] = { "0", "EINVAL", "EFAULT" };

	if (online < 1 || online > 8)
		die("fuzz expects 1 to 8 online CPUs, numbered from 0");
	online_bits = (1ULL << online) - 1;
	fuzz_state = seed ? seed : 1;
	for (int i = 0; i < FUZZ_KNOWN; i++)
		want[i].key = i;
	if (sys_hwprobe(want, FUZZ_KNOWN, 0, NULL, 0))
		die("first call failed");
	/* a page for the CPU set, the pairs, then an unmapped page */
	area = mmap(NULL, 2 * PAGE + FUZZ_PAIRS * 16, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || ro == MAP_FAILED)
		die("mmap");
	pairs_end = area + PAGE + FUZZ_PAIRS * 16;
	if (munmap(pairs_end, PAGE))
		die("munmap");
	/* touched before the RSS is taken: growth is then the calls' */
	memset(area, 0, pairs_end - area);
	rss0 = meminfo_kb("/proc/self/status", "VmRSS");
	slab0 = meminfo_kb("/proc/meminfo", "Slab");
	t0 = now_ns();

	for (long i = 0; i < n; i++) {
		static const int pair_kinds[] = { PTR_FINE, PTR_FINE, PTR_FINE, PTR_FINE, PTR_FINE,
						  PTR_MISALIGNED, PTR_MISALIGNED, PTR_NULL,
						  PTR_UNMAPPED, PTR_READ_ONLY, PTR_KERNEL };
		static const int set_kinds[] = { PTR_FINE, PTR_FINE, PTR_FINE, PTR_MISALIGNED,
						 PTR_NULL, PTR_UNMAPPED, PTR_READ_ONLY, PTR_KERNEL };
		int use_vdso = i & 1, good = 1, pk = PICK(pair_kinds), sk;
		size_t count = fuzz_rand() & 1 ? PICK(counts) : fuzz_rand() % 20;
		size_t setsize = 0, room = 0;
		unsigned int flags = fuzz_rand() % 16 ? 0 : PICK(flag_values);
		uint8_t *pairs_at, *set_at = NULL;
		long rc;
		int err, kind;

		/* the pairs */
		if (use_vdso && pk != PTR_MISALIGNED)
			pk = PTR_FINE;
		switch (pk) {
		case PTR_FINE: pairs_at = area + PAGE; break;
		case PTR_MISALIGNED: pairs_at = area + PAGE + 1 + fuzz_rand() % 15; break;
		case PTR_NULL: pairs_at = NULL; break;
		case PTR_UNMAPPED: pairs_at = pairs_end; break;
		case PTR_READ_ONLY: pairs_at = ro; break;
		default: pairs_at = (uint8_t *)0xffffffd800000000ULL; break;
		}
		if (pk == PTR_FINE || pk == PTR_MISALIGNED) {
			room = (size_t)(pairs_end - pairs_at) / 16;
			if (use_vdso && count > room)
				count = room;
			good = count <= room;
			for (size_t k = 0; k < count && k < room; k++) {
				uint64_t r = fuzz_rand();
				int64_t key = r % 4 ? (int64_t)(r >> 8) % 12 : PICK(odd_keys);

				asked[k] = key;
				memcpy(pairs_at + 16 * k, &key, 8);
				memcpy(pairs_at + 16 * k + 8, &r, 8);
			}
		} else {
			good = 0;
		}

		/* the CPU set: none (NULL, 0), or a size and a place */
		if (fuzz_rand() % 3) {
			uint64_t bits = fuzz_rand();

			setsize = PICK(setsizes);
			sk = PICK(set_kinds);
			/*
			 * With flags, a vDSO may work on the set itself (6.12
			 * reads and clears it for RISCV_HWPROBE_WHICH_CPUS):
			 * then it gets a set it can read and write.
			 */
			if (use_vdso && flags) {
				if (sk != PTR_FINE && sk != PTR_MISALIGNED && sk != PTR_NULL)
					sk = PTR_FINE;
				if (setsize > PAGE - 8)
					setsize = PAGE - 8;
			}
			if (fuzz_rand() & 1)
				bits &= ~online_bits;	/* no online CPU */
			memset(area, 0, PAGE);
			switch (sk) {
			case PTR_FINE: set_at = area; break;
			case PTR_MISALIGNED: set_at = area + 1 + fuzz_rand() % 7; break;
			case PTR_NULL: set_at = NULL; break;
			case PTR_UNMAPPED: set_at = pairs_end; break;
			case PTR_READ_ONLY: set_at = ro; break;	/* zeros: no CPU */
			default: set_at = (uint8_t *)0xffffffd800000000ULL; break;
			}
			if (sk == PTR_FINE || sk == PTR_MISALIGNED) {
				uint64_t seen = setsize >= 8 ? bits :
					bits & ((1ULL << (8 * setsize)) - 1);

				memcpy(set_at, &bits, 8);
				/* the kernel reads at most its mask (8 bytes here) */
				good &= setsize > 0 && (seen & online_bits) != 0 &&
					setsize <= PAGE - 8;
			} else {
				good &= set_at == NULL && setsize == 0;
			}
		}
		if (flags)
			good = 0;

		errno = 0;
		if (use_vdso) {
			vdso_calls++;
			rc = vdso((struct riscv_hwprobe *)pairs_at, count, setsize, set_at, flags);
			err = rc < 0 ? (int)-rc : 0;
		} else {
			rc = sys_hwprobe((struct riscv_hwprobe *)pairs_at, count, setsize, set_at,
					 flags);
			err = rc < 0 ? errno : 0;
			if (rc < -1) {
				printf("call %ld: syscall returned %ld (seed %llu)\n", i, rc,
				       (unsigned long long)seed);
				return 1;
			}
		}
		if (rc > 0 || (rc && err != EINVAL && err != EFAULT)) {
			printf("call %ld (%s): rc=%ld errno=%d, not 0, EINVAL or EFAULT (seed %llu)\n",
			       i, use_vdso ? "vdso" : "syscall", rc, err, (unsigned long long)seed);
			return 1;
		}
		kind = !rc ? 0 : err == EINVAL ? 1 : 2;
		outcome[kind]++;
		if (good && rc) {
			printf("call %ld (%s): fine arguments (pairs %d count %zu, set %zu bytes) got %s (seed %llu)\n",
			       i, use_vdso ? "vdso" : "syscall", pk, count, setsize, names[kind],
			       (unsigned long long)seed);
			return 1;
		}
		for (size_t k = 0; good && k < count; k++) {
			struct riscv_hwprobe got, exp = { .key = -1, .value = 0 };

			memcpy(&got, pairs_at + 16 * k, sizeof(got));
			if (asked[k] >= 0 && asked[k] < FUZZ_KNOWN)
				exp = want[asked[k]];
			if (memcmp(&got, &exp, sizeof(got))) {
				printf("call %ld (%s): pair %zu answered %lld 0x%llx, expected %lld 0x%llx (seed %llu)\n",
				       i, use_vdso ? "vdso" : "syscall", k, (long long)got.key,
				       (unsigned long long)got.value, (long long)exp.key,
				       (unsigned long long)exp.value, (unsigned long long)seed);
				return 1;
			}
		}
	}
	rss1 = meminfo_kb("/proc/self/status", "VmRSS");
	slab1 = meminfo_kb("/proc/meminfo", "Slab");
	printf("fuzz calls=%ld vdso=%ld ok=%ld EINVAL=%ld EFAULT=%ld rss_kb=%ld->%ld slab_kb=%ld->%ld seconds=%.1f seed=%llu\n",
	       n, vdso_calls, outcome[0], outcome[1], outcome[2], rss0, rss1, slab0, slab1,
	       (now_ns() - t0) / 1e9, (unsigned long long)seed);
	return 0;
}

/* ---- bench ---- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* the facts keys 0-4 give, the way a library without hwprobe finds them */
static int parse_cpuinfo(unsigned long *vendor, unsigned long *arch, unsigned long *imp,
			 int *has_c)
{
	static char buf[65536];
	FILE *f = fopen("/proc/cpuinfo", "r");
	size_t len;
	char *line, *save = NULL;
	int cpus = 0;

	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	*has_c = 1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!strncmp(line, "processor", 9))
			cpus++;
		else if (!strncmp(line, "mvendorid", 9))
			*vendor = strtoul(colon + 1, NULL, 0);
		else if (!strncmp(line, "marchid", 7))
			*arch = strtoul(colon + 1, NULL, 0);
		else if (!strncmp(line, "mimpid", 6))
			*imp = strtoul(colon + 1, NULL, 0);
		else if (!strncmp(line, "isa", 3)) {
			char *isa = colon + 2, *us = strchr(isa, '_');
			size_t single = us ? (size_t)(us - isa) : strlen(isa);

			if (!memchr(isa + 4, 'c', single > 4 ? single - 4 : 0))
				*has_c = 0;
		}
	}
	return cpus;
}

/* ns per all-CPU query of keys 0-4 through @fn, over @n calls */
static double ns_per_query(hwprobe_fn fn, long n, const char *what)
{
	struct riscv_hwprobe p[5];
	double t0 = now_ns();

	for (long k = 0; k < n; k++) {
		for (int j = 0; j < 5; j++)
			p[j].key = j;
		if (fn(p, 5, 0, NULL, 0)) {
			fprintf(stderr, "hwprobe: %s call failed\n", what);
			exit(2);
		}
	}
	return (now_ns() - t0) / n;
}

static int cmd_bench(long n)
{
	unsigned long v, a, i;
	int c;
	double t0, t_vdso, t_sys, t_null, t_cpuinfo;
	long m = n / 100 > 0 ? n / 100 : 1;

	t_vdso = ns_per_query(vdso_hwprobe(), n, "vDSO");
	t_sys = ns_per_query(sys_hwprobe, n, "system");
	t0 = now_ns();
	for (long k = 0; k < n; k++)
		syscall(SYS_getppid);
	t_null = (now_ns() - t0) / n;
	t0 = now_ns();
	for (long k = 0; k < m; k++)
		if (parse_cpuinfo(&v, &a, &i, &c) <= 0)
			die("cannot parse /proc/cpuinfo");
	t_cpuinfo = (now_ns() - t0) / m;
	printf("bench vdso_ns=%.1f syscall_ns=%.1f getppid_ns=%.1f cpuinfo_ns=%.1f\n", t_vdso,
	       t_sys, t_null, t_cpuinfo);
	printf("bench syscall/vdso=%.1fx cpuinfo/vdso=%.1fx cpuinfo/syscall=%.1fx\n",
	       t_sys / t_vdso, t_cpuinfo / t_vdso, t_cpuinfo / t_sys);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: hwprobe query|vdso|loop N|bench N|fuzz N SEED");
	if (!strcmp(argv[1], "query"))
		return cmd_query(argc - 1, argv + 1);
	if (!strcmp(argv[1], "vdso")) {
		printf("__vdso_riscv_hwprobe %p\n", (void *)vdso_hwprobe());
		return 0;
	}
	if (!strcmp(argv[1], "loop") && argc == 3)
		return cmd_loop(strtol(argv[2], NULL, 0));
	if (!strcmp(argv[1], "bench") && argc == 3)
		return cmd_bench(strtol(argv[2], NULL, 0));
	if (!strcmp(argv[1], "fuzz") && argc == 4)
		return cmd_fuzz(strtol(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
	die("usage: hwprobe query|vdso|loop N|bench N|fuzz N SEED");
}
