/* SPDX-License-Identifier: GPL-2.0 */
/* Between kshim.c and the harness of each layout (harness-*.c). */
#ifndef NVLAB_KSHIM_HARNESS_H
#define NVLAB_KSHIM_HARNESS_H

#include <kshim.h>

/* what the device tree says around the device of one input */
struct kshim_config {
	const char *compatible;	/* of the layout's node */
	bool container;		/* an nvmem-layout node; else the device's own */
	bool has_env_size;
	u32 env_size;
	bool has_redundant_offset;
	u32 redundant_offset;
};

/*
 * Implemented by each harness: fill @cfg from the start of the input and
 * return how many bytes that took (the rest is the device's content), or
 * more than @size when the input is too short to be one.
 */
size_t kshim_config(const u8 *data, size_t size, struct kshim_config *cfg);

/*
 * Implemented by each harness: put the right checksums into the device's
 * @size bytes at @dev where the format has them; false when there is
 * nothing to fix (the input then runs once).
 */
bool kshim_fixup(u8 *dev, size_t size, const struct kshim_config *cfg);

/* from the layout's subsys_initcall() and module_exit() (kshim.h) */
int kshim_layout_init(void);
void kshim_layout_exit(void);

#endif
