// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the sl28 VPD layout, included by sl28vpd.c. The CRC-8s
 * of the records were computed outside the kernel. The device tree nodes
 * of the real-path tests come from sl28vpd-kunit-overlay.dts.
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

/* the good record with the base MAC 03:11:22:33:44:80 (multicast) */
#define SL28_KUNIT_MULTICAST_CRC	0x73

LAYOUT_KUNIT_DTB(sl28vpd_kunit_overlay);

static struct layout_kunit_overlay sl28_kunit_overlay;

static int __init sl28_kunit_keep_overlay(void)
{
	return layout_kunit_keep_overlay(&sl28_kunit_overlay,
					 __dtb_sl28vpd_kunit_overlay_begin,
					 __dtb_sl28vpd_kunit_overlay_end);
}
late_initcall(sl28_kunit_keep_overlay);

static int sl28_kunit_init(struct kunit *test)
{
	return layout_kunit_setup(test, &sl28_kunit_overlay);
}

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

	return sl28vpd_add(lk->parent, NULL, layout_kunit_add, lk);
}

static void sl28_kunit_good(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	KUNIT_ASSERT_EQ(test, sl28_kunit_parse(test, sl28_good, sizeof(sl28_good),
					       256, 0xff), 0);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
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

/* a device of exactly the record's size holds it */
static void sl28_kunit_fills_device(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	KUNIT_EXPECT_EQ(test, sl28_kunit_parse(test, sl28_good, sizeof(sl28_good),
					       sizeof(sl28_good), 0xff), 0);
	KUNIT_EXPECT_EQ(test, lk->ncells, 2);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
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
	/* interfaces count up from the base address: below it is refused */
	KUNIT_EXPECT_EQ(test, sl28vpd_mac_read(NULL, NULL, -1, 17, mac, 6),
			-EINVAL);
}

/* a cell the core refuses is left out; only -ENOMEM stops the layout */
static void sl28_kunit_cell_refused(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	lk->refuse = "serial-number";
	lk->refuse_err = -EINVAL;
	KUNIT_EXPECT_EQ(test, sl28_kunit_parse(test, sl28_good, sizeof(sl28_good),
					       256, 0xff), 0);
	KUNIT_ASSERT_EQ(test, lk->ncells, 1);
	KUNIT_EXPECT_STREQ(test, lk->cells[0].name, "base-mac-address");

	lk->ncells = 0;
	lk->refuse_err = -ENOMEM;
	KUNIT_EXPECT_EQ(test, sl28_kunit_parse(test, sl28_good, sizeof(sl28_good),
					       256, 0xff), -ENOMEM);
}

/*
 * The real path on a good record: the layout is found through the
 * compatible of the device's nvmem-layout node, its add_cells() creates
 * the two cells with their nodes, and a consumer reads them, the base
 * MAC address with its index added.
 */
static void sl28_kunit_of_cells(struct kunit *test)
{
	static const u8 serial[15] = "SL28-0000042";
	static const u8 mac[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x80 };
	static const u8 mac3[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x83 };
	static const struct layout_kunit_cell cells[] = {
		{ "serial-number", 2, 15, serial },
		{ "base-mac-address", 17, ETH_ALEN, mac },
		{ "base-mac-address-3", 17, ETH_ALEN, mac3 },
	};
	struct layout_kunit *lk = test->priv;
	struct device_node *consumer;
	int i;

	layout_kunit_of_device(test, sl28_good, sizeof(sl28_good), 256,
			       "/sl28vpd-kunit/eeprom");
	KUNIT_EXPECT_EQ(test, lk->cell_adds, 2);

	consumer = layout_kunit_consumer(test, "/sl28vpd-kunit/consumer");
	for (i = 0; i < ARRAY_SIZE(cells); i++)
		layout_kunit_check_cell(test, consumer, &cells[i]);
}

/*
 * A record with a right CRC but a multicast base address gives its
 * cells, and the consumer's read of the address is refused by the hook.
 */
static void sl28_kunit_of_bad_mac(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;
	struct device_node *consumer;
	struct nvmem_cell *cell;
	u8 image[sizeof(sl28_good)];
	u8 *buf;

	memcpy(image, sl28_good, sizeof(image));
	image[17] = 0x03;
	image[23] = SL28_KUNIT_MULTICAST_CRC;
	layout_kunit_of_device(test, image, sizeof(image), 256,
			       "/sl28vpd-kunit/eeprom");
	KUNIT_EXPECT_EQ(test, lk->cell_adds, 2);

	consumer = layout_kunit_consumer(test, "/sl28vpd-kunit/consumer");
	cell = of_nvmem_cell_get(consumer, "base-mac-address");
	KUNIT_ASSERT_FALSE(test, IS_ERR(cell));
	buf = nvmem_cell_read(cell, NULL);
	nvmem_cell_put(cell);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(buf), -EINVAL);
	if (!IS_ERR(buf))
		kfree(buf);
}

