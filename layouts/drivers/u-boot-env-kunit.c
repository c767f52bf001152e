// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the U-Boot environment layout. Included by u-boot-env.c.
 *
 * The parser gets an image made by mkenvimage (its CRC computed outside
 * the kernel), environments built here, malformed ones of every kind, and
 * the redundant-copy vectors: both copies intact each way round, one
 * damaged each way round, both damaged, equal flags, a counter wrapping
 * from 255 to 0 and erased (0xff) flags. Devices from the suite's overlay
 * run the real add_cells() with env-size and env-redundant-offset, and a
 * consumer reads ethaddr with an index.
 */

#include <kunit/test.h>
#include <linux/of.h>

#include "layout-kunit.h"

/* mkenvimage -s 0x40 -p 0 of "bootdelay=2" and "ethaddr=02:11:22:33:44:55" */
static const u8 uenv_mkenvimage[64] = {
	0x08, 0x52, 0x33, 0x50, 'b', 'o', 'o', 't', 'd', 'e', 'l', 'a',
	'y', '=', '2', 0, 'e', 't', 'h', 'a', 'd', 'd', 'r', '=',
	'0', '2', ':', '1', '1', ':', '2', '2', ':', '3', '3', ':',
	'4', '4', ':', '5', '5', 0,
};

#define UENV_KUNIT_SIZE		0x100
#define UENV_KUNIT_VARS		"bootcmd=run x\0ethaddr=02:11:22:33:44:ff\0serial=42\0"

/*
 * An environment of @size bytes in @buf: header for @format (flag @flag),
 * the @len bytes of @vars, an empty string, then @pad; the CRC covers all
 * after the header.
 */
static void uenv_kunit_build(u8 *buf, size_t size,
			     enum u_boot_env_format format, u8 flag,
			     const char *vars, size_t len, u8 pad)
{
	size_t hdr = u_boot_env_header_len(format);

	memset(buf, pad, size);
	memcpy(buf + hdr, vars, len);
	buf[hdr + len] = 0;
	if (format == U_BOOT_FORMAT_REDUNDANT)
		buf[4] = flag;
	put_unaligned_le32(~crc32_le(~0, buf + hdr, size - hdr), buf);
}

static int uenv_kunit_init(struct kunit *test)
{
	return layout_kunit_setup(test, NULL);
}

/* parse @image as a device of @size bytes, cells to the sink */
static int uenv_kunit_parse(struct kunit *test, const u8 *image, size_t len,
			    size_t size, enum u_boot_env_format format)
{
	struct layout_kunit *lk = test->priv;
	struct nvmem_device *nvmem;

	nvmem = layout_kunit_device(test, image, len, size, 0xff, NULL);

	return __u_boot_env_parse(lk->parent, nvmem, format, layout_kunit_add,
				  lk);
}

static void uenv_kunit_mkenvimage(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	KUNIT_ASSERT_EQ(test, uenv_kunit_parse(test, uenv_mkenvimage,
					       sizeof(uenv_mkenvimage),
					       sizeof(uenv_mkenvimage),
					       U_BOOT_FORMAT_SINGLE), 0);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
	KUNIT_ASSERT_EQ(test, lk->ncells, 2);
	KUNIT_EXPECT_STREQ(test, lk->cells[0].name, "bootdelay");
	KUNIT_EXPECT_EQ(test, lk->cells[0].offset, 14);
	KUNIT_EXPECT_EQ(test, lk->cells[0].bytes, 1);
	KUNIT_EXPECT_EQ(test, lk->cells[0].raw_len, 0);
	KUNIT_EXPECT_STREQ(test, lk->cells[1].name, "ethaddr");
	KUNIT_EXPECT_EQ(test, lk->cells[1].offset, 24);
	KUNIT_EXPECT_EQ(test, lk->cells[1].bytes, ETH_ALEN);
	KUNIT_EXPECT_EQ(test, lk->cells[1].raw_len, 17);
	KUNIT_EXPECT_PTR_EQ(test, lk->cells[1].read_post_process,
			    (nvmem_cell_post_process_t)u_boot_env_ethaddr_read);
}

