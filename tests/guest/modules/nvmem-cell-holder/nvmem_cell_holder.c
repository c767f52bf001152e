// SPDX-License-Identifier: GPL-2.0
/*
 * nvmem-lab test module: a consumer that holds nvmem cells from load to
 * unload, as a driver holds the cells it got at probe. The cells are those
 * of the device tree node @node named in its nvmem-cell-names (@cells, comma
 * separated). Each is read once at load and logged as
 * "nvmem_cell_holder: <node> <name> <hex>"; a cell that cannot be had fails
 * the load with the error (517 for -EPROBE_DEFER: the layout is not bound).
 * With reads=N, a kernel thread then reads every held cell N times, each
 * read compared with the first, and logs per cell
 * "nvmem_cell_holder: <node> <name>: <n> reads, <d> differ, <f> failed",
 * then "nvmem_cell_holder: reads done" (tests/boot/test_consumer.py reads
 * the same cells through sysfs meanwhile).
 * Built out of tree for every kernel by scripts/build-kernel.sh; used by
 * tests/boot/test_layout_modules.py to show that a layout's module cannot
 * go while one of its cells is held.
 */
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/nvmem-consumer.h>
#include <linux/of.h>
#include <linux/slab.h>
#include <linux/string.h>

#define HOLDER_MAX_CELLS 8

static char *node = "/nvlab-consumer";
module_param(node, charp, 0444);
MODULE_PARM_DESC(node, "device tree path of the consumer node");

static char *cells;
module_param(cells, charp, 0444);
MODULE_PARM_DESC(cells, "comma-separated nvmem-cell-names to hold");

static unsigned int reads;
module_param(reads, uint, 0444);
MODULE_PARM_DESC(reads, "read each held cell this many times from a kernel thread");

static struct nvmem_cell *held[HOLDER_MAX_CELLS];
static char held_name[HOLDER_MAX_CELLS][32];
static int nheld;
static struct task_struct *reader;

struct holder_count {
	void *first;
	size_t len;
	unsigned int done, differ, failed;
};

/* one cell read, compared with the first read of it */
static void holder_read_once(int i, struct holder_count *c)
{
	size_t len = 0;
	void *buf = nvmem_cell_read(held[i], &len);

	c->done++;
	if (IS_ERR(buf)) {
		c->failed++;
		return;
	}
	if (!c->first) {
		c->first = buf;
		c->len = len;
		return;
	}
	if (len != c->len || memcmp(buf, c->first, len))
		c->differ++;
	kfree(buf);
}

static int holder_reader(void *unused)
{
	struct holder_count *count;
	unsigned int n;
	int i;

	count = kcalloc(nheld, sizeof(*count), GFP_KERNEL);
	if (!count)
		goto wait;
	for (n = 0; n < reads && !kthread_should_stop(); n++) {
		for (i = 0; i < nheld; i++)
			holder_read_once(i, &count[i]);
		cond_resched();
	}
	for (i = 0; i < nheld; i++) {
		pr_info("nvmem_cell_holder: %s %s: %u reads, %u differ, %u failed\n",
			node, held_name[i], count[i].done, count[i].differ,
			count[i].failed);
		kfree(count[i].first);
	}
	kfree(count);
	pr_info("nvmem_cell_holder: reads done\n");
wait:
	/* the task stays until holder_exit() stops it */
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}

	return 0;
}

static void holder_put_all(void)
{
	while (nheld)
		nvmem_cell_put(held[--nheld]);
}

static int holder_take(struct device_node *np, const char *name)
{
	struct nvmem_cell *cell;
	size_t len;
	void *buf;

	if (nheld == HOLDER_MAX_CELLS)
		return -ENOSPC;

	cell = of_nvmem_cell_get(np, name);
	if (IS_ERR(cell)) {
		pr_err("nvmem_cell_holder: %s %s: %pe\n", node, name, cell);
		return PTR_ERR(cell);
	}
	strscpy(held_name[nheld], name, sizeof(held_name[0]));
	held[nheld++] = cell;

	buf = nvmem_cell_read(cell, &len);
	if (IS_ERR(buf)) {
		pr_info("nvmem_cell_holder: %s %s read: %pe\n", node, name, buf);
		return 0;
	}
	pr_info("nvmem_cell_holder: %s %s %*phN\n", node, name, (int)len, buf);
	kfree(buf);

	return 0;
}

static int __init holder_init(void)
{
	struct device_node *np;
	char *list, *rest, *name;
	int ret = 0;

	if (!cells || !*cells)
		return -EINVAL;
	np = of_find_node_by_path(node);
	if (!np) {
		pr_err("nvmem_cell_holder: no node %s\n", node);
		return -ENOENT;
	}
	list = kstrdup(cells, GFP_KERNEL);
	if (!list) {
		of_node_put(np);
		return -ENOMEM;
	}

	rest = list;
	while (!ret && (name = strsep(&rest, ",")))
		if (*name)
			ret = holder_take(np, name);

	kfree(list);
	of_node_put(np);
	if (!ret && reads) {
		reader = kthread_run(holder_reader, NULL, "nvmem-holder");
		if (IS_ERR(reader)) {
			ret = PTR_ERR(reader);
			reader = NULL;
		}
	}
	if (ret)
		holder_put_all();

	return ret;
}

static void __exit holder_exit(void)
{
	if (reader)
		kthread_stop(reader);
	holder_put_all();
}

module_init(holder_init);
module_exit(holder_exit);
MODULE_DESCRIPTION("nvmem-lab: hold nvmem cells like a consumer driver");
MODULE_LICENSE("GPL");
