// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the ONIE TLV layout, included by onie-tlv.c. The good
 * tables and their CRCs were computed outside the kernel (zlib's crc32).
 * The device tree nodes of the real-path test come from
 * onie-tlv-kunit-overlay.dts.
 */

#include "layout-kunit.h"

/* product-name, mac-address, an unknown type 0x99, device-version, crc32 */
static const u8 onie_good[] = {
	0x54, 0x6c, 0x76, 0x49, 0x6e, 0x66, 0x6f, 0x00, 0x01, 0x00, 0x1e,
	0x21, 0x07, 0x4e, 0x56, 0x4c, 0x2d, 0x34, 0x38, 0x58,
	0x24, 0x06, 0x02, 0x11, 0x22, 0x33, 0x44, 0xff,
	0x99, 0x02, 0x61, 0x62,
	0x26, 0x01, 0x03,
	0xfe, 0x04, 0x92, 0x94, 0xec, 0xd8,
};

/* the 2 KiB limit: tables of unknown records and their CRC (zlib's crc32) */
#define ONIE_KUNIT_CRC_2048	0x3687ca95
#define ONIE_KUNIT_CRC_2049	0x952d8c8a

LAYOUT_KUNIT_DTB(onie_tlv_kunit_overlay);

static struct layout_kunit_overlay onie_kunit_overlay;

static int __init onie_kunit_keep_overlay(void)
{
	return layout_kunit_keep_overlay(&onie_kunit_overlay,
					 __dtb_onie_tlv_kunit_overlay_begin,
					 __dtb_onie_tlv_kunit_overlay_end);
}
late_initcall(onie_kunit_keep_overlay);

static int onie_kunit_init(struct kunit *test)
{
	return layout_kunit_setup(test, &onie_kunit_overlay);
}

/*
 * A table of @total bytes: records of the unknown type 0x99 holding 0xa5,
 * then the CRC record with @crc, which must be right for that content.
 */
static u8 *onie_kunit_big_table(struct kunit *test, unsigned int total,
				u32 crc)
{
	unsigned int pos = ONIE_TLV_HDR_LEN, len;
	u8 *buf;

	buf = kunit_kmalloc(test, total, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	memcpy(buf, onie_good, ONIE_TLV_HDR_LEN);
	put_unaligned_be16(total - ONIE_TLV_HDR_LEN, &buf[9]);
	while (pos < total - 6) {
		len = min(total - 6 - pos - 2, 255U);
		buf[pos] = 0x99;
		buf[pos + 1] = len;
		memset(&buf[pos + 2], 0xa5, len);
		pos += 2 + len;
	}
	KUNIT_ASSERT_EQ(test, pos, total - 6);
	buf[pos] = ONIE_TLV_TYPE_CRC32;
	buf[pos + 1] = 4;
	put_unaligned_be32(crc, &buf[pos + 2]);

	return buf;
}

/* what the add_cells path does, with the cells recorded, not added */
static int onie_kunit_parse(struct kunit *test, const u8 *image, size_t len,
			    size_t size, u8 fill)
{
	struct layout_kunit *lk = test->priv;
	struct nvmem_device *nvmem;
	unsigned int total;
	int ret;
	u8 *buf;

	nvmem = layout_kunit_device(test, image, len, size, fill, NULL);
	buf = onie_tlv_read_table(lk->parent, nvmem, &total);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = onie_tlv_walk(lk->parent, NULL, buf, total, layout_kunit_add, lk);
	kfree(buf);

	return ret;
}

static void onie_kunit_good(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	KUNIT_ASSERT_EQ(test, onie_kunit_parse(test, onie_good, sizeof(onie_good),
					       256, 0xff), 0);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
	KUNIT_ASSERT_EQ(test, lk->ncells, 4);
	KUNIT_EXPECT_STREQ(test, lk->cells[0].name, "product-name");
	KUNIT_EXPECT_EQ(test, lk->cells[0].offset, 13);
	KUNIT_EXPECT_EQ(test, lk->cells[0].bytes, 7);
	KUNIT_EXPECT_STREQ(test, lk->cells[1].name, "mac-address");
	KUNIT_EXPECT_EQ(test, lk->cells[1].offset, 22);
	KUNIT_EXPECT_EQ(test, lk->cells[1].bytes, 6);
	KUNIT_EXPECT_PTR_EQ(test, lk->cells[1].read_post_process,
			    (nvmem_cell_post_process_t)onie_tlv_mac_read);
	KUNIT_EXPECT_STREQ(test, lk->cells[2].name, "device-version");
	KUNIT_EXPECT_EQ(test, lk->cells[2].offset, 34);
	KUNIT_EXPECT_STREQ(test, lk->cells[3].name, "crc32");
	KUNIT_EXPECT_EQ(test, lk->cells[3].offset, 37);
	KUNIT_EXPECT_EQ(test, lk->cells[3].bytes, 4);
}

/* a table that ends exactly at the end of the device is whole */
static void onie_kunit_fills_device(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	KUNIT_EXPECT_EQ(test, onie_kunit_parse(test, onie_good, sizeof(onie_good),
					       sizeof(onie_good), 0xff), 0);
	KUNIT_EXPECT_EQ(test, lk->ncells, 4);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
}

/*
 * A good table one byte longer than the device: the device serves the
 * whole table, so only the size check can refuse it, and it must do so
 * without reading past the end of the device.
 */
static void onie_kunit_past_device(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	KUNIT_EXPECT_EQ(test, onie_kunit_parse(test, onie_good, sizeof(onie_good),
					       sizeof(onie_good) - 1, 0xff),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, lk->ncells, 0);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
}

/* 2048 bytes, header included, is the most the format allows */
static void onie_kunit_max_len(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;
	u8 *table = onie_kunit_big_table(test, 2048, ONIE_KUNIT_CRC_2048);

	KUNIT_ASSERT_EQ(test, onie_kunit_parse(test, table, 2048,
					       LAYOUT_KUNIT_BACKING, 0xff), 0);
	KUNIT_ASSERT_EQ(test, lk->ncells, 1);
	KUNIT_EXPECT_STREQ(test, lk->cells[0].name, "crc32");
	KUNIT_EXPECT_EQ(test, lk->cells[0].offset, 2044);
	KUNIT_EXPECT_EQ(test, lk->cells[0].bytes, 4);
}

/* one byte more, on a device large enough, with a right CRC: refused */
static void onie_kunit_above_max_len(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;
	u8 *table = onie_kunit_big_table(test, 2049, ONIE_KUNIT_CRC_2049);

	KUNIT_EXPECT_EQ(test, onie_kunit_parse(test, table, 2049,
					       LAYOUT_KUNIT_BACKING, 0xff),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, lk->ncells, 0);
}

static void onie_kunit_mac_index(struct kunit *test)
{
	u8 mac[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0xff };
	static const u8 plus2[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x45, 0x01 };
	static const u8 same[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0xff };

	KUNIT_ASSERT_EQ(test, onie_tlv_mac_read(NULL, NULL, 0, 22, mac, 6), 0);
	KUNIT_EXPECT_EQ(test, memcmp(mac, same, ETH_ALEN), 0);
	KUNIT_ASSERT_EQ(test, onie_tlv_mac_read(NULL, NULL, 2, 22, mac, 6), 0);
	KUNIT_EXPECT_EQ(test, memcmp(mac, plus2, ETH_ALEN), 0);
	KUNIT_EXPECT_EQ(test, onie_tlv_mac_read(NULL, NULL, 1, 22, mac, 5),
			-EINVAL);
	/* a negative index counts down, borrowing across bytes */
	KUNIT_ASSERT_EQ(test, onie_tlv_mac_read(NULL, NULL, -2, 22, mac, 6), 0);
	KUNIT_EXPECT_EQ(test, memcmp(mac, same, ETH_ALEN), 0);
}

/*
 * A cell the core refuses (say, at an offset the device's stride does not
 * allow) is reported and left out; the other cells are still added. Only
 * running out of memory stops the walk.
 */
static void onie_kunit_cell_refused(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;
	int all;

	KUNIT_ASSERT_EQ(test, onie_kunit_parse(test, onie_good, sizeof(onie_good),
					       256, 0xff), 0);
	all = lk->ncells;
	KUNIT_ASSERT_GT(test, all, 2);

	lk->ncells = 0;
	lk->refuse = "product-name";
	lk->refuse_err = -EINVAL;
	KUNIT_EXPECT_EQ(test, onie_kunit_parse(test, onie_good, sizeof(onie_good),
					       256, 0xff), 0);
	KUNIT_EXPECT_EQ(test, lk->ncells, all - 1);

	lk->ncells = 0;
	lk->refuse_err = -ENOMEM;
	KUNIT_EXPECT_EQ(test, onie_kunit_parse(test, onie_good, sizeof(onie_good),
					       256, 0xff), -ENOMEM);
}

/*
 * The real path on a good table: the layout is found through the
 * compatible of the device's nvmem-layout node, its add_cells() creates
 * exactly the cells of the known records, each with its node, and a
 * consumer reads them, the MAC address with its index added.
 */
static void onie_kunit_of_cells(struct kunit *test)
{
	static const u8 name[] = "NVL-48X";
	static const u8 mac[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0xff };
	static const u8 mac2[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x45, 0x01 };
	static const u8 version[] = { 0x03 };
	static const u8 crc[] = { 0x92, 0x94, 0xec, 0xd8 };
	static const struct layout_kunit_cell cells[] = {
		{ "product-name", 13, 7, name },
		{ "mac-address", 22, ETH_ALEN, mac },
		{ "mac-address-2", 22, ETH_ALEN, mac2 },
		{ "device-version", 34, 1, version },
		{ "crc32", 37, 4, crc },
	};
	struct layout_kunit *lk = test->priv;
	struct device_node *consumer;
	int i;

	layout_kunit_of_device(test, onie_good, sizeof(onie_good), 256,
			       "/onie-tlv-kunit/eeprom");
	/* product-name, mac-address, device-version, crc32; not type 0x99 */
	KUNIT_EXPECT_EQ(test, lk->cell_adds, 4);

	consumer = layout_kunit_consumer(test, "/onie-tlv-kunit/consumer");
	for (i = 0; i < ARRAY_SIZE(cells); i++)
		layout_kunit_check_cell(test, consumer, &cells[i]);
}

/* the real add_cells path: a bad table leaves a registered, readable device */
static void onie_kunit_bad_keeps_device(struct kunit *test)
{
	u8 image[sizeof(onie_good)], back[sizeof(onie_good)];
	struct layout_kunit *lk = test->priv;
	struct nvmem_device *nvmem;

	memcpy(image, onie_good, sizeof(image));
	image[sizeof(image) - 1] ^= 0x01;
	nvmem = layout_kunit_device(test, image, sizeof(image), 256, 0xff,
				    &onie_tlv_layout);
	KUNIT_EXPECT_EQ(test, lk->cell_adds, 0);
	KUNIT_ASSERT_EQ(test, nvmem_device_read(nvmem, 0, sizeof(back), back),
			(int)sizeof(back));
	KUNIT_EXPECT_EQ(test, memcmp(back, image, sizeof(back)), 0);
}

/*
 * A device that cannot be read (an EEPROM that does not answer) gives no
 * cells and stays registered; once it answers, its content is all there.
 */
static void onie_kunit_read_error(struct kunit *test)
{
	layout_kunit_expect_read_error(test, onie_good, sizeof(onie_good),
				       &onie_tlv_layout);
}

static const struct layout_kunit_bad onie_bad_cases[] = {
	{ "device shorter than a header", 8, 0xff, LAYOUT_KUNIT_UNCHANGED, 0, -EINVAL },
	{ "bad magic", 256, 0xff, 0, 't', -EINVAL },
	{ "bad version", 256, 0xff, 8, 2, -EINVAL },
	{ "CRC mismatch", 256, 0xff, 40, 0xd9, -EBADMSG },
	{ "value changed under the CRC", 256, 0xff, 13, 'M', -EBADMSG },
	{ "record length past the total", 256, 0xff, 12, 0xf0, -EINVAL },
	{ "total past the device", sizeof(onie_good), 0xff, 10, 0x40, -EINVAL },
	{ "zero-length table", 256, 0xff, 10, 0x00, -EINVAL },
	{ "CRC record of 3 bytes", 256, 0xff, 36, 0x03, -EINVAL },
	{ "CRC record not last", 256, 0xff, 10, 0x1f, -EINVAL },
	{ "truncated record", 256, 0xff, 10, 0x19, -EINVAL },
	{ "all 0xff", 256, 0xff, LAYOUT_KUNIT_ERASED, 0, -EINVAL },
	{ "all 0x00", 256, 0x00, LAYOUT_KUNIT_ERASED, 0, -EINVAL },
};

KUNIT_ARRAY_PARAM(onie_kunit_bad, onie_bad_cases, layout_kunit_bad_desc);

/* refused, no cells, and never a read beyond the device */
static void onie_kunit_malformed(struct kunit *test)
{
	const struct layout_kunit_bad *c = test->param_value;
	struct layout_kunit *lk = test->priv;
	u8 image[sizeof(onie_good)];
	size_t len = layout_kunit_bad_image(c, onie_good, sizeof(image), image);

	KUNIT_EXPECT_EQ(test, onie_kunit_parse(test, image, len, c->size,
					       c->fill), c->err);
	KUNIT_EXPECT_EQ(test, lk->ncells, 0);
	KUNIT_EXPECT_FALSE_MSG(test, lk->read_past_end,
			       "read past the end of a %zu-byte device",
			       c->size);
}

/*
 * ten rounds of devices with the node and every malformed image, then the
 * good one: the nodes' reference counts end where they started
 */
static void onie_kunit_of_refs(struct kunit *test)
{
	int n = ARRAY_SIZE(onie_bad_cases);
	struct layout_kunit_img *imgs;

	imgs = layout_kunit_bad_imgs(test, onie_good, sizeof(onie_good), 256,
				     onie_bad_cases, n);
	layout_kunit_of_refs(test, "/onie-tlv-kunit/eeprom", imgs, n + 1, 10);
}

static struct kunit_case onie_tlv_kunit_cases[] = {
	KUNIT_CASE(onie_kunit_good),
	KUNIT_CASE(onie_kunit_fills_device),
	KUNIT_CASE(onie_kunit_past_device),
	KUNIT_CASE(onie_kunit_max_len),
	KUNIT_CASE(onie_kunit_above_max_len),
	KUNIT_CASE(onie_kunit_mac_index),
	KUNIT_CASE(onie_kunit_cell_refused),
	KUNIT_CASE(onie_kunit_of_cells),
	KUNIT_CASE(onie_kunit_bad_keeps_device),
	KUNIT_CASE(onie_kunit_read_error),
	KUNIT_CASE_PARAM(onie_kunit_malformed, onie_kunit_bad_gen_params),
	KUNIT_CASE(onie_kunit_of_refs),
	{}
};

static struct kunit_suite onie_tlv_kunit_suite = {
	.name = "nvmem_layout_onie_tlv",
	.init = onie_kunit_init,
	.exit = layout_kunit_exit,
	.test_cases = onie_tlv_kunit_cases,
};

kunit_test_suite(onie_tlv_kunit_suite);
