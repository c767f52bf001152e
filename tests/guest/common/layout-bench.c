// SPDX-License-Identifier: GPL-2.0
/*
 * layout-bench: time from the registration of an nvmem device to its layout
 * cells being available in sysfs.
 *
 *   layout-bench PLATFORM_DEVICE CELL ITERATIONS
 *
 * Unbinds the platform device providing the nvmem device (e.g. an
 * nvmem-rmem region "9f008000.eeprom"), then, ITERATIONS times: binds it
 * again and polls until <nvmem device>/cells/CELL exists, then unbinds.
 * CELL "-" waits for the nvmem device's "nvmem" file instead (a device
 * without layout, as a baseline). Prints min and median in microseconds.
 * The device is bound again at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_NS (5LL * 1000000000LL)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* does some child directory of DIR contain REL? */
static int child_has(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", dir, e->d_name, rel);
		found = stat(path, &st) == 0;
	}
	closedir(d);
	return found;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	char devdir[256], link[PATH_MAX], path[PATH_MAX], rel[PATH_MAX];
	char bind[2 * PATH_MAX + 16], unbind[2 * PATH_MAX + 16];
	long long *t;
	int i, n, ret;
	ssize_t len;

	if (argc != 4 || (n = atoi(argv[3])) <= 0 || strlen(argv[1]) > 200) {
		fprintf(stderr, "usage: %s PLATFORM_DEVICE CELL|- ITERATIONS\n", argv[0]);
		return 2;
	}
	snprintf(devdir, sizeof(devdir), "/sys/bus/platform/devices/%s", argv[1]);
	snprintf(path, sizeof(path), "%s/driver", devdir);
	len = readlink(path, link, sizeof(link) - 1);
	if (len < 0) {
		fprintf(stderr, "%s: no driver bound: %s\n", argv[1], strerror(errno));
		return 1;
	}
	link[len] = 0;
	snprintf(bind, sizeof(bind), "%s/%s/bind", devdir, link);
	snprintf(unbind, sizeof(unbind), "%s/%s/unbind", devdir, link);
	if (strcmp(argv[2], "-"))
		snprintf(rel, sizeof(rel), "cells/%s", argv[2]);
	else
		snprintf(rel, sizeof(rel), "nvmem");
	if (!child_has(devdir, rel)) {
		fprintf(stderr, "%s: no nvmem device with %s\n", argv[1], rel);
		return 1;
	}

	t = calloc(n, sizeof(*t));
	if (!t)
		return 1;
	ret = write_str(unbind, argv[1]);
	for (i = 0; !ret && i < n; i++) {
		long long t0;

		t0 = now_ns();
		ret = write_str(bind, argv[1]);
		if (ret)
			break;
		while (!child_has(devdir, rel)) {
			if (now_ns() - t0 > TIMEOUT_NS) {
				fprintf(stderr, "%s: %s did not appear\n", argv[1], rel);
				return 1;
			}
		}
		t[i] = now_ns() - t0;
		ret = write_str(unbind, argv[1]);
	}
	write_str(bind, argv[1]);
	if (ret) {
		fprintf(stderr, "%s: bind/unbind failed: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	qsort(t, n, sizeof(*t), cmp_ll);
	printf("layout-bench %s %s: %d runs, min %.1f us, median %.1f us\n",
	       argv[1], argv[2], n, t[0] / 1e3, t[n / 2] / 1e3);
	return 0;
}
