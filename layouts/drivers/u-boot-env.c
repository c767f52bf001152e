// SPDX-License-Identifier: GPL-2.0
/*
 * NVMEM layout for U-Boot environments.
 *
 * An environment is a CRC-32 (little-endian, over everything after the
 * header up to the end of the environment), in the redundant formats a
 * flag byte, then "name=value" strings, each ending with a NUL, and an
 * empty string after the last. Every variable becomes a cell covering its
 * value, named after it; ethaddr is read as the 6 bytes of the address it
 * spells, plus the consumer's index.
 *
 * With the redundant formats, the device may hold both copies (the
 * env-redundant-offset property says where the second starts). The cells
 * then come from the copy U-Boot itself would load: the one with a good
 * CRC, or of two good ones the newer by their flags.
 *
 * The content is untrusted: sizes are checked against the device, the
 * CRC and the strings are checked in full before any cell exists, and a
 * bad environment is reported and gives no cells.
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

#include "u-boot-env.h"

#define U_BOOT_ENV_MAC_LEN	(3 * ETH_ALEN - 1)	/* "xx:xx:xx:xx:xx:xx" */

/* what one copy of the environment holds, once checked */
struct u_boot_env_copy {
	unsigned int offset;	/* in the device */
	bool crc_ok;
	u32 crc_stored;
	u32 crc_computed;
	u8 flag;
	const char *problem;	/* in the strings, or NULL */
	unsigned int problem_at;
};

typedef int (*u_boot_env_add_t)(void *ctx, const struct nvmem_cell_info *info);

static size_t u_boot_env_header_len(enum u_boot_env_format format)
{
	return format == U_BOOT_FORMAT_SINGLE ? 4 : 5;
}

/*
 * ethaddr: 17 characters stored, the 6 bytes they spell read, plus index.
 * The stored bytes have no NUL after them, which mac_pton() needs.
 */
static int u_boot_env_ethaddr_read(void *priv, const char *id, int index,
				   unsigned int offset, void *buf, size_t bytes)
{
	char text[U_BOOT_ENV_MAC_LEN + 1];
	u8 mac[ETH_ALEN];

	if (bytes != U_BOOT_ENV_MAC_LEN)
		return -EINVAL;
	memcpy(text, buf, U_BOOT_ENV_MAC_LEN);
	text[U_BOOT_ENV_MAC_LEN] = '\0';
	if (!mac_pton(text, mac))
		return -EINVAL;

	if (index)
		eth_addr_add(mac, index);
	memcpy(buf, mac, ETH_ALEN);

	return 0;
}

/*
 * Check the strings of an environment, @len bytes at @data: each must hold
 * a '=' after a non-empty name and end with a NUL, and an empty string
 * must end the list before @len. Return NULL or what is wrong, with its
 * position relative to @data in @at.
 */
static const char *u_boot_env_check_strings(const u8 *data, size_t len,
					    unsigned int *at)
{
	size_t pos = 0;

	while (pos < len) {
		const u8 *end, *eq;

		if (!data[pos])
			return NULL;
		*at = pos;
		end = memchr(data + pos, 0, len - pos);
		if (!end)
			return "a variable runs to the end without a NUL";
		eq = memchr(data + pos, '=', end - (data + pos));
		if (!eq)
			return "a variable has no '='";
		if (eq == data + pos)
			return "a variable has an empty name";
		pos = end - data + 1;
	}
	*at = len;

	return "no empty string ends the variables";
}

/* check the copy of @size bytes at @buf, found at @offset in the device */
static void u_boot_env_check_copy(const u8 *buf, size_t size,
				  unsigned int offset,
				  enum u_boot_env_format format,
				  struct u_boot_env_copy *copy)
{
	size_t hdr = u_boot_env_header_len(format);

	copy->offset = offset;
	copy->crc_stored = get_unaligned_le32(buf);
	copy->crc_computed = ~crc32_le(~0, buf + hdr, size - hdr);
	copy->crc_ok = copy->crc_stored == copy->crc_computed;
	copy->flag = format == U_BOOT_FORMAT_SINGLE ? 0 : buf[4];
	copy->problem = u_boot_env_check_strings(buf + hdr, size - hdr,
						 &copy->problem_at);
	copy->problem_at += offset + hdr;
}

