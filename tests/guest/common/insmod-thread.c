// SPDX-License-Identifier: GPL-2.0
/*
 * insmod-thread MODULE.ko: load a kernel module from a second thread of this
 * process, so that the module's init runs in a task that is not the leader
 * of its thread group (tests/boot/test_rust.py checks what current!() and
 * Task::group_leader() say there). Prints "leader <pid> thread <tid>" and
 * exits 0 when finit_module succeeded, 1 when it failed, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int module_fd;
static int load_errno;

static void *load(void *unused)
{
	(void)unused;
	printf("leader %d thread %ld\n", (int)getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	if (syscall(SYS_finit_module, module_fd, "", 0) != 0)
		load_errno = errno;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t loader;

	if (argc != 2) {
		fprintf(stderr, "usage: %s MODULE.ko\n", argv[0]);
		return 2;
	}
	module_fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (module_fd < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (pthread_create(&loader, NULL, load, NULL) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 2;
	}
	pthread_join(loader, NULL);
	if (load_errno) {
		fprintf(stderr, "finit_module %s: %s\n", argv[1], strerror(load_errno));
		return 1;
	}
	return 0;
}
