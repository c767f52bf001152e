// SPDX-License-Identifier: GPL-2.0
/*
 * main() of the replay build of a harness (no libFuzzer): each file named
 * on the command line is one input, run once, in order, so that the
 * JSON lines of NVLAB_FUZZ_LIST follow the arguments.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		size_t len = 0, got;
		uint8_t chunk[65536];

		if (!f) {
			perror(argv[i]);
			return 2;
		}
		while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			uint8_t *more = realloc(buf, len + got);

			if (!more) {
				fprintf(stderr, "%s: out of memory\n", argv[i]);
				return 2;
			}
			buf = more;
			memcpy(buf + len, chunk, got);
			len += got;
		}
		fclose(f);
		if (LLVMFuzzerTestOneInput(buf ? buf : (uint8_t *)"", len) < 0)
			printf("{\"skipped\": true}\n");
		fflush(stdout);
		free(buf);
	}
	return 0;
}