static bool u_boot_env_usable(const struct u_boot_env_copy *copy)
{
	return copy->crc_ok && !copy->problem;
}

/*
 * Of two copies, the one U-Boot loads: 0 for @a, 1 for @b, -1 for none.
 * A copy must be intact. Of two intact copies:
 * - boolean flags (env/flash.c): active (1) over obsolete (0); on equal
 *   flags the first; otherwise the one whose flag is still erased (0xff),
 *   which U-Boot was writing when it stopped;
 * - counters (env_import_redund()): the higher, except that 0 follows 255;
 *   on equal counters the first.
 */
static int u_boot_env_choose(const struct u_boot_env_copy *a,
			     const struct u_boot_env_copy *b, bool counter)
{
	if (!u_boot_env_usable(a) || !u_boot_env_usable(b)) {
		if (u_boot_env_usable(a))
			return 0;
		return u_boot_env_usable(b) ? 1 : -1;
	}

	if (a->flag == b->flag)
		return 0;

	if (counter) {
		if (a->flag == 0xff && b->flag == 0)
			return 1;
		if (b->flag == 0xff && a->flag == 0)
			return 0;
		return b->flag > a->flag;
	}

	if (a->flag == 1 && b->flag == 0)
		return 0;
	if (a->flag == 0 && b->flag == 1)
		return 1;
	if (b->flag == 0xff)
		return 1;

	return 0;
}

/*
 * Add a cell for each variable of the intact copy @buf (@size bytes, at
 * @offset in the device), with its node from @np (may be NULL).
 */
static int u_boot_env_add_vars(struct device *dev, struct device_node *np,
			       const u8 *buf, size_t size, unsigned int offset,
			       enum u_boot_env_format format,
			       u_boot_env_add_t add, void *ctx)
{
	size_t pos = u_boot_env_header_len(format);

	while (pos < size && buf[pos]) {
		const char *var = (const char *)buf + pos;
		const char *eq = strchr(var, '=');
		struct nvmem_cell_info info = {};
		size_t vlen = strlen(eq + 1);
		int ret;

		pos += eq + 1 - var + vlen + 1;

		info.name = kstrndup(var, eq - var, GFP_KERNEL);
		if (!info.name)
			return -ENOMEM;

		/* the name becomes a sysfs file name */
		if (strchr(info.name, '/')) {
			dev_err(dev, "u-boot-env: variable \"%*pE\" at %#x: no cell for a name with '/'\n",
				(int)(eq - var), var,
				offset + (unsigned int)(var - (const char *)buf));
			kfree(info.name);
			continue;
		}

		info.offset = offset + (eq + 1 - (const char *)buf);
		info.bytes = vlen;

		if (!strcmp(info.name, "ethaddr")) {
			u8 mac[ETH_ALEN];

			if (vlen != U_BOOT_ENV_MAC_LEN || !mac_pton(eq + 1, mac)) {
				dev_err(dev, "u-boot-env: ethaddr at %#x is not a MAC address (xx:xx:xx:xx:xx:xx), no ethaddr cell: %*pE\n",
					info.offset, (int)vlen, eq + 1);
				kfree(info.name);
				continue;
			}
			info.raw_len = vlen;
			info.bytes = ETH_ALEN;
			info.read_post_process = u_boot_env_ethaddr_read;
		}

		if (np)
			info.np = of_get_child_by_name(np, info.name);

		ret = add(ctx, &info);
		kfree(info.name);
		if (ret) {
			/* a cell not added leaves its node to us */
			of_node_put(info.np);
			if (ret == -ENOMEM)
				return ret;
			dev_err(dev, "u-boot-env: variable at %#x not added: %d\n",
				info.offset, ret);
		}
	}

	return 0;
}

static void u_boot_env_report(struct device *dev,
			      const struct u_boot_env_copy *copy)
{
	if (!copy->crc_ok)
		dev_err(dev, "u-boot-env: copy at %#x: CRC-32 mismatch (stored %08x, computed %08x)\n",
			copy->offset, copy->crc_stored, copy->crc_computed);
	else if (copy->problem)
		dev_err(dev, "u-boot-env: copy at %#x: %s (at %#x)\n",
			copy->offset, copy->problem, copy->problem_at);
}

