// SPDX-License-Identifier: GPL-2.0
/*
 * nvmem-sysfs: what the boot tests read from /sys/bus/nvmem, in one process
 * (a shell loop forks a few programs per cell, about 0.1 s each under KASAN
 * and TCG).
 *
 *   nvmem-sysfs devices
 *       one line per nvmem device: NAME SYSFS-PATH [OF-NODE-PATH]
 *       (both paths resolved, as `pwd -P` would print them)
 *   nvmem-sysfs cells DEVICE...
 *       one line per file in each device's cells/ directory, sorted:
 *       DEVICE CELL SIZE MODE CONTENT
 *       MODE in octal as `stat -c %a`, CONTENT the bytes read in hex,
 *       "-" when empty, "ERR" when the read fails. A device without a
 *       cells/ directory prints nothing.
 *
 *   nvmem-sysfs read-loop FILE COUNT
 *       open, read and close FILE COUNT times, as fast as it goes (a reader
 *       racing the provider's unbind); prints "ok N" and "errno E N" for
 *       each errno seen, and "short N" for reads that returned fewer bytes
 *       than the file's size said.
 *   nvmem-sysfs read-loop FILE COUNT HEX
 *       the same, each whole read also compared with the bytes HEX: those
 *       that differ are counted in "differ N" instead of "ok".
 *
 * Exit status 0, or 1 with a message on stderr when an argument is wrong
 * or a directory that exists cannot be listed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUS "/sys/bus/nvmem/devices"

static int visible(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int list_devices(void)
{
	struct dirent **names;
	int n = scandir(BUS, &names, visible, alphasort);

	if (n < 0) {
		if (errno == ENOENT)
			return 0; /* no nvmem device at all */
		perror(BUS);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX], real[PATH_MAX], of[PATH_MAX];

		snprintf(path, sizeof(path), BUS "/%s", names[i]->d_name);
		if (!realpath(path, real))
			snprintf(real, sizeof(real), "%s", path);
		snprintf(path, sizeof(path), BUS "/%s/of_node", names[i]->d_name);
		if (realpath(path, of))
			printf("%s %s %s\n", names[i]->d_name, real, of);
		else
			printf("%s %s\n", names[i]->d_name, real);
		free(names[i]);
	}
	free(names);
	return 0;
}

static void print_content(int dirfd, const char *name)
{
	unsigned char buf[4096];
	int fd = openat(dirfd, name, O_RDONLY);
	int any = 0;
	ssize_t got;

	if (fd < 0) {
		fputs("ERR", stdout);
		return;
	}
	/* hex is printed only once the whole file has been read */
	char *hex = NULL;
	size_t len = 0;

	while ((got = read(fd, buf, sizeof(buf))) > 0) {
		char *more = realloc(hex, len + 2 * got + 1);

		if (!more) {
			got = -1;
			break;
		}
		hex = more;
		for (ssize_t i = 0; i < got; i++)
			len += sprintf(hex + len, "%02x", buf[i]);
		any = 1;
	}
	close(fd);
	if (got < 0)
		fputs("ERR", stdout);
	else if (!any)
		fputs("-", stdout);
	else
		fputs(hex, stdout);
	free(hex);
}

static int list_cells(const char *dev)
{
	char dir[PATH_MAX];
	struct dirent **names;
	int n, dirfd;

	if (strchr(dev, '/') || !*dev || dev[0] == '.') {
		fprintf(stderr, "nvmem-sysfs: '%s' is no nvmem device name\n", dev);
		return 1;
	}
	snprintf(dir, sizeof(dir), BUS "/%s/cells", dev);
	n = scandir(dir, &names, visible, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "nvmem-sysfs: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0) {
		fprintf(stderr, "nvmem-sysfs: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;

		if (fstatat(dirfd, names[i]->d_name, &st, 0) == 0) {
			printf("%s %s %lld %o ", dev, names[i]->d_name, (long long)st.st_size,
			       (unsigned int)(st.st_mode & 07777));
			print_content(dirfd, names[i]->d_name);
			putchar('\n');
		}
		free(names[i]);
	}
	free(names);
	close(dirfd);
	return 0;
}

/* @hex as bytes in @out (at most @max); their number, or -1 */
static long unhex(const char *hex, unsigned char *out, size_t max)
{
	size_t n = strlen(hex) / 2;

	if (strlen(hex) % 2 || n > max)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = v;
	}
	return n;
}

static int read_loop(const char *path, long count, const char *hex)
{
	static long errs[256];
	static unsigned char want[4096];
	long ok = 0, shorter = 0, differ = 0, nwant = -1;
	char buf[4096];

	if (hex) {
		nwant = unhex(hex, want, sizeof(want));
		if (nwant < 0) {
			fprintf(stderr, "read-loop: %s is no hex string\n", hex);
			return 1;
		}
	}

	for (long i = 0; i < count; i++) {
		struct stat st;
		ssize_t n;
		int fd = open(path, O_RDONLY);

		if (fd < 0) {
			errs[errno & 255]++;
			continue;
		}
		if (fstat(fd, &st) < 0) {
			errs[errno & 255]++;
			close(fd);
			continue;
		}
		n = read(fd, buf, sizeof(buf));
		if (n < 0)
			errs[errno & 255]++;
		else if (n < st.st_size && n < (ssize_t)sizeof(buf))
			shorter++;
		else if (nwant >= 0 && (n != nwant || memcmp(buf, want, n)))
			differ++;
		else
			ok++;
		close(fd);
	}
	printf("ok %ld\n", ok);
	if (shorter)
		printf("short %ld\n", shorter);
	if (differ)
		printf("differ %ld\n", differ);
	for (int e = 0; e < 256; e++)
		if (errs[e])
			printf("errno %d %ld\n", e, errs[e]);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "read-loop"))
		return read_loop(argv[2], strtol(argv[3], NULL, 0),
				 argc == 5 ? argv[4] : NULL);
	if (argc == 2 && !strcmp(argv[1], "devices"))
		return list_devices();
	if (argc >= 2 && !strcmp(argv[1], "cells")) {
		for (int i = 2; i < argc; i++)
			rc |= list_cells(argv[i]);
		return rc;
	}
	fprintf(stderr, "usage: nvmem-sysfs devices | nvmem-sysfs cells DEVICE... |"
		" nvmem-sysfs read-loop FILE COUNT\n");
	return 1;
}
