// SPDX-License-Identifier: GPL-2.0
/*
 * The nvmem core's own cells: those a "fixed-layout" container (or the
 * device's node) describes, with "reg", "bits" and "mac-base", parsed and
 * read by the functions of drivers/nvmem/core.c as the series has them.
 * scripts/fuzz-kernel.py copies those functions unmodified out of the
 * patched tree into core-cells.c (with #line, so reports name core.c).
 *
 * The input starts with the device tree: a byte whose low 3 bits give the
 * number of cell nodes, then 17 bytes a node: flags (bit 0: a "reg", bit
 * 1: only its first 4 bytes, bit 2: a "bits", bit 3: only its first 4
 * bytes, bit 4: compatible "mac-base"), then offset and size of "reg",
 * bit offset and bit count of "bits", little endian (the harness stores
 * them big endian, as a DTB). The rest is the device.
 *
 * Checked on each input besides what kshim.c checks: a cell the core
 * keeps is what the binding allows (inside the device, its bytes inside
 * its "reg", "bits" with an offset of 0 to 7 and at least one bit, inside
 * the "reg"), and the others are left out without the device failing;
 * every cell is read as nvmem_cell_read() reads it (its buffer, the
 * provider's bounds), for several indexes, and the bytes a reader gets are
 * held to what this file computes on its own from the device: the stored
 * bytes, the bits "bits" names shifted down to bit 0 with the rest zero,
 * or for mac-base the 6 address bytes plus the index.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "kshim-harness.h"

/* the core's reads of the device, as a provider (rmem, at24) answers them */
static int nvmem_reg_read(struct nvmem_device *nvmem, unsigned int offset,
			  void *val, size_t bytes)
{
	if (offset > nvmem->size || bytes > nvmem->size - offset)
		return -EIO;
	memcpy(val, nvmem->data + offset, bytes);
	return 0;
}

#include "core-cells.c"

#define NODE_BYTES 17
#define MAX_ENTRIES 64

static struct nvmem_cell_entry *entries[MAX_ENTRIES];
static unsigned int n_entries;

/* what nvmem_add_one_cell() of the core does, with its list kept here */
int nvmem_add_one_cell(struct nvmem_device *nvmem,
		       const struct nvmem_cell_info *info)
{
	struct nvmem_cell_entry *cell;
	int rval;

	cell = kzalloc(sizeof(*cell), GFP_KERNEL);
	if (!cell)
		return -ENOMEM;
	rval = nvmem_cell_info_to_nvmem_cell_entry(nvmem, info, cell);
	if (rval) {
		kfree(cell);
		return rval;
	}
	if (n_entries == MAX_ENTRIES) {
		fprintf(stderr, "harness: more than %d cells\n", MAX_ENTRIES);
		abort();
	}
	entries[n_entries++] = cell;
	return kshim_keep_cell(info);
}

static int fixed_layout_add_cells(struct device *dev, struct nvmem_device *nvmem,
				  struct nvmem_layout *layout)
{
	struct device_node *container = of_nvmem_layout_get_container(nvmem);
	int ret;

	ret = nvmem_add_cells_from_dt(nvmem, container ?: nvmem->dev.of_node);
	of_node_put(container);
	return ret;
}

static const struct of_device_id fixed_layout_of_match[] = {
	{ .compatible = "fixed-layout" },
	{},
};

static struct nvmem_layout fixed_layout = {
	.name = "fixed-layout",
	.of_match_table = fixed_layout_of_match,
	.add_cells = fixed_layout_add_cells,
};

int kshim_layout_init(void)
{
	return nvmem_layout_register(&fixed_layout);
}

static void put_be32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

size_t kshim_config(const u8 *data, size_t size, struct kshim_config *cfg)
{
	unsigned int i;
	size_t at = 1;

	if (!size)
		return 1;
	cfg->compatible = "fixed-layout";
	cfg->container = true;
	cfg->core_reads = true;
	cfg->n_children = data[0] & 7;
	if (size < 1 + cfg->n_children * NODE_BYTES)
		return size + 1;
	for (i = 0; i < cfg->n_children; i++, at += NODE_BYTES) {
		struct kshim_child *c = &cfg->children[i];
		const u8 *n = data + at;

		snprintf(c->name, sizeof(c->name), "cell%u@%x", i, get_unaligned_le32(n + 1));
		c->reg_len = n[0] & 1 ? (n[0] & 2 ? 4 : 8) : -1;
		c->bits_len = n[0] & 4 ? (n[0] & 8 ? 4 : 8) : -1;
		c->mac_base = n[0] & 16;
		put_be32(c->reg, get_unaligned_le32(n + 1));
		put_be32(c->reg + 4, get_unaligned_le32(n + 5));
		put_be32(c->bits, get_unaligned_le32(n + 9));
		put_be32(c->bits + 4, get_unaligned_le32(n + 13));
	}
	return at;
}

bool kshim_fixup(u8 *dev, size_t size, const struct kshim_config *cfg)
{
	return false;
}

static void __attribute__((noreturn, format(printf, 2, 3)))
wrong(const struct nvmem_cell_entry *cell, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "harness: cell %s (offset %d, %d bytes, bits %d+%d): ",
		cell->name, cell->offset, cell->bytes, cell->bit_offset, cell->nbits);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* a MAC address in 6 bytes, 12 hex digits or 6 pairs with ':' between */