/* an environment built here gives the same cells at the same places */
static void uenv_kunit_built(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;
	u8 *img = kunit_kmalloc(test, UENV_KUNIT_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, img);
	uenv_kunit_build(img, UENV_KUNIT_SIZE, U_BOOT_FORMAT_SINGLE, 0,
			 UENV_KUNIT_VARS, sizeof(UENV_KUNIT_VARS) - 1, 0xff);
	KUNIT_ASSERT_EQ(test, uenv_kunit_parse(test, img, UENV_KUNIT_SIZE,
					       UENV_KUNIT_SIZE,
					       U_BOOT_FORMAT_SINGLE), 0);
	KUNIT_ASSERT_EQ(test, lk->ncells, 3);
	KUNIT_EXPECT_STREQ(test, lk->cells[0].name, "bootcmd");
	KUNIT_EXPECT_EQ(test, lk->cells[0].offset, 4 + 8);
	KUNIT_EXPECT_EQ(test, lk->cells[0].bytes, 5);
	KUNIT_EXPECT_STREQ(test, lk->cells[2].name, "serial");
	KUNIT_EXPECT_EQ(test, lk->cells[2].offset, 4 + 14 + 26 + 7);
	KUNIT_EXPECT_EQ(test, lk->cells[2].bytes, 2);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
}

static void uenv_kunit_ethaddr(struct kunit *test)
{
	static const u8 plus1[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x45, 0x00 };
	static const u8 minus1[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0xfe };
	u8 buf[U_BOOT_ENV_MAC_LEN];

	memcpy(buf, "02:11:22:33:44:ff", U_BOOT_ENV_MAC_LEN);
	KUNIT_ASSERT_EQ(test, u_boot_env_ethaddr_read(NULL, NULL, 1, 0, buf,
						      sizeof(buf)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf, plus1, ETH_ALEN), 0);

	memcpy(buf, "02:11:22:33:44:ff", U_BOOT_ENV_MAC_LEN);
	KUNIT_ASSERT_EQ(test, u_boot_env_ethaddr_read(NULL, NULL, -1, 0, buf,
						      sizeof(buf)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf, minus1, ETH_ALEN), 0);

	memcpy(buf, "02:11:22:33:44:fg", U_BOOT_ENV_MAC_LEN);
	KUNIT_EXPECT_EQ(test, u_boot_env_ethaddr_read(NULL, NULL, 0, 0, buf,
						      sizeof(buf)), -EINVAL);
	KUNIT_EXPECT_EQ(test, u_boot_env_ethaddr_read(NULL, NULL, 0, 0, buf,
						      ETH_ALEN), -EINVAL);
}

/*
 * A device that cannot be read fails the parse with -EIO whatever its
 * driver said (the MTD driver's probe fails, as it did before the
 * layout), and adds no cell.
 */
static void uenv_kunit_read_error(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;

	lk->read_err = -ETIMEDOUT;
	KUNIT_EXPECT_EQ(test, uenv_kunit_parse(test, uenv_mkenvimage,
					       sizeof(uenv_mkenvimage),
					       sizeof(uenv_mkenvimage),
					       U_BOOT_FORMAT_SINGLE), -EIO);
	KUNIT_EXPECT_EQ(test, lk->ncells, 0);
}

/* a malformed environment: its variables, size and what is done to it */
struct uenv_kunit_bad {
	const char *what;
	const char *vars;	/* NULL: UENV_KUNIT_VARS */
	size_t len;
	size_t size;		/* of the device */
	int crc_delta;		/* added to the stored CRC */
	bool no_end;		/* no empty string: non-zero up to the end */
	int ncells;		/* cells that remain */
};

