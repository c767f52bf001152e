// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the sl28 VPD layout, included by sl28vpd.c. The good
 * record's CRC-8 was computed outside the kernel.
 */

#include "layout-kunit.h"

/* 'V', 1, "SL28-0000042" padded to 15, 02:11:22:33:44:80, CRC-8 */
static const u8 sl28_good[] = {
	0x56, 0x01,
	0x53, 0x4c, 0x32, 0x38, 0x2d, 0x30, 0x30, 0x30, 0x30, 0x30, 0x34, 0x32,
	0x00, 0x00, 0x00,
	0x02, 0x11, 0x22, 0x33, 0x44, 0x80,
	0x5a,
};

/* what the add_cells path does, with the cells recorded, not added */
static int sl28_kunit_parse(struct kunit *test, const u8 *image, size_t len,
			    size_t size, u8 fill)
{
	struct layout_kunit *lk = test->priv;
	struct nvmem_device *nvmem;
	struct sl28vpd_v1 vpd;
	int ret;

	nvmem = layout_kunit_device(test, image, len, size, fill, NULL);
	ret = sl28vpd_read(lk->parent, nvmem, &vpd);
	if (ret)
		return ret;

	return sl28vpd_add(NULL, layout_kunit_add, lk);
}

static void sl28_kunit_good(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	KUNIT_ASSERT_EQ(test, sl28_kunit_parse(test, sl28_good, sizeof(sl28_good),
					       256, 0xff), 0);
	KUNIT_ASSERT_EQ(test, lk->ncells, 2);
	KUNIT_EXPECT_STREQ(test, lk->cells[0].name, "serial-number");
	KUNIT_EXPECT_EQ(test, lk->cells[0].offset, 2);
	KUNIT_EXPECT_EQ(test, lk->cells[0].bytes, 15);
	KUNIT_EXPECT_PTR_EQ(test, lk->cells[0].read_post_process,
			    (nvmem_cell_post_process_t)NULL);
	KUNIT_EXPECT_STREQ(test, lk->cells[1].name, "base-mac-address");
	KUNIT_EXPECT_EQ(test, lk->cells[1].offset, 17);
	KUNIT_EXPECT_EQ(test, lk->cells[1].bytes, 6);
	KUNIT_EXPECT_PTR_EQ(test, lk->cells[1].read_post_process,
			    (nvmem_cell_post_process_t)sl28vpd_mac_read);
}

static void sl28_kunit_mac_index(struct kunit *test)
{
	u8 mac[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x80 };
	static const u8 plus3[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x83 };
	u8 multicast[ETH_ALEN] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	u8 zero[ETH_ALEN] = {};

	KUNIT_ASSERT_EQ(test, sl28vpd_mac_read(NULL, NULL, 3, 17, mac, 6), 0);
	KUNIT_EXPECT_EQ(test, memcmp(mac, plus3, ETH_ALEN), 0);
	KUNIT_EXPECT_EQ(test, sl28vpd_mac_read(NULL, NULL, 0, 17, multicast, 6),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sl28vpd_mac_read(NULL, NULL, 0, 17, zero, 6),
			-EINVAL);
}

/* the real add_cells path: a bad record leaves a registered, readable device */
static void sl28_kunit_bad_keeps_device(struct kunit *test)
{
	u8 image[sizeof(sl28_good)], back[sizeof(sl28_good)];
	struct nvmem_device *nvmem;

	memcpy(image, sl28_good, sizeof(image));
	image[5] ^= 0x20;
	nvmem = layout_kunit_device(test, image, sizeof(image), 256, 0xff,
				    &sl28vpd_layout);
	KUNIT_ASSERT_EQ(test, nvmem_device_read(nvmem, 0, sizeof(back), back),
			(int)sizeof(back));
	KUNIT_EXPECT_EQ(test, memcmp(back, image, sizeof(back)), 0);
}

static const struct layout_kunit_bad sl28_bad_cases[] = {
	{ "device of 1 byte", 1, 0xff, LAYOUT_KUNIT_UNCHANGED, 0, -EINVAL },
	{ "truncated record", sizeof(sl28_good) - 1, 0xff, LAYOUT_KUNIT_UNCHANGED, 0, -EINVAL },
	{ "bad magic", 256, 0xff, 0, 'v', -EINVAL },
	{ "version 0", 256, 0xff, 1, 0, -EINVAL },
	{ "version 2", 256, 0xff, 1, 2, -EINVAL },
	{ "CRC mismatch", 256, 0xff, 23, 0x5b, -EBADMSG },
	{ "serial changed under the CRC", 256, 0xff, 7, '1', -EBADMSG },
	{ "MAC changed under the CRC", 256, 0xff, 22, 0x81, -EBADMSG },
	{ "all 0xff", 256, 0xff, LAYOUT_KUNIT_ERASED, 0, -EINVAL },
	{ "all 0x00", 256, 0x00, LAYOUT_KUNIT_ERASED, 0, -EINVAL },
	{ "erased after the magic", 256, 0xff, LAYOUT_KUNIT_FIRST_BYTE, 0, -EINVAL },
};

KUNIT_ARRAY_PARAM(sl28_kunit_bad, sl28_bad_cases, layout_kunit_bad_desc);

static void sl28_kunit_malformed(struct kunit *test)
{
	const struct layout_kunit_bad *c = test->param_value;
	struct layout_kunit *lk = test->priv;
	u8 image[sizeof(sl28_good)];
	size_t len = layout_kunit_bad_image(c, sl28_good, sizeof(image), image);

	KUNIT_EXPECT_EQ(test, sl28_kunit_parse(test, image, len, c->size,
					       c->fill), c->err);
	KUNIT_EXPECT_EQ(test, lk->ncells, 0);
}

static struct kunit_case sl28vpd_kunit_cases[] = {
	KUNIT_CASE(sl28_kunit_good),
	KUNIT_CASE(sl28_kunit_mac_index),
	KUNIT_CASE(sl28_kunit_bad_keeps_device),
	KUNIT_CASE_PARAM(sl28_kunit_malformed, sl28_kunit_bad_gen_params),
	{}
};

static struct kunit_suite sl28vpd_kunit_suite = {
	.name = "nvmem_layout_sl28vpd",
	.init = layout_kunit_init,
	.exit = layout_kunit_exit,
	.test_cases = sl28vpd_kunit_cases,
};

kunit_test_suite(sl28vpd_kunit_suite);
