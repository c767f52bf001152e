// SPDX-License-Identifier: GPL-2.0
/*
 * NVMEM layout for the vital product data (VPD) of Kontron sl28 boards.
 *
 * Version 1 of the VPD is a fixed 24-byte record at the start of the
 * EEPROM: the magic 'V', the version, a 15-character serial number, the
 * board's base MAC address and a CRC-8 (polynomial 0x07) over the 23
 * bytes before it. The record is checked as a whole before any cell is
 * created; a bad record is reported and gives no cells.
 */

#include <linux/crc8.h>
#include <linux/etherdevice.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/nvmem-consumer.h>
#include <linux/nvmem-provider.h>
#include <linux/of.h>

#define SL28VPD_MAGIC		'V'
#define SL28VPD_VERSION		1
#define SL28VPD_CRC8_POLY	0x07

struct sl28vpd_v1 {
	u8 magic;
	u8 version;
	char serial_number[15];
	u8 base_mac_address[ETH_ALEN];
	u8 crc8;
} __packed;

typedef int (*sl28vpd_add_t)(void *ctx, const struct nvmem_cell_info *info);

DECLARE_CRC8_TABLE(sl28vpd_crc8_table);

/* the base address plus the consumer's index; refuse a bogus base */
static int sl28vpd_mac_read(void *priv, const char *id, int index,
			    unsigned int offset, void *buf, size_t bytes)
{
	/* interfaces count up from the base: a negative index is refused */
	if (bytes != ETH_ALEN || !is_valid_ether_addr(buf) || index < 0)
		return -EINVAL;

	if (index)
		eth_addr_add(buf, index);

	return 0;
}

static int sl28vpd_check(struct device *dev, const struct sl28vpd_v1 *vpd)
{
	u8 crc;

	if (vpd->magic != SL28VPD_MAGIC) {
		dev_err(dev, "sl28vpd: bad magic %#x\n", vpd->magic);
		return -EINVAL;
	}

	if (vpd->version != SL28VPD_VERSION) {
		dev_err(dev, "sl28vpd: unsupported version %u\n", vpd->version);
		return -EINVAL;
	}

	crc = crc8(sl28vpd_crc8_table, (const u8 *)vpd,
		   offsetof(struct sl28vpd_v1, crc8), 0);
	if (crc != vpd->crc8) {
		dev_err(dev, "sl28vpd: CRC mismatch (stored %02x, computed %02x)\n",
			vpd->crc8, crc);
		return -EBADMSG;
	}

	return 0;
}

/* read the record of @nvmem into @vpd and check it */
static int sl28vpd_read(struct device *dev, struct nvmem_device *nvmem,
			struct sl28vpd_v1 *vpd)
{
	int ret;

	if (nvmem_dev_size(nvmem) < sizeof(*vpd)) {
		dev_err(dev, "sl28vpd: device of %zu bytes is too small\n",
			nvmem_dev_size(nvmem));
		return -EINVAL;
	}

	ret = nvmem_device_read(nvmem, 0, sizeof(*vpd), vpd);
	if (ret < 0) {
		dev_err(dev, "sl28vpd: cannot read the record: %d\n", ret);
		return ret;
	}

	return sl28vpd_check(dev, vpd);
}

/* the cells of a good record, each with its node in @container if any */
static int sl28vpd_add(struct device *dev, struct device_node *container,
		       sl28vpd_add_t add, void *ctx)
{
	static const struct {
		const char *name;
		unsigned int offset;
		unsigned int bytes;
		nvmem_cell_post_process_t read;
	} cells[] = {
		{ "serial-number", offsetof(struct sl28vpd_v1, serial_number),
		  sizeof_field(struct sl28vpd_v1, serial_number), NULL },
		{ "base-mac-address",
		  offsetof(struct sl28vpd_v1, base_mac_address), ETH_ALEN,
		  sl28vpd_mac_read },
	};
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(cells); i++) {
		struct nvmem_cell_info info = {
			.name = cells[i].name,
			.offset = cells[i].offset,
			.bytes = cells[i].bytes,
			.read_post_process = cells[i].read,
		};

		if (container)
			info.np = of_get_child_by_name(container, info.name);

		ret = add(ctx, &info);
		if (ret) {
			/* a cell not added leaves its node to us */
			of_node_put(info.np);
			if (ret == -ENOMEM)
				return ret;
			/* e.g. an offset the device cannot address */
			dev_err(dev, "sl28vpd: %s at %#x not added: %d\n",
				info.name, info.offset, ret);
		}
	}

	return 0;
}

static int sl28vpd_add_one(void *ctx, const struct nvmem_cell_info *info)
{
	return nvmem_add_one_cell(ctx, info);
}

static int sl28vpd_add_cells(struct device *dev, struct nvmem_device *nvmem,
			     struct nvmem_layout *layout)
{
	struct device_node *container;
	struct sl28vpd_v1 vpd;
	int ret;

	/*
	 * Bad content is reported and gives no cells; the device stays
	 * registered and readable. A failure while adding cells fails the
	 * registration, which removes the cells already added.
	 */
	if (sl28vpd_read(dev, nvmem, &vpd))
		return 0;

	container = of_nvmem_layout_get_container(nvmem);
	if (IS_ERR(container))
		container = NULL;
	ret = sl28vpd_add(dev, container, sl28vpd_add_one, nvmem);
	of_node_put(container);

	return ret;
}

static const struct of_device_id sl28vpd_of_match[] = {
	{ .compatible = "kontron,sl28-vpd" },
	{ /* sentinel */ }
};
MODULE_DEVICE_TABLE(of, sl28vpd_of_match);

static struct nvmem_layout sl28vpd_layout = {
	.name = "sl28-vpd",
	.of_match_table = sl28vpd_of_match,
	.add_cells = sl28vpd_add_cells,
};

/*
 * Built in, the layout must be known before the first EEPROM or flash
 * driver registers its devices, which happens at device_initcall: layouts
 * are matched when a device registers.
 */
static int __init sl28vpd_init(void)
{
	crc8_populate_msb(sl28vpd_crc8_table, SL28VPD_CRC8_POLY);

	return nvmem_layout_register(&sl28vpd_layout);
}
subsys_initcall(sl28vpd_init);

static void __exit sl28vpd_exit(void)
{
	nvmem_layout_unregister(&sl28vpd_layout);
}
module_exit(sl28vpd_exit);

#if IS_ENABLED(CONFIG_NVMEM_LAYOUT_SL28_VPD_KUNIT_TEST)
#include "sl28vpd-kunit.c"
#endif

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("NVMEM layout for Kontron sl28 vital product data");
