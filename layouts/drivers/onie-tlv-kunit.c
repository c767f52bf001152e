// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the ONIE TLV layout, included by onie-tlv.c. The good
 * table and its CRC were computed outside the kernel (zlib's crc32).
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
}

/* the real add_cells path: a bad table leaves a registered, readable device */
static void onie_kunit_bad_keeps_device(struct kunit *test)
{
	u8 image[sizeof(onie_good)], back[sizeof(onie_good)];
	struct nvmem_device *nvmem;

	memcpy(image, onie_good, sizeof(image));
	image[sizeof(image) - 1] ^= 0x01;
	nvmem = layout_kunit_device(test, image, sizeof(image), 256, 0xff,
				    &onie_tlv_layout);
	KUNIT_ASSERT_EQ(test, nvmem_device_read(nvmem, 0, sizeof(back), back),
			(int)sizeof(back));
	KUNIT_EXPECT_EQ(test, memcmp(back, image, sizeof(back)), 0);
}

static const struct layout_kunit_bad onie_bad_cases[] = {
	{ "truncated header", 8, 0xff, LAYOUT_KUNIT_UNCHANGED, 0, -EINVAL },
	{ "bad magic", 256, 0xff, 0, 't', -EINVAL },
	{ "bad version", 256, 0xff, 8, 2, -EINVAL },
	{ "CRC mismatch", 256, 0xff, 40, 0xd9, -EBADMSG },
	{ "value changed under the CRC", 256, 0xff, 13, 'M', -EBADMSG },
	{ "record length past the total", 256, 0xff, 12, 0xf0, -EINVAL },
	{ "total past the device", sizeof(onie_good), 0xff, 10, 0x40, -EINVAL },
	{ "total above 2048", 4096, 0xff, 9, 0x08, -EINVAL },
	{ "zero-length table", 256, 0xff, 10, 0x00, -EINVAL },
	{ "CRC record of 3 bytes", 256, 0xff, 36, 0x03, -EINVAL },
	{ "CRC record not last", 256, 0xff, 10, 0x1f, -EINVAL },
	{ "truncated record", 256, 0xff, 10, 0x19, -EINVAL },
	{ "all 0xff", 256, 0xff, LAYOUT_KUNIT_ERASED, 0, -EINVAL },
	{ "all 0x00", 256, 0x00, LAYOUT_KUNIT_ERASED, 0, -EINVAL },
};

KUNIT_ARRAY_PARAM(onie_kunit_bad, onie_bad_cases, layout_kunit_bad_desc);

static void onie_kunit_malformed(struct kunit *test)
{
	const struct layout_kunit_bad *c = test->param_value;
	struct layout_kunit *lk = test->priv;
	u8 image[sizeof(onie_good)];
	size_t len = layout_kunit_bad_image(c, onie_good, sizeof(image), image);

	KUNIT_EXPECT_EQ(test, onie_kunit_parse(test, image, len, c->size,
					       c->fill), c->err);
	KUNIT_EXPECT_EQ(test, lk->ncells, 0);
}

static struct kunit_case onie_tlv_kunit_cases[] = {
	KUNIT_CASE(onie_kunit_good),
	KUNIT_CASE(onie_kunit_mac_index),
	KUNIT_CASE(onie_kunit_bad_keeps_device),
	KUNIT_CASE_PARAM(onie_kunit_malformed, onie_kunit_bad_gen_params),
	{}
};

static struct kunit_suite onie_tlv_kunit_suite = {
	.name = "nvmem_layout_onie_tlv",
	.init = layout_kunit_init,
	.exit = layout_kunit_exit,
	.test_cases = onie_tlv_kunit_cases,
};

kunit_test_suite(onie_tlv_kunit_suite);