static const struct uenv_kunit_bad uenv_kunit_bad_cases[] = {
	{ "header only", NULL, 0, 4, 0, false, 0 },
	{ "shorter than the header", NULL, 0, 3, 0, false, 0 },
	{ "bad CRC", NULL, 0, UENV_KUNIT_SIZE, 1, false, 0 },
	{ "no terminating NUL", NULL, 0, UENV_KUNIT_SIZE, 0, true, 0 },
	{ "variable without '='", "bootcmd=x\0junk\0serial=1\0", 24,
	  UENV_KUNIT_SIZE, 0, false, 0 },
	{ "empty variable name", "=x\0serial=1\0", 12, UENV_KUNIT_SIZE, 0,
	  false, 0 },
	{ "ethaddr quoted", "ethaddr=\"02:11:22:33:44:55\"\0serial=1\0", 37,
	  UENV_KUNIT_SIZE, 0, false, 1 },
	{ "ethaddr too short", "ethaddr=02:11:22:33:44:5\0serial=1\0", 34,
	  UENV_KUNIT_SIZE, 0, false, 1 },
	{ "ethaddr not hex", "ethaddr=02:11:22:33:44:5z\0serial=1\0", 35,
	  UENV_KUNIT_SIZE, 0, false, 1 },
	{ "name with '/'", "a/b=1\0serial=1\0", 15, UENV_KUNIT_SIZE, 0,
	  false, 1 },
	{ "all 0xff", "", 0, UENV_KUNIT_SIZE, 0, false, 0 },
};

static void uenv_kunit_bad_desc(const struct uenv_kunit_bad *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(uenv_kunit_bad, uenv_kunit_bad_cases, uenv_kunit_bad_desc);

/* each is reported, gives the cells it should (mostly none), reads nothing past the device */
static void uenv_kunit_malformed(struct kunit *test)
{
	const struct uenv_kunit_bad *c = test->param_value;
	struct layout_kunit *lk = test->priv;
	u8 *img = kunit_kmalloc(test, UENV_KUNIT_SIZE, GFP_KERNEL);
	const char *vars = c->vars ?: UENV_KUNIT_VARS;
	size_t len = c->vars ? c->len : sizeof(UENV_KUNIT_VARS) - 1;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, img);
	uenv_kunit_build(img, UENV_KUNIT_SIZE, U_BOOT_FORMAT_SINGLE, 0, vars,
			 len, 0xff);
	if (!strcmp(c->what, "all 0xff"))
		memset(img, 0xff, UENV_KUNIT_SIZE);
	if (c->no_end) {
		memset(img + 4 + len, 'x', UENV_KUNIT_SIZE - 4 - len);
		put_unaligned_le32(~crc32_le(~0, img + 4, UENV_KUNIT_SIZE - 4),
				   img);
	}
	put_unaligned_le32(get_unaligned_le32(img) + c->crc_delta, img);

	ret = uenv_kunit_parse(test, img, c->size, c->size,
			       U_BOOT_FORMAT_SINGLE);
	if (c->ncells)
		KUNIT_EXPECT_EQ(test, ret, 0);
	else
		KUNIT_EXPECT_LT(test, ret, 0);
	KUNIT_EXPECT_EQ(test, lk->ncells, c->ncells);
	if (c->ncells)
		KUNIT_EXPECT_STREQ(test, lk->cells[0].name, "serial");
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
}

/* a copy with @flag, intact or not */
static struct u_boot_env_copy uenv_kunit_copy(u8 flag, bool intact)
{
	return (struct u_boot_env_copy){ .crc_ok = intact, .flag = flag };
}

struct uenv_kunit_choice {
	const char *what;
	u8 flag_a, flag_b;
	bool ok_a, ok_b;
	int bool_pick, counter_pick;	/* 0: a, 1: b, -1: none */
};

