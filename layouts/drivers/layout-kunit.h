/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the KUnit suites of the layout drivers: an nvmem
 * device backed by a test buffer, a cell sink that records what a parser
 * would add, and the device tree nodes of a suite, applied as an overlay
 * while a test runs.
 *
 * The fake device serves every read from a backing buffer larger than
 * the size it declares, and notes any read that goes past that size: a
 * size check in a parser is then the only thing that can reject a table
 * longer than the device, and a read beyond the device is seen.
 */
#ifndef _NVMEM_LAYOUT_KUNIT_H
#define _NVMEM_LAYOUT_KUNIT_H

#include <kunit/test.h>
#include <linux/device.h>
#include <linux/notifier.h>
#include <linux/nvmem-consumer.h>
#include <linux/nvmem-provider.h>
#include <linux/of.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#define LAYOUT_KUNIT_MAX_CELLS	32
/* what the fake device can serve, whatever size it declares */
#define LAYOUT_KUNIT_BACKING	4096

/* the blob of the overlay @name.dts, linked into init memory */
#define LAYOUT_KUNIT_DTB(name) \
	extern u8 __dtb_##name##_begin[], __dtb_##name##_end[]

/* a copy of an overlay blob, made at late_initcall by each suite */
struct layout_kunit_overlay {
	void *fdt;
	u32 size;
};

/*
 * Keep a copy of the blob from @begin to @end, which sits in init memory;
 * without one, layout_kunit_setup() fails the suite's tests.
 */
static inline int layout_kunit_keep_overlay(struct layout_kunit_overlay *ov,
					    const u8 *begin, const u8 *end)
{
	ov->size = end - begin;
	ov->fdt = kmemdup(begin, ov->size, GFP_KERNEL);

	return 0;
}

struct layout_kunit {
	struct device *parent;
	struct nvmem_device *nvmem;
	struct device_node *np;
	struct device_node *consumer;
	int ovcs_id;

	/* the fake device: LAYOUT_KUNIT_BACKING bytes, @size declared */
	u8 *data;
	size_t size;
	bool read_past_end;
	int read_err;	/* when set, every read fails with it */
	unsigned int last_offset;
	size_t last_bytes;

	/* cells the core announced while this test registered a device */
	struct notifier_block nb;
	struct task_struct *task;
	int cell_adds;

	/*
	 * the cell sink; it refuses a cell named @refuse with @refuse_err and
	 * keeps copies of the names, which parsers may free after adding
	 */
	const char *refuse;
	int refuse_err;
	int ncells;
	struct nvmem_cell_info cells[LAYOUT_KUNIT_MAX_CELLS];
	char names[LAYOUT_KUNIT_MAX_CELLS][32];
};

static int layout_kunit_reg_read(void *priv, unsigned int offset, void *val,
				 size_t bytes)
{
	struct layout_kunit *lk = priv;

	if (lk->read_err)
		return lk->read_err;
	if (offset > LAYOUT_KUNIT_BACKING ||
	    bytes > LAYOUT_KUNIT_BACKING - offset)
		return -EINVAL;
	if (offset > lk->size || bytes > lk->size - offset)
		lk->read_past_end = true;
	lk->last_offset = offset;
	lk->last_bytes = bytes;
	memcpy(val, lk->data + offset, bytes);

	return 0;
}

/* cell sink: remember the cell instead of adding it to a device */
static int layout_kunit_add(void *ctx, const struct nvmem_cell_info *info)
{
	struct layout_kunit *lk = ctx;

	if (lk->refuse && !strcmp(info->name, lk->refuse))
		return lk->refuse_err;
	if (lk->ncells == LAYOUT_KUNIT_MAX_CELLS)
		return -ENOSPC;
	strscpy(lk->names[lk->ncells], info->name, sizeof(lk->names[0]));
	lk->cells[lk->ncells] = *info;
	lk->cells[lk->ncells].name = lk->names[lk->ncells];
	lk->ncells++;

	return 0;
}

