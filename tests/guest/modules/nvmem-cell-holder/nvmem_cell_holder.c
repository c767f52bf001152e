// SPDX-License-Identifier: GPL-2.0
/*
 * nvmem-lab test module: a consumer that holds nvmem cells from load to
 * unload, as a driver holds the cells it got at probe. The cells are those
 * of the device tree node @node named in its nvmem-cell-names (@cells, comma
 * separated). Each is read once at load and logged as
 * "nvmem_cell_holder: <node> <name> <hex>"; a cell that cannot be had fails
 * the load with the error (517 for -EPROBE_DEFER: the layout is not bound).
 * Built out of tree for every kernel by scripts/build-kernel.sh; used by
 * tests/boot/test_layout_modules.py to show that a layout's module cannot
 * go while one of its cells is held.
 */
#include <linux/err.h>
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

static struct nvmem_cell *held[HOLDER_MAX_CELLS];
static int nheld;

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
	if (ret)
		holder_put_all();

	return ret;
}

static void __exit holder_exit(void)
{
	holder_put_all();
}

module_init(holder_init);
module_exit(holder_exit);
MODULE_DESCRIPTION("nvmem-lab: hold nvmem cells like a consumer driver");
MODULE_LICENSE("GPL");