static const struct uenv_kunit_choice uenv_kunit_choices[] = {
	{ "both intact, a newer", 1, 0, true, true, 0, 0 },
	{ "both intact, b newer", 0, 1, true, true, 1, 1 },
	{ "a damaged", 1, 0, false, true, 1, 1 },
	{ "b damaged", 0, 1, true, false, 0, 0 },
	{ "both damaged", 1, 0, false, false, -1, -1 },
	{ "equal flags", 1, 1, true, true, 0, 0 },
	{ "counter 255 then 0", 255, 0, true, true, 0, 1 },
	{ "counter 0 after 255", 0, 255, true, true, 1, 0 },
	{ "counter 7 then 8", 7, 8, true, true, 0, 1 },
	{ "both erased", 0xff, 0xff, true, true, 0, 0 },
	{ "b erased, a active", 1, 0xff, true, true, 1, 1 },
	{ "a erased, b active", 0xff, 1, true, true, 0, 0 },
};

static void uenv_kunit_choice_desc(const struct uenv_kunit_choice *c,
				   char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(uenv_kunit_choice, uenv_kunit_choices,
		  uenv_kunit_choice_desc);

static void uenv_kunit_choose(struct kunit *test)
{
	const struct uenv_kunit_choice *c = test->param_value;
	struct u_boot_env_copy a = uenv_kunit_copy(c->flag_a, c->ok_a);
	struct u_boot_env_copy b = uenv_kunit_copy(c->flag_b, c->ok_b);

	KUNIT_EXPECT_EQ_MSG(test, u_boot_env_choose(&a, &b, false), c->bool_pick,
			    "boolean flags");
	KUNIT_EXPECT_EQ_MSG(test, u_boot_env_choose(&a, &b, true),
			    c->counter_pick, "counters");
}

/*
 * Two copies in one device: the cells come from the chosen one, at its
 * offsets; both damaged gives no cells.
 */
static void uenv_kunit_pick(struct kunit *test)
{
	struct u_boot_env_geometry geo = { .env_size = UENV_KUNIT_SIZE,
					   .second = UENV_KUNIT_SIZE };
	struct layout_kunit *lk = test->priv;
	u8 *img = kunit_kmalloc(test, 2 * UENV_KUNIT_SIZE, GFP_KERNEL);
	const char *two = "serial=2\0";

	KUNIT_ASSERT_NOT_NULL(test, img);
	uenv_kunit_build(img, UENV_KUNIT_SIZE, U_BOOT_FORMAT_REDUNDANT, 5,
			 UENV_KUNIT_VARS, sizeof(UENV_KUNIT_VARS) - 1, 0);
	uenv_kunit_build(img + UENV_KUNIT_SIZE, UENV_KUNIT_SIZE,
			 U_BOOT_FORMAT_REDUNDANT, 6, two, 9, 0);
	KUNIT_EXPECT_EQ(test, u_boot_env_pick(lk->parent, img, &geo,
					      U_BOOT_FORMAT_REDUNDANT, true),
			UENV_KUNIT_SIZE);
	/* with boolean flags neither 5 nor 6 means anything: the first */
	KUNIT_EXPECT_EQ(test, u_boot_env_pick(lk->parent, img, &geo,
					      U_BOOT_FORMAT_REDUNDANT, false),
			0);

	/* the second damaged: the first, whatever its flag */
	img[UENV_KUNIT_SIZE + 10] ^= 1;
	KUNIT_EXPECT_EQ(test, u_boot_env_pick(lk->parent, img, &geo,
					      U_BOOT_FORMAT_REDUNDANT, true),
			0);
	img[0] ^= 1;
	KUNIT_EXPECT_EQ(test, u_boot_env_pick(lk->parent, img, &geo,
					      U_BOOT_FORMAT_REDUNDANT, true),
			-EBADMSG);
}

/* geometry: env-size and the second copy against the device */
static void uenv_kunit_geometry(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;
	struct u_boot_env_geometry geo;
	struct device_node *np;

	np = of_find_node_by_path("/uenv-kunit/count/nvmem-layout");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, np);
	KUNIT_EXPECT_EQ(test, u_boot_env_geometry(lk->parent, np, 0x200,
						  U_BOOT_FORMAT_REDUNDANT,
						  &geo), 0);
	KUNIT_EXPECT_EQ(test, geo.env_size, 0x100);
	KUNIT_EXPECT_EQ(test, geo.second, 0x100);
	/* two copies of 0x100 bytes need 0x200 */
	KUNIT_EXPECT_EQ(test, u_boot_env_geometry(lk->parent, np, 0x1ff,
						  U_BOOT_FORMAT_REDUNDANT,
						  &geo), -EINVAL);
	KUNIT_EXPECT_EQ(test, u_boot_env_geometry(lk->parent, np, 0x200,
						  U_BOOT_FORMAT_SINGLE, &geo),
			-EINVAL);
	of_node_put(np);

	np = of_find_node_by_path("/uenv-kunit/sized/nvmem-layout");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, np);
	KUNIT_EXPECT_EQ(test, u_boot_env_geometry(lk->parent, np, 0x400,
						  U_BOOT_FORMAT_SINGLE, &geo),
			0);
	KUNIT_EXPECT_EQ(test, geo.env_size, 0x100);
	KUNIT_EXPECT_EQ(test, geo.second, 0);
	/* a device smaller than env-size */
	KUNIT_EXPECT_EQ(test, u_boot_env_geometry(lk->parent, np, 0xff,
						  U_BOOT_FORMAT_SINGLE, &geo),
			-EINVAL);
	of_node_put(np);
}