/* where the copies are, from the node of the layout or of the device */
struct u_boot_env_geometry {
	size_t env_size;
	unsigned int second;	/* offset of the second copy, 0: none */
};

static int u_boot_env_geometry(struct device *dev, struct device_node *np,
			       size_t dev_size, enum u_boot_env_format format,
			       struct u_boot_env_geometry *geo)
{
	size_t hdr = u_boot_env_header_len(format);
	u32 val;

	geo->env_size = dev_size;
	geo->second = 0;

	if (np && !of_property_read_u32(np, "env-redundant-offset", &val)) {
		if (format == U_BOOT_FORMAT_SINGLE || !val) {
			dev_err(dev, "u-boot-env: env-redundant-offset needs a redundant format and a non-zero offset\n");
			return -EINVAL;
		}
		geo->second = val;
		geo->env_size = val;
	}
	if (np && !of_property_read_u32(np, "env-size", &val))
		geo->env_size = val;

	if (geo->env_size <= hdr) {
		dev_err(dev, "u-boot-env: an environment of %zu bytes holds no variables\n",
			geo->env_size);
		return -EINVAL;
	}
	if (geo->second && geo->second < geo->env_size) {
		dev_err(dev, "u-boot-env: the copies overlap (second at %#x, each %#zx bytes)\n",
			geo->second, geo->env_size);
		return -EINVAL;
	}
	if (geo->env_size > dev_size ||
	    geo->second > dev_size - geo->env_size) {
		dev_err(dev, "u-boot-env: device of %#zx bytes smaller than its environment (%#zx bytes%s)\n",
			dev_size, geo->env_size, geo->second ? " twice" : "");
		return -EINVAL;
	}

	return 0;
}

/*
 * Pick the copy to use from the device's content in @buf (both copies as
 * stored) and return its offset in @buf, or a negative error.
 */
static int u_boot_env_pick(struct device *dev, const u8 *buf,
			   const struct u_boot_env_geometry *geo,
			   enum u_boot_env_format format, bool counter)
{
	struct u_boot_env_copy copy[2];
	int which;

	u_boot_env_check_copy(buf, geo->env_size, 0, format, &copy[0]);
	if (!geo->second) {
		if (!u_boot_env_usable(&copy[0])) {
			u_boot_env_report(dev, &copy[0]);
			return -EBADMSG;
		}
		return 0;
	}

	u_boot_env_check_copy(buf + geo->second, geo->env_size, geo->second,
			      format, &copy[1]);
	which = u_boot_env_choose(&copy[0], &copy[1], counter);
	if (which < 0) {
		u_boot_env_report(dev, &copy[0]);
		u_boot_env_report(dev, &copy[1]);
		dev_err(dev, "u-boot-env: no intact copy: no cells\n");
		return -EBADMSG;
	}

	if (u_boot_env_usable(&copy[!which]))
		dev_info(dev, "u-boot-env: using the copy at %#x (%s %u; the one at %#x has %u)\n",
			 copy[which].offset, counter ? "counter" : "flag",
			 copy[which].flag, copy[!which].offset,
			 copy[!which].flag);
	else
		dev_info(dev, "u-boot-env: using the copy at %#x (%s %u; the one at %#x is damaged)\n",
			 copy[which].offset, counter ? "counter" : "flag",
			 copy[which].flag, copy[!which].offset);
	u_boot_env_report(dev, &copy[!which]);

	return copy[which].offset;
}

static int u_boot_env_add_one(void *ctx, const struct nvmem_cell_info *info)
{
	return nvmem_add_one_cell(ctx, info);
}

