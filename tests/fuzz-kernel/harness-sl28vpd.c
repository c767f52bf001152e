// SPDX-License-Identifier: GPL-2.0
/* The Kontron sl28 VPD layout, as the series has it; the input is the device. */
#include "sl28vpd.c"
#include "kshim-harness.h"

size_t kshim_config(const u8 *data, size_t size, struct kshim_config *cfg)
{
	cfg->compatible = "kontron,sl28-vpd";
	cfg->container = true;
	return 0;
}

/* the CRC-8 after the first 23 bytes */
bool kshim_fixup(u8 *dev, size_t size, const struct kshim_config *cfg)
{
	size_t at = offsetof(struct sl28vpd_v1, crc8);

	if (size <= at)
		return false;
	dev[at] = crc8(sl28vpd_crc8_table, dev, at, 0);
	return true;
}
