// SPDX-License-Identifier: GPL-2.0
/*
 * NVMEM layout for ONIE "TlvInfo" EEPROMs.
 *
 * The EEPROM starts with an 11-byte header (the string "TlvInfo", a NUL,
 * version 1 and the big-endian length of what follows), then a list of
 * type-length-value records. The last record is a CRC-32 over everything
 * before its value. Each record of a known type becomes a cell covering
 * its value.
 *
 * The content is untrusted: every length is checked against the header,
 * the 2 KiB limit of the format and the size of the device before it is
 * used, and nothing becomes a cell unless the whole table is consistent.
 */

#include <linux/crc32.h>
#include <linux/etherdevice.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/nvmem-consumer.h>
#include <linux/nvmem-provider.h>
#include <linux/of.h>
#include <linux/slab.h>
#include <asm/unaligned.h>

#define ONIE_TLV_MAGIC		"TlvInfo"
#define ONIE_TLV_VERSION	1
#define ONIE_TLV_HDR_LEN	11
#define ONIE_TLV_MAX_LEN	2048
#define ONIE_TLV_TYPE_CRC32	0xfe
#define ONIE_TLV_TYPE_MAC	0x24

struct onie_tlv_type {
	u8 type;
	const char *name;
};

static const struct onie_tlv_type onie_tlv_types[] = {
	{ 0x21, "product-name" },
	{ 0x22, "part-number" },
	{ 0x23, "serial-number" },
	{ ONIE_TLV_TYPE_MAC, "mac-address" },
	{ 0x25, "manufacture-date" },
	{ 0x26, "device-version" },
	{ 0x27, "label-revision" },
	{ 0x28, "platform-name" },
	{ 0x29, "onie-version" },
	{ 0x2a, "num-macs" },
	{ 0x2b, "manufacturer" },
	{ 0x2c, "country-code" },
	{ 0x2d, "vendor" },
	{ 0x2e, "diag-version" },
	{ 0x2f, "service-tag" },
	{ 0xfd, "vendor-extension" },
	{ ONIE_TLV_TYPE_CRC32, "crc32" },
};

typedef int (*onie_tlv_add_t)(void *ctx, const struct nvmem_cell_info *info);

static const char *onie_tlv_name(u8 type)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(onie_tlv_types); i++)
		if (onie_tlv_types[i].type == type)
			return onie_tlv_types[i].name;

	return NULL;
}

/* a MAC cell read with index N gives the stored address plus N */
static int onie_tlv_mac_read(void *priv, const char *id, int index,
			     unsigned int offset, void *buf, size_t bytes)
{
	if (bytes != ETH_ALEN)
		return -EINVAL;

	/* a negative index counts down, as eth_addr_add() does */
	if (index)
		eth_addr_add(buf, index);

	return 0;
}

/*
 * Check the header in @buf (ONIE_TLV_HDR_LEN bytes) against a device of
 * @dev_size bytes. Return the length of the whole table, header included.
 */
static int onie_tlv_check_header(struct device *dev, const u8 *buf,
				 size_t dev_size)
{
	unsigned int total;

	if (memcmp(buf, ONIE_TLV_MAGIC, sizeof(ONIE_TLV_MAGIC))) {
		dev_err(dev, "onie-tlv: no TlvInfo header\n");
		return -EINVAL;
	}

	if (buf[8] != ONIE_TLV_VERSION) {
		dev_err(dev, "onie-tlv: unsupported version %u\n", buf[8]);
		return -EINVAL;
	}

	total = ONIE_TLV_HDR_LEN + get_unaligned_be16(&buf[9]);
	if (total > ONIE_TLV_MAX_LEN) {
		dev_err(dev, "onie-tlv: table of %u bytes exceeds %u\n",
			total, ONIE_TLV_MAX_LEN);
		return -EINVAL;
	}

	if (total > dev_size) {
		dev_err(dev, "onie-tlv: table of %u bytes exceeds the device (%zu)\n",
			total, dev_size);
		return -EINVAL;
	}

	return total;
}

/*
 * Walk the records of a table of @total bytes: every record must lie
 * inside the table, and the table must end with a CRC-32 record whose
 * value matches. With @add, create the cells; without, only check.
 */