/*
 * Count the cells added from the test's own thread: nvmem_register()
 * announces the cells of the device it registers synchronously.
 */
static int layout_kunit_notify(struct notifier_block *nb, unsigned long event,
			       void *data)
{
	struct layout_kunit *lk = container_of(nb, struct layout_kunit, nb);

	if (event == NVMEM_CELL_ADD && current == lk->task)
		lk->cell_adds++;

	return NOTIFY_OK;
}

/* @overlay: the suite's nodes, or NULL */
static int layout_kunit_setup(struct kunit *test,
			      const struct layout_kunit_overlay *overlay)
{
	struct layout_kunit *lk;
	int ret;

	lk = kunit_kzalloc(test, sizeof(*lk), GFP_KERNEL);
	if (!lk)
		return -ENOMEM;
	lk->data = kunit_kmalloc(test, LAYOUT_KUNIT_BACKING, GFP_KERNEL);
	if (!lk->data)
		return -ENOMEM;

	lk->parent = root_device_register("nvmem-layout-kunit");
	if (IS_ERR(lk->parent))
		return PTR_ERR(lk->parent);

	if (overlay) {
		if (!overlay->fdt) {
			root_device_unregister(lk->parent);
			return -ENOMEM;
		}
		ret = of_overlay_fdt_apply(overlay->fdt, overlay->size,
					   &lk->ovcs_id);
		if (ret) {
			/* a failed overlay may be partly applied */
			if (lk->ovcs_id)
				of_overlay_remove(&lk->ovcs_id);
			root_device_unregister(lk->parent);
			return ret;
		}
	}
	test->priv = lk;

	return 0;
}

static void layout_kunit_exit(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	/* exit runs after a failed init too */
	if (!lk)
		return;
	nvmem_unregister(lk->nvmem);
	of_node_put(lk->np);
	of_node_put(lk->consumer);
	if (lk->ovcs_id)
		of_overlay_remove(&lk->ovcs_id);
	root_device_unregister(lk->parent);
}

/*
 * Register an nvmem device that declares @size bytes. The backing buffer
 * holds the @len bytes of @image, then @fill up to LAYOUT_KUNIT_BACKING,
 * whatever @size is. The device gets the node at @path if any (its
 * layout is then found through the device tree), else @layout (may be
 * NULL).
 */
static struct nvmem_device *
__layout_kunit_device(struct kunit *test, const void *image, size_t len,
		      size_t size, u8 fill, const char *path,
		      struct nvmem_layout *layout)
{
	struct layout_kunit *lk = test->priv;
	struct nvmem_config config = {
		.dev = lk->parent,
		.name = "layout-kunit",
		.id = NVMEM_DEVID_AUTO,
		.read_only = true,
		.reg_read = layout_kunit_reg_read,
		.size = size,
		.priv = lk,
		.layout = layout,
	};
	struct nvmem_device *nvmem;

	KUNIT_ASSERT_LE(test, len, (size_t)LAYOUT_KUNIT_BACKING);
	KUNIT_ASSERT_LE(test, size, (size_t)LAYOUT_KUNIT_BACKING);
	/*
	 * A case may make several devices in turn: the one before goes now,
	 * the last one at exit (each left behind stayed registered on the
	 * nvmem bus after its parent was gone).
	 */
	nvmem_unregister(lk->nvmem);
	lk->nvmem = NULL;
	of_node_put(lk->np);
	lk->np = NULL;
	memset(lk->data, fill, LAYOUT_KUNIT_BACKING);
	memcpy(lk->data, image, len);
	lk->size = size;
	lk->read_past_end = false;

	if (path) {
		lk->np = of_find_node_by_path(path);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, lk->np);
		config.of_node = lk->np;
	} else {
		config.no_of_node = true;
	}

	lk->task = current;
	lk->cell_adds = 0;
	lk->nb.notifier_call = layout_kunit_notify;
	KUNIT_ASSERT_EQ(test, nvmem_register_notifier(&lk->nb), 0);
	nvmem = nvmem_register(&config);
	nvmem_unregister_notifier(&lk->nb);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(nvmem), "nvmem_register: %ld",
			       PTR_ERR(nvmem));
	lk->nvmem = nvmem;

	return nvmem;
}

