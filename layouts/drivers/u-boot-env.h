/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The U-Boot environment parser, shared by the layout and the MTD driver
 * (drivers/nvmem/u-boot-env.c).
 */
#ifndef _NVMEM_LAYOUTS_U_BOOT_ENV_H
#define _NVMEM_LAYOUTS_U_BOOT_ENV_H

struct device;
struct nvmem_device;

/* how each copy of the environment starts */
enum u_boot_env_format {
	U_BOOT_FORMAT_SINGLE,		/* CRC-32 */
	U_BOOT_FORMAT_REDUNDANT,	/* CRC-32, flag byte */
};

int u_boot_env_parse(struct device *dev, struct nvmem_device *nvmem,
		     enum u_boot_env_format format);

#endif /* _NVMEM_LAYOUTS_U_BOOT_ENV_H */
