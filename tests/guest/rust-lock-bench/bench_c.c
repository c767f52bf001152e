// SPDX-License-Identifier: GPL-2.0
/*
 * C side of rust_lock_bench: the C lock loops, the clock, and an empty
 * out-of-line function whose call cost stands for one helper call.
 */
#include <linux/compiler.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>

static DEFINE_MUTEX(bench_c_mutex_lock);
static DEFINE_SPINLOCK(bench_c_spin_lock);

u64 bench_now(void)
{
	return ktime_get_ns();
}

u64 bench_c_mutex(u32 iters)
{
	u64 t0 = ktime_get_ns();
	u32 i;

	for (i = 0; i < iters; i++) {
		mutex_lock(&bench_c_mutex_lock);
		mutex_unlock(&bench_c_mutex_lock);
	}
	return ktime_get_ns() - t0;
}

u64 bench_c_spin(u32 iters)
{
	u64 t0 = ktime_get_ns();
	u32 i;

	for (i = 0; i < iters; i++) {
		spin_lock(&bench_c_spin_lock);
		spin_unlock(&bench_c_spin_lock);
	}
	return ktime_get_ns() - t0;
}

noinline void bench_nop(void)
{
	barrier();
}

u64 bench_c_calls(u32 iters)
{
	u64 t0 = ktime_get_ns();
	u32 i;

	for (i = 0; i < iters; i++)
		bench_nop();
	return ktime_get_ns() - t0;
}