static struct nvmem_device *
layout_kunit_device(struct kunit *test, const void *image, size_t len,
		    size_t size, u8 fill, struct nvmem_layout *layout)
{
	return __layout_kunit_device(test, image, len, size, fill, NULL,
				     layout);
}

/*
 * Register a device of @len bytes of @image with @layout while every read
 * fails: the layout adds no cell and the device stays registered; once
 * reads work again, it serves @image as it is.
 */
static inline void layout_kunit_expect_read_error(struct kunit *test,
						  const u8 *image, size_t len,
						  struct nvmem_layout *layout)
{
	struct layout_kunit *lk = test->priv;
	struct nvmem_device *nvmem;
	u8 *back = kunit_kmalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, back);
	lk->read_err = -EIO;
	nvmem = layout_kunit_device(test, image, len, 256, 0xff, layout);
	KUNIT_EXPECT_EQ(test, lk->cell_adds, 0);
	lk->read_err = 0;
	KUNIT_ASSERT_EQ(test, nvmem_device_read(nvmem, 0, len, back), (int)len);
	KUNIT_EXPECT_EQ(test, memcmp(back, image, len), 0);
}

/* a device with the node at @path, filled with 0xff after @image */
static struct nvmem_device *
layout_kunit_of_device(struct kunit *test, const void *image, size_t len,
		       size_t size, const char *path)
{
	return __layout_kunit_device(test, image, len, size, 0xff, path, NULL);
}

/* the consumer node at @path, released when the test ends */
static struct device_node *layout_kunit_consumer(struct kunit *test,
						 const char *path)
{
	struct layout_kunit *lk = test->priv;

	lk->consumer = of_find_node_by_path(path);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, lk->consumer);

	return lk->consumer;
}

/* a cell as a consumer sees it, and the bytes it must cover */
struct layout_kunit_cell {
	const char *id;		/* in the consumer's nvmem-cell-names */
	unsigned int offset;
	size_t bytes;
	const u8 *value;	/* what the consumer reads, hooks applied */
	size_t stored;		/* bytes read from the device, if not @bytes */
};

/*
 * Read the cell @c->id of the device tree node @consumer through the
 * consumer API: the core reads the cell's bytes with one reg_read(), which
 * gives its offset and size; the value is what the read hook, with the
 * index of the consumer's phandle argument, made of them.
 */
static void layout_kunit_check_cell(struct kunit *test,
				    struct device_node *consumer,
				    const struct layout_kunit_cell *c)
{
	struct layout_kunit *lk = test->priv;
	struct nvmem_cell *cell;
	size_t len = 0;
	u8 *buf;

	cell = of_nvmem_cell_get(consumer, c->id);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(cell), "cell %s: %ld", c->id,
			       PTR_ERR(cell));
	lk->last_offset = 0;
	lk->last_bytes = 0;
	buf = nvmem_cell_read(cell, &len);
	nvmem_cell_put(cell);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(buf), "cell %s: read: %ld", c->id,
			       PTR_ERR(buf));
	KUNIT_EXPECT_EQ_MSG(test, lk->last_offset, c->offset, "cell %s", c->id);
	KUNIT_EXPECT_EQ_MSG(test, lk->last_bytes, c->stored ?: c->bytes,
			    "cell %s", c->id);
	KUNIT_EXPECT_EQ_MSG(test, len, c->bytes, "cell %s", c->id);
	if (len == c->bytes)
		KUNIT_EXPECT_EQ_MSG(test, memcmp(buf, c->value, len), 0,
				    "cell %s: %*ph", c->id, (int)len, buf);
	kfree(buf);
}

/* special values of layout_kunit_bad.pos */
#define LAYOUT_KUNIT_UNCHANGED	-1	/* the good image as it is */
#define LAYOUT_KUNIT_ERASED	-2	/* no image: the device holds only fill */
#define LAYOUT_KUNIT_FIRST_BYTE	-3	/* only the first byte of the image */

