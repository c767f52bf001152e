// SPDX-License-Identifier: GPL-2.0
/*
 * The U-Boot environment layout, as the series has it. The input starts
 * with 9 bytes of device tree: a flag byte (bits 0-1: compatible
 * u-boot,env / -redundant-bool / -redundant-count / u-boot,env; bit 2:
 * env-size; bit 3: env-redundant-offset; bit 4: no nvmem-layout node, the
 * properties are the device's own, as for 6.1's MTD u-boot,env driver),
 * then env-size and env-redundant-offset, little endian. The rest is the
 * device.
 */
#include "u-boot-env.c"
#include "kshim-harness.h"

#define UBOOT_PREFIX 9

size_t kshim_config(const u8 *data, size_t size, struct kshim_config *cfg)
{
	static const char *const compatibles[] = {
		"u-boot,env", "u-boot,env-redundant-bool",
		"u-boot,env-redundant-count", "u-boot,env",
	};

	if (size < UBOOT_PREFIX)
		return size + 1;
	cfg->compatible = compatibles[data[0] & 3];
	cfg->has_env_size = data[0] & 4;
	cfg->has_redundant_offset = data[0] & 8;
	cfg->container = !(data[0] & 16);
	cfg->env_size = get_unaligned_le32(data + 1);
	cfg->redundant_offset = get_unaligned_le32(data + 5);
	return UBOOT_PREFIX;
}

static void put_le32(u8 *p, u32 v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* the CRC-32 of each copy, where the geometry puts them on the device */
bool kshim_fixup(u8 *dev, size_t size, const struct kshim_config *cfg)
{
	size_t hdr = strcmp(cfg->compatible, "u-boot,env") ? 5 : 4;
	size_t env = size, second = 0;

	if (cfg->has_redundant_offset)
		env = second = cfg->redundant_offset;
	if (cfg->has_env_size)
		env = cfg->env_size;
	if (env <= hdr || env > size)
		return false;
	put_le32(dev, ~crc32_le(~0, dev + hdr, env - hdr));
	if (second && second <= size - env)
		put_le32(dev + second, ~crc32_le(~0, dev + second + hdr, env - hdr));
	return true;
}
