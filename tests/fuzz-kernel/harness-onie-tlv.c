// SPDX-License-Identifier: GPL-2.0
/* The ONIE TlvInfo layout, as the series has it; the input is the device. */
#include "onie-tlv.c"
#include "kshim-harness.h"

size_t kshim_config(const u8 *data, size_t size, struct kshim_config *cfg)
{
	cfg->compatible = "onie,tlv-layout";
	cfg->container = true;
	return 0;
}

/* the CRC record that ends the table, if the records lead to one */
bool kshim_fixup(u8 *dev, size_t size, const struct kshim_config *cfg)
{
	unsigned int total, pos = ONIE_TLV_HDR_LEN;

	if (size < ONIE_TLV_HDR_LEN || memcmp(dev, ONIE_TLV_MAGIC, sizeof(ONIE_TLV_MAGIC)))
		return false;
	total = ONIE_TLV_HDR_LEN + get_unaligned_be16(dev + 9);
	if (total > size)
		return false;
	while (total - pos >= 2) {
		unsigned int len = dev[pos + 1];

		if (len > total - pos - 2)
			return false;
		if (dev[pos] == ONIE_TLV_TYPE_CRC32 && len == 4 && pos + 6 == total) {
			u32 crc = ~crc32_le(~0, dev, pos + 2);

			dev[pos + 2] = crc >> 24;
			dev[pos + 3] = crc >> 16;
			dev[pos + 4] = crc >> 8;
			dev[pos + 5] = crc;
			return true;
		}
		pos += 2 + len;
	}
	return false;
}