/* a malformed image: the good one with byte @pos set to @val */
struct layout_kunit_bad {
	const char *what;
	size_t size;		/* declared by the device */
	u8 fill;
	int pos;
	u8 val;
	int err;		/* what the parser must return */
};

static void __maybe_unused
layout_kunit_bad_desc(const struct layout_kunit_bad *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

/* the image of case @c made from @good (@len bytes) in @image; its length */
static size_t __maybe_unused
layout_kunit_bad_image(const struct layout_kunit_bad *c, const u8 *good,
		       size_t len, u8 *image)
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

/* one device of layout_kunit_of_refs(): @len bytes of @image, @size declared */
struct layout_kunit_img {
	const u8 *image;
	size_t len;
	size_t size;
	u8 fill;
};

#define LAYOUT_KUNIT_MAX_NODES	16

/* @np and the nodes below it, depth first, each with a reference taken */
static int layout_kunit_subtree(struct device_node *np,
				struct device_node **nodes, int n)
{
	struct device_node *child;

	if (n == LAYOUT_KUNIT_MAX_NODES)
		return n;
	nodes[n++] = of_node_get(np);
	for_each_child_of_node(np, child)
		n = layout_kunit_subtree(child, nodes, n);

	return n;
}

/*
 * Register a device with the node at @path for each of @imgs in turn,
 * @rounds times over, then unregister it: every node at and below @path
 * must hold as many references as before. A layout (or the core) that
 * takes a node on a path, typically an error path, and never puts it
 * back shows here as a count that grew; one put too many as one that
 * shrank (and, sooner or later, a use after free).
 */
static void __maybe_unused
layout_kunit_of_refs(struct kunit *test, const char *path,
		     const struct layout_kunit_img *imgs, int nimgs, int rounds)
{
	struct device_node *nodes[LAYOUT_KUNIT_MAX_NODES], *np;
	unsigned int before[LAYOUT_KUNIT_MAX_NODES];
	struct layout_kunit *lk = test->priv;
	int n, i, r;

	np = of_find_node_by_path(path);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, np);
	n = layout_kunit_subtree(np, nodes, 0);
	of_node_put(np);
	for (i = 0; i < n; i++)
		before[i] = kref_read(&nodes[i]->kobj.kref);

	for (r = 0; r < rounds; r++)
		for (i = 0; i < nimgs; i++)
			__layout_kunit_device(test, imgs[i].image, imgs[i].len,
					      imgs[i].size, imgs[i].fill, path,
					      NULL);
	nvmem_unregister(lk->nvmem);
	lk->nvmem = NULL;
	of_node_put(lk->np);
	lk->np = NULL;

	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, kref_read(&nodes[i]->kobj.kref),
				    before[i], "%pOF after %d x %d devices",
				    nodes[i], rounds, nimgs);
		of_node_put(nodes[i]);
	}
}

/*
 * layout_kunit_of_refs() images: @cases applied to @good in turn, then
 * @good itself on a @good_size device (@ncases + 1 images)
 */
static struct layout_kunit_img * __maybe_unused
layout_kunit_bad_imgs(struct kunit *test, const u8 *good, size_t len,
		      size_t good_size, const struct layout_kunit_bad *cases,
		      int ncases)
{
	struct layout_kunit_img *imgs;
	int i;

	imgs = kunit_kcalloc(test, ncases + 1, sizeof(*imgs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, imgs);
	for (i = 0; i < ncases; i++) {
		u8 *image = kunit_kmalloc(test, len, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, image);
		imgs[i].len = layout_kunit_bad_image(&cases[i], good, len,
						     image);
		imgs[i].image = image;
		imgs[i].size = cases[i].size;
		imgs[i].fill = cases[i].fill;
	}
	imgs[ncases] = (struct layout_kunit_img){ good, len, good_size, 0xff };

	return imgs;
}

#endif /* _NVMEM_LAYOUT_KUNIT_H */