static bool mac_of(const u8 *p, size_t len, u8 mac[ETH_ALEN])
{
	unsigned int i, step;

	if (len == ETH_ALEN) {
		memcpy(mac, p, ETH_ALEN);
		return true;
	}
	if (len != 12 && len != 17)
		return false;
	step = len == 12 ? 2 : 3;
	for (i = 0; i < ETH_ALEN; i++) {
		char two[3] = { p[i * step], p[i * step + 1], 0 };
		char *end;

		if (!isxdigit((unsigned char)two[0]) || !isxdigit((unsigned char)two[1]))
			return false;
		if (step == 3 && i < ETH_ALEN - 1 && p[i * 3 + 2] != ':')
			return false;
		mac[i] = (u8)strtoul(two, &end, 16);
	}
	return true;
}

static void expect_mac(const struct nvmem_device *nvmem, const struct nvmem_cell_entry *cell,
		       int index, int rc, const u8 *got, size_t len)
{
	const u8 *stored = nvmem->data + cell->offset;
	u8 want[ETH_ALEN];
	u64 v = 0;
	int i;

	if (!mac_of(stored, cell->raw_len, want)) {
		if (rc != -EINVAL)
			wrong(cell, "no MAC address stored, read answers %d", rc);
		return;
	}
	if (rc)
		wrong(cell, "a MAC address stored, read answers %d", rc);
	for (i = 0; i < ETH_ALEN; i++)
		v = v << 8 | want[i];
	v += (u64)(s64)index;
	for (i = ETH_ALEN - 1; i >= 0; i--, v >>= 8)
		want[i] = (u8)v;
	if (len != ETH_ALEN || memcmp(got, want, ETH_ALEN))
		wrong(cell, "index %d: not the stored address plus the index", index);
}

/* the bits the cell names, shifted down to bit 0, the rest of bytes zero */
static void expect_bits(const struct nvmem_device *nvmem, const struct nvmem_cell_entry *cell,
			const u8 *got, size_t len)
{
	const u8 *stored = nvmem->data + cell->offset;
	u8 *want = calloc(1, len ? len : 1);
	long long i;

	for (i = 0; i < cell->nbits; i++) {
		long long from = cell->bit_offset + i;

		if (stored[from / 8] >> (from % 8) & 1)
			want[i / 8] |= 1 << (i % 8);
	}
	if (memcmp(got, want, len))
		wrong(cell, "the bits read are not the bits stored");
	free(want);
}

/* the cell as the binding allows it, from its node's "reg" and "bits" */
static void expect_allowed(const struct nvmem_device *nvmem,
			   const struct nvmem_cell_entry *cell)
{
	const struct kshim_child *c = kshim_node_child(cell->np);
	u64 reg_offset, reg_bytes;

	if (!c || c->reg_len != 8)
		wrong(cell, "kept without a node with a whole \"reg\"");
	reg_offset = get_unaligned_be32(c->reg);
	reg_bytes = get_unaligned_be32(c->reg + 4);
	if (reg_offset + reg_bytes > nvmem->size)
		wrong(cell, "kept, but its reg is past the device's %zu bytes", nvmem->size);
	if ((u64)(u32)cell->offset < reg_offset ||
	    (u64)(u32)cell->offset + cell->raw_len > reg_offset + reg_bytes)
		wrong(cell, "reads %zu bytes at %#x, its reg is %#llx+%#llx", cell->raw_len,
		      cell->offset, (unsigned long long)reg_offset, (unsigned long long)reg_bytes);
	if (c->bits_len == 8) {
		u64 bo = get_unaligned_be32(c->bits), nb = get_unaligned_be32(c->bits + 4);

		if (bo > 7 || !nb || bo + nb > 8 * reg_bytes)
			wrong(cell, "kept with bits <%llu %llu>", (unsigned long long)bo,
			      (unsigned long long)nb);
	}
}

/* each cell read as nvmem_cell_read() does it, and the bytes checked */
void kshim_after_add_cells(struct nvmem_device *nvmem)
{
	static const int indexes[] = { 0, 1, -1, INT_MAX, INT_MIN };
	unsigned int i, k;

	for (i = 0; i < n_entries; i++) {
		struct nvmem_cell_entry *cell = entries[i];
		size_t alloc = max_t(size_t, cell->raw_len, cell->bytes);
		bool mac = cell->read_post_process == nvmem_mac_base_read;
		bool inside = cell->offset >= 0 && (size_t)cell->offset <= nvmem->size &&
			      cell->raw_len <= nvmem->size - cell->offset;

		expect_allowed(nvmem, cell);
		for (k = 0; k < (mac ? ARRAY_SIZE(indexes) : 1); k++) {
			/* not a fault point: the reading is checked, not the adding */
			u8 *buf = alloc <= (4u << 20) ? calloc(1, alloc ? alloc : 1) : NULL;
			size_t len = 0;
			int rc;

			if (!buf) {
				/* in the kernel, a warning from the page allocator */
				wrong(cell, "a reader's buffer of %zu bytes", alloc);
			}
			rc = __nvmem_cell_read(nvmem, cell, buf, &len, "fuzz", indexes[k]);
			if (!inside) {
				if (rc != -EIO)
					wrong(cell, "outside the device, read answers %d", rc);
			} else if (mac) {
				expect_mac(nvmem, cell, indexes[k], rc, buf, len);
			} else if (rc) {
				wrong(cell, "read answers %d", rc);
			} else if (len != (size_t)cell->bytes) {
				wrong(cell, "read gives %zu bytes", len);
			} else if (cell->bit_offset || cell->nbits) {
				expect_bits(nvmem, cell, buf, len);
			} else if (memcmp(buf, nvmem->data + cell->offset, len)) {
				wrong(cell, "read gives other bytes than stored");
			}
			free(buf);
		}
	}
}

void kshim_cells_gone(void)
{
	while (n_entries) {
		struct nvmem_cell_entry *cell = entries[--n_entries];

		kfree_const(cell->name);
		kfree(cell);
	}
}
