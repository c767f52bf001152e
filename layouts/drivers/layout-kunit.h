/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the KUnit suites of the layout drivers: an nvmem
 * device backed by a test buffer, and a cell sink that records what a
 * parser would add.
 */
#ifndef _NVMEM_LAYOUT_KUNIT_H
#define _NVMEM_LAYOUT_KUNIT_H

#include <kunit/test.h>
#include <linux/device.h>
#include <linux/nvmem-consumer.h>
#include <linux/nvmem-provider.h>
#include <linux/slab.h>
#include <linux/string.h>

#define LAYOUT_KUNIT_MAX_CELLS	32

struct layout_kunit {
	struct device *parent;
	struct nvmem_device *nvmem;
	u8 *data;
	size_t size;
	int ncells;
	struct nvmem_cell_info cells[LAYOUT_KUNIT_MAX_CELLS];
};

static int layout_kunit_reg_read(void *priv, unsigned int offset, void *val,
				 size_t bytes)
{
	struct layout_kunit *lk = priv;

	if (offset > lk->size || bytes > lk->size - offset)
		return -EINVAL;
	memcpy(val, lk->data + offset, bytes);

	return 0;
}

/* cell sink: remember the cell instead of adding it to a device */
static int layout_kunit_add(void *ctx, const struct nvmem_cell_info *info)
{
	struct layout_kunit *lk = ctx;

	if (lk->ncells == LAYOUT_KUNIT_MAX_CELLS)
		return -ENOSPC;
	lk->cells[lk->ncells++] = *info;

	return 0;
}

static int layout_kunit_init(struct kunit *test)
{
	struct layout_kunit *lk;

	lk = kunit_kzalloc(test, sizeof(*lk), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, lk);
	lk->parent = root_device_register("nvmem-layout-kunit");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, lk->parent);
	test->priv = lk;

	return 0;
}

static void layout_kunit_exit(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	nvmem_unregister(lk->nvmem);
	root_device_unregister(lk->parent);
}

/*
 * Register an nvmem device of @size bytes holding a copy of @len bytes of
 * @image followed by @fill bytes, with @layout (may be NULL).
 */
static struct nvmem_device *
layout_kunit_device(struct kunit *test, const void *image, size_t len,
		    size_t size, u8 fill, struct nvmem_layout *layout)
{
	struct layout_kunit *lk = test->priv;
	struct nvmem_config config = {
		.dev = lk->parent,
		.name = "layout-kunit",
		.id = NVMEM_DEVID_AUTO,
		.read_only = true,
		.no_of_node = true,
		.reg_read = layout_kunit_reg_read,
		.size = size,
		.priv = lk,
		.layout = layout,
	};
	struct nvmem_device *nvmem;

	lk->data = kunit_kmalloc(test, size ?: 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, lk->data);
	memset(lk->data, fill, size);
	memcpy(lk->data, image, min(len, size));
	lk->size = size;

	nvmem = nvmem_register(&config);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(nvmem), "nvmem_register: %ld",
			       PTR_ERR(nvmem));
	lk->nvmem = nvmem;

	return nvmem;
}

/* special values of layout_kunit_bad.pos */
#define LAYOUT_KUNIT_UNCHANGED	-1	/* the good image as it is */
#define LAYOUT_KUNIT_ERASED	-2	/* no image: the device holds only fill */
#define LAYOUT_KUNIT_FIRST_BYTE	-3	/* only the first byte of the image */

/* a malformed image: the good one with byte @pos set to @val */
struct layout_kunit_bad {
	const char *what;
	size_t size;		/* of the device */
	u8 fill;
	int pos;
	u8 val;
	int err;		/* what the parser must return */
};

static void layout_kunit_bad_desc(const struct layout_kunit_bad *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

/* the image of case @c made from @good (@len bytes) in @image; its length */
static size_t layout_kunit_bad_image(const struct layout_kunit_bad *c,
				     const u8 *good, size_t len, u8 *image)
{
	memcpy(image, good, len);
	if (c->pos >= 0)
		image[c->pos] = c->val;
	if (c->pos == LAYOUT_KUNIT_ERASED)
		return 0;
	if (c->pos == LAYOUT_KUNIT_FIRST_BYTE)
		return 1;

	return len;
}

#endif /* _NVMEM_LAYOUT_KUNIT_H */