/* the real add_cells path: a bad record leaves a registered, readable device */
static void sl28_kunit_bad_keeps_device(struct kunit *test)
{
	u8 image[sizeof(sl28_good)], back[sizeof(sl28_good)];
	struct layout_kunit *lk = test->priv;
	struct nvmem_device *nvmem;

	memcpy(image, sl28_good, sizeof(image));
	image[5] ^= 0x20;
	nvmem = layout_kunit_device(test, image, sizeof(image), 256, 0xff,
				    &sl28vpd_layout);
	KUNIT_EXPECT_EQ(test, lk->cell_adds, 0);
	KUNIT_ASSERT_EQ(test, nvmem_device_read(nvmem, 0, sizeof(back), back),
			(int)sizeof(back));
	KUNIT_EXPECT_EQ(test, memcmp(back, image, sizeof(back)), 0);
}

/*
 * A device that cannot be read (an EEPROM that does not answer) gives no
 * cells and stays registered; once it answers, its content is all there.
 */
static void sl28_kunit_read_error(struct kunit *test)
{
	layout_kunit_expect_read_error(test, sl28_good, sizeof(sl28_good),
				       &sl28vpd_layout);
}

/* the device serves the whole record whatever size it declares */
static const struct layout_kunit_bad sl28_bad_cases[] = {
	{ "device of 1 byte", 1, 0xff, LAYOUT_KUNIT_UNCHANGED, 0, -EINVAL },
	{ "device a byte short", sizeof(sl28_good) - 1, 0xff, LAYOUT_KUNIT_UNCHANGED, 0, -EINVAL },
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

/* refused, no cells, and never a read beyond the device */
static void sl28_kunit_malformed(struct kunit *test)
{
	const struct layout_kunit_bad *c = test->param_value;
	struct layout_kunit *lk = test->priv;
	u8 image[sizeof(sl28_good)];
	size_t len = layout_kunit_bad_image(c, sl28_good, sizeof(image), image);

	KUNIT_EXPECT_EQ(test, sl28_kunit_parse(test, image, len, c->size,
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
static void sl28_kunit_of_refs(struct kunit *test)
{
	int n = ARRAY_SIZE(sl28_bad_cases);
	struct layout_kunit_img *imgs;

	imgs = layout_kunit_bad_imgs(test, sl28_good, sizeof(sl28_good), 256,
				     sl28_bad_cases, n);
	layout_kunit_of_refs(test, "/sl28vpd-kunit/eeprom", imgs, n + 1, 10);
}

static struct kunit_case sl28vpd_kunit_cases[] = {
	KUNIT_CASE(sl28_kunit_good),
	KUNIT_CASE(sl28_kunit_fills_device),
	KUNIT_CASE(sl28_kunit_mac_index),
	KUNIT_CASE(sl28_kunit_cell_refused),
	KUNIT_CASE(sl28_kunit_of_cells),
	KUNIT_CASE(sl28_kunit_of_bad_mac),
	KUNIT_CASE(sl28_kunit_bad_keeps_device),
	KUNIT_CASE(sl28_kunit_read_error),
	KUNIT_CASE_PARAM(sl28_kunit_malformed, sl28_kunit_bad_gen_params),
	KUNIT_CASE(sl28_kunit_of_refs),
	{}
};

static struct kunit_suite sl28vpd_kunit_suite = {
	.name = "nvmem_layout_sl28vpd",
	.init = sl28_kunit_init,
	.exit = layout_kunit_exit,
	.test_cases = sl28vpd_kunit_cases,
};

kunit_test_suite(sl28vpd_kunit_suite);
