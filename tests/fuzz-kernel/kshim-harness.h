/* SPDX-License-Identifier: GPL-2.0 */
/* Between kshim.c and the harness of each layout (harness-*.c). */
#ifndef NVLAB_KSHIM_HARNESS_H
#define NVLAB_KSHIM_HARNESS_H

#include <kshim.h>

#define KSHIM_MAX_CHILDREN 7

/* a child node of the layout's node: a cell the core itself reads */
struct kshim_child {
	char name[16];
	bool mac_base;		/* compatible = "mac-base" */
	u8 reg[8];		/* "reg", big endian, reg_len bytes of it */
	int reg_len;		/* -1: no such property */
	u8 bits[8];
	int bits_len;
};

/* what the device tree says around the device of one input */
struct kshim_config {
	const char *compatible;	/* of the layout's node */
	bool container;		/* an nvmem-layout node; else the device's own */
	bool has_env_size;
	u32 env_size;
	bool has_redundant_offset;
	u32 redundant_offset;
	struct kshim_child children[KSHIM_MAX_CHILDREN];
	unsigned int n_children;
	bool core_reads;	/* the harness reads the cells as the core */
};

/*
 * The nvmem device: what the layouts reach through the core's functions,
 * and the fields of drivers/nvmem/core.c's own struct that the core code
 * the fixed-layout harness compiles uses.
 */
struct nvmem_device {
	struct device dev;
	const u8 *data;
	size_t size;
	struct device_node *container;
	int stride;
	nvmem_cell_post_process_t cell_post_process;
	struct nvmem_layout *layout;
	void *priv;
};

/*
 * The core's bookkeeping of a cell its checks let through: the fault point
 * of its allocation, the node reference it keeps, the name listed.
 */
int kshim_keep_cell(const struct nvmem_cell_info *info);

/*
 * Optional, for a harness of the core's own code: after add_cells() and
 * the reference check of each run, and once the run's cells are gone.
 */
void kshim_after_add_cells(struct nvmem_device *nvmem);
/* the cell description of a node (NULL for the device's and the container) */
const struct kshim_child *kshim_node_child(const struct device_node *np);
void kshim_cells_gone(void);

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