static struct layout_kunit_overlay uenv_kunit_overlay;
LAYOUT_KUNIT_DTB(u_boot_env_kunit_overlay);

static int __init uenv_kunit_keep_overlay(void)
{
	return layout_kunit_keep_overlay(&uenv_kunit_overlay,
					 __dtb_u_boot_env_kunit_overlay_begin,
					 __dtb_u_boot_env_kunit_overlay_end);
}
late_initcall(uenv_kunit_keep_overlay);

static int uenv_kunit_of_init(struct kunit *test)
{
	return layout_kunit_setup(test, &uenv_kunit_overlay);
}

/*
 * The real path: a device with env-size smaller than itself, found
 * through its nvmem-layout node; a consumer reads ethaddr with index 2
 * and serial as stored.
 */
static void uenv_kunit_of_single(struct kunit *test)
{
	static const u8 mac[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x45, 0x01 };
	static const struct layout_kunit_cell cells[] = {
		{ "mac", 4 + 14 + 8, ETH_ALEN, mac, 17 },
		{ "serial", 4 + 14 + 26 + 7, 2, (const u8 *)"42" },
	};
	struct layout_kunit *lk = test->priv;
	struct device_node *consumer;
	u8 *img = kunit_kmalloc(test, 0x100, GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, img);
	/* env-size is 0x100: the CRC does not cover the rest of the device */
	uenv_kunit_build(img, 0x100, U_BOOT_FORMAT_SINGLE, 0, UENV_KUNIT_VARS,
			 sizeof(UENV_KUNIT_VARS) - 1, 0);
	layout_kunit_of_device(test, img, 0x100, 0x400, "/uenv-kunit/sized");
	KUNIT_EXPECT_EQ(test, lk->cell_adds, 3);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);

	consumer = layout_kunit_consumer(test, "/uenv-kunit/consumer");
	for (i = 0; i < ARRAY_SIZE(cells); i++)
		layout_kunit_check_cell(test, consumer, &cells[i]);
}