static int __u_boot_env_parse(struct device *dev, struct nvmem_device *nvmem,
			      enum u_boot_env_format format,
			      u_boot_env_add_t add, void *ctx)
{
	struct u_boot_env_geometry geo;
	struct device_node *np;
	bool counter;
	size_t len;
	int ret, at;
	u8 *buf;

	/* the layout's node, or the provider's own for the MTD driver */
	np = of_nvmem_layout_get_container(nvmem);
	if (IS_ERR_OR_NULL(np))
		np = of_node_get(dev->of_node);
	counter = !of_device_is_compatible(np, "u-boot,env-redundant-bool");

	ret = u_boot_env_geometry(dev, np, nvmem_dev_size(nvmem), format, &geo);
	if (ret)
		goto out;

	len = geo.second + geo.env_size;
	buf = kvmalloc(len, GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	ret = nvmem_device_read(nvmem, 0, len, buf);
	if (ret >= 0 && ret != len)
		ret = -EIO;
	if (ret < 0) {
		/* a device that cannot be read is an error, not bad content */
		dev_err(dev, "u-boot-env: cannot read %zu bytes: %d\n", len, ret);
		ret = -EIO;
		goto out_free;
	}

	at = u_boot_env_pick(dev, buf, &geo, format, counter);
	if (at < 0) {
		ret = at;
		goto out_free;
	}

	ret = u_boot_env_add_vars(dev, np, buf + at, geo.env_size, at, format,
				  add, ctx);
out_free:
	kvfree(buf);
out:
	of_node_put(np);

	return ret;
}

/**
 * u_boot_env_parse() - Add a cell for each variable of a U-Boot environment
 *
 * @dev: device to report problems on.
 * @nvmem: device holding the environment.
 * @format: how each copy starts (CRC only, or CRC and flag).
 *
 * The environment fills the device, or env-size bytes of it when the
 * layout node (or, without one, the node of @dev) has that property. With
 * env-redundant-offset and a redundant format, the device holds two copies
 * and the one U-Boot would load is used; its flags count up unless @dev's
 * node is compatible with "u-boot,env-redundant-bool".
 *
 * Return: 0, also when the environment is malformed (reported, no cells);
 * a negative error when the device cannot be read or memory runs out.
 */
int u_boot_env_parse(struct device *dev, struct nvmem_device *nvmem,
		     enum u_boot_env_format format)
{
	int ret;

	ret = __u_boot_env_parse(dev, nvmem, format, u_boot_env_add_one, nvmem);

	/* bad content is reported and leaves the device as it is */
	return ret == -ENOMEM || ret == -EIO ? ret : 0;
}
EXPORT_SYMBOL_GPL(u_boot_env_parse);

static int u_boot_env_add_cells(struct device *dev, struct nvmem_device *nvmem,
				struct nvmem_layout *layout)
{
	enum u_boot_env_format format;

	format = (uintptr_t)nvmem_layout_get_match_data(nvmem, layout);

	return u_boot_env_parse(dev, nvmem, format);
}

static const struct of_device_id u_boot_env_of_match[] = {
	{ .compatible = "u-boot,env", .data = (void *)U_BOOT_FORMAT_SINGLE },
	{ .compatible = "u-boot,env-redundant-bool",
	  .data = (void *)U_BOOT_FORMAT_REDUNDANT },
	{ .compatible = "u-boot,env-redundant-count",
	  .data = (void *)U_BOOT_FORMAT_REDUNDANT },
	{ /* sentinel */ }
};
MODULE_DEVICE_TABLE(of, u_boot_env_of_match);

static struct nvmem_layout u_boot_env_layout = {
	.name = "u-boot-env",
	.of_match_table = u_boot_env_of_match,
	.add_cells = u_boot_env_add_cells,
};

/* registered before the storage drivers probe, as the other layouts */
static int __init u_boot_env_init(void)
{
	return nvmem_layout_register(&u_boot_env_layout);
}
subsys_initcall(u_boot_env_init);

static void __exit u_boot_env_exit(void)
{
	nvmem_layout_unregister(&u_boot_env_layout);
}
module_exit(u_boot_env_exit);

MODULE_DESCRIPTION("NVMEM layout for U-Boot environments");
MODULE_LICENSE("GPL");

#if IS_ENABLED(CONFIG_NVMEM_LAYOUT_U_BOOT_ENV_KUNIT_TEST)
#include "u-boot-env-kunit.c"
#endif