static int onie_tlv_walk(struct device *dev, struct device_node *container,
			 const u8 *buf, unsigned int total,
			 onie_tlv_add_t add, void *ctx)
{
	unsigned int pos = ONIE_TLV_HDR_LEN;
	bool crc_ok = false;

	while (pos < total) {
		struct nvmem_cell_info info = {};
		unsigned int len;
		u8 type;
		int ret;

		if (crc_ok) {
			dev_err(dev, "onie-tlv: data after the CRC record at %#x\n",
				pos);
			return -EINVAL;
		}

		if (total - pos < 2) {
			dev_err(dev, "onie-tlv: truncated record at %#x\n", pos);
			return -EINVAL;
		}

		type = buf[pos];
		len = buf[pos + 1];
		if (len > total - pos - 2) {
			dev_err(dev, "onie-tlv: record %#x at %#x: length %u runs past the table\n",
				type, pos, len);
			return -EINVAL;
		}

		if (type == ONIE_TLV_TYPE_CRC32) {
			u32 want, got;

			if (len != 4 || pos + 2 + len != total) {
				dev_err(dev, "onie-tlv: malformed CRC record at %#x\n",
					pos);
				return -EINVAL;
			}
			want = get_unaligned_be32(&buf[pos + 2]);
			got = ~crc32_le(~0, buf, pos + 2);
			if (want != got) {
				dev_err(dev, "onie-tlv: CRC mismatch (stored %08x, computed %08x)\n",
					want, got);
				return -EBADMSG;
			}
			crc_ok = true;
		}

		info.name = onie_tlv_name(type);
		if (add && info.name && len) {
			info.offset = pos + 2;
			info.bytes = len;
			if (container)
				info.np = of_get_child_by_name(container,
							       info.name);
			if (type == ONIE_TLV_TYPE_MAC && len == ETH_ALEN)
				info.read_post_process = onie_tlv_mac_read;

			ret = add(ctx, &info);
			if (ret) {
				/* a cell not added leaves its node to us */
				of_node_put(info.np);
				if (ret == -ENOMEM)
					return ret;
				/* e.g. an offset the device cannot address */
				dev_err(dev, "onie-tlv: %s at %#x not added: %d\n",
					info.name, info.offset, ret);
			}
		}

		pos += 2 + len;
	}

	if (!crc_ok) {
		dev_err(dev, "onie-tlv: no CRC record\n");
		return -EINVAL;
	}

	return 0;
}

/*
 * Read the table of @nvmem and check all of it. Return a buffer holding
 * the table, to be freed by the caller, and its length in @total; or an
 * error pointer when the content is malformed or cannot be read.
 */
static u8 *onie_tlv_read_table(struct device *dev, struct nvmem_device *nvmem,
			       unsigned int *total)
{
	size_t dev_size = nvmem_dev_size(nvmem);
	u8 hdr[ONIE_TLV_HDR_LEN];
	int len, ret;
	u8 *buf;

	if (dev_size < ONIE_TLV_HDR_LEN) {
		dev_err(dev, "onie-tlv: device of %zu bytes holds no header\n",
			dev_size);
		return ERR_PTR(-EINVAL);
	}

	ret = nvmem_device_read(nvmem, 0, ONIE_TLV_HDR_LEN, hdr);
	if (ret < 0) {
		dev_err(dev, "onie-tlv: cannot read the header: %d\n", ret);
		return ERR_PTR(ret);
	}

	len = onie_tlv_check_header(dev, hdr, dev_size);
	if (len < 0)
		return ERR_PTR(len);

	buf = kmalloc(len, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	ret = nvmem_device_read(nvmem, 0, len, buf);
	if (ret < 0) {
		dev_err(dev, "onie-tlv: cannot read the %d-byte table: %d\n",
			len, ret);
		goto err;
	}

	/* the header must not have changed since it was checked */
	if (memcmp(buf, hdr, ONIE_TLV_HDR_LEN)) {
		dev_err(dev, "onie-tlv: header changed while reading\n");
		ret = -EAGAIN;
		goto err;
	}

	ret = onie_tlv_walk(dev, NULL, buf, len, NULL, NULL);
	if (ret)
		goto err;

	*total = len;

	return buf;
err:
	kfree(buf);

	return ERR_PTR(ret);
}

static int onie_tlv_add_one(void *ctx, const struct nvmem_cell_info *info)
{
	return nvmem_add_one_cell(ctx, info);
}

static int onie_tlv_add_cells(struct device *dev, struct nvmem_device *nvmem,
			      struct nvmem_layout *layout)
{
	struct device_node *container;
	unsigned int total;
	int ret;
	u8 *buf;

	/*
	 * A malformed table is reported and gives no cells, but the device
	 * itself stays registered and readable.
	 */
	buf = onie_tlv_read_table(dev, nvmem, &total);
	if (IS_ERR(buf))
		return PTR_ERR(buf) == -ENOMEM ? -ENOMEM : 0;

	container = of_nvmem_layout_get_container(nvmem);
	if (IS_ERR(container))
		container = NULL;

	/* the table is known good: only adding a cell can fail here */
	ret = onie_tlv_walk(dev, container, buf, total, onie_tlv_add_one, nvmem);

	of_node_put(container);
	kfree(buf);

	return ret;
}

static const struct of_device_id onie_tlv_of_match[] = {
	{ .compatible = "onie,tlv-layout" },
	{ /* sentinel */ }
};
MODULE_DEVICE_TABLE(of, onie_tlv_of_match);

static struct nvmem_layout onie_tlv_layout = {
	.name = "onie-tlv",
	.of_match_table = onie_tlv_of_match,
	.add_cells = onie_tlv_add_cells,
};

/*
 * Built in, the layout must be known before the first EEPROM or flash
 * driver registers its devices, which happens at device_initcall: layouts
 * are matched when a device registers.
 */
static int __init onie_tlv_init(void)
{
	return nvmem_layout_register(&onie_tlv_layout);
}
subsys_initcall(onie_tlv_init);

static void __exit onie_tlv_exit(void)
{
	nvmem_layout_unregister(&onie_tlv_layout);
}
module_exit(onie_tlv_exit);

#if IS_ENABLED(CONFIG_NVMEM_LAYOUT_ONIE_TLV_KUNIT_TEST)
#include "onie-tlv-kunit.c"
#endif

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("NVMEM layout for ONIE TlvInfo EEPROMs");