/* two copies through the device tree: the newer counter's cells */
static void uenv_kunit_of_redundant(struct kunit *test)
{
	struct layout_kunit *lk = test->priv;
	u8 *img = kunit_kmalloc(test, 0x200, GFP_KERNEL);
	const char *two = "serial=2\0";

	KUNIT_ASSERT_NOT_NULL(test, img);
	uenv_kunit_build(img, 0x100, U_BOOT_FORMAT_REDUNDANT, 255,
			 UENV_KUNIT_VARS, sizeof(UENV_KUNIT_VARS) - 1, 0);
	uenv_kunit_build(img + 0x100, 0x100, U_BOOT_FORMAT_REDUNDANT, 0, two,
			 9, 0);
	layout_kunit_of_device(test, img, 0x200, 0x200, "/uenv-kunit/count");
	KUNIT_EXPECT_EQ(test, lk->cell_adds, 1);
	KUNIT_EXPECT_FALSE(test, lk->read_past_end);
}

/*
 * ten rounds of devices with the node and intact, damaged, erased and cut
 * pairs of copies: the nodes' reference counts end where they started
 */
static void uenv_kunit_of_refs(struct kunit *test)
{
	u8 *good = kunit_kmalloc(test, 0x200, GFP_KERNEL);
	u8 *bad = kunit_kmalloc(test, 0x200, GFP_KERNEL);
	u8 *erased = kunit_kmalloc(test, 0x200, GFP_KERNEL);
	struct layout_kunit_img imgs[4];

	KUNIT_ASSERT_NOT_NULL(test, good);
	KUNIT_ASSERT_NOT_NULL(test, bad);
	KUNIT_ASSERT_NOT_NULL(test, erased);
	uenv_kunit_build(good, 0x100, U_BOOT_FORMAT_REDUNDANT, 1,
			 UENV_KUNIT_VARS, sizeof(UENV_KUNIT_VARS) - 1, 0);
	uenv_kunit_build(good + 0x100, 0x100, U_BOOT_FORMAT_REDUNDANT, 0,
			 UENV_KUNIT_VARS, sizeof(UENV_KUNIT_VARS) - 1, 0);
	memcpy(bad, good, 0x200);
	bad[0] ^= 0x01;
	bad[0x100] ^= 0x01;
	memset(erased, 0xff, 0x200);
	imgs[0] = (struct layout_kunit_img){ good, 0x200, 0x200, 0xff };
	imgs[1] = (struct layout_kunit_img){ bad, 0x200, 0x200, 0xff };
	imgs[2] = (struct layout_kunit_img){ erased, 0x200, 0x200, 0xff };
	imgs[3] = (struct layout_kunit_img){ good, 3, 3, 0xff };
	layout_kunit_of_refs(test, "/uenv-kunit/count", imgs,
			     ARRAY_SIZE(imgs), 10);
}

static struct kunit_case uenv_kunit_cases[] = {
	KUNIT_CASE(uenv_kunit_mkenvimage),
	KUNIT_CASE(uenv_kunit_built),
	KUNIT_CASE(uenv_kunit_ethaddr),
	KUNIT_CASE(uenv_kunit_read_error),
	KUNIT_CASE_PARAM(uenv_kunit_malformed, uenv_kunit_bad_gen_params),
	KUNIT_CASE_PARAM(uenv_kunit_choose, uenv_kunit_choice_gen_params),
	KUNIT_CASE(uenv_kunit_pick),
	{}
};

static struct kunit_suite uenv_kunit_suite = {
	.name = "nvmem_layout_u_boot_env",
	.init = uenv_kunit_init,
	.exit = layout_kunit_exit,
	.test_cases = uenv_kunit_cases,
};

static struct kunit_case uenv_kunit_of_cases[] = {
	KUNIT_CASE(uenv_kunit_geometry),
	KUNIT_CASE(uenv_kunit_of_single),
	KUNIT_CASE(uenv_kunit_of_redundant),
	KUNIT_CASE(uenv_kunit_of_refs),
	{}
};

static struct kunit_suite uenv_kunit_of_suite = {
	.name = "nvmem_layout_u_boot_env_of",
	.init = uenv_kunit_of_init,
	.exit = layout_kunit_exit,
	.test_cases = uenv_kunit_of_cases,
};

kunit_test_suites(&uenv_kunit_suite, &uenv_kunit_of_suite);
