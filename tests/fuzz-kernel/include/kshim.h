/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of the kernel API the layout drivers of layouts/drivers/ use,
 * for compiling them unmodified into a host program (libFuzzer harness,
 * tests/fuzz-kernel/). Types and names are the kernel's; behaviour is what
 * the harness needs to check the drivers: a device read outside the
 * device, a cell outside it, a node reference not given back or a
 * post-process hook writing past its buffer stops the program.
 */
#ifndef NVLAB_KSHIM_H
#define NVLAB_KSHIM_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
typedef unsigned int gfp_t;
typedef u32 __be32;

#define GFP_KERNEL 0u
#define __packed __attribute__((packed))
#define __init
#define __exit
#define IS_ENABLED(option) 0
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BITS_PER_BYTE 8
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define IS_ALIGNED(x, a) (((x) & ((typeof(x))(a) - 1)) == 0)
#define GENMASK(h, l) (((~0UL) - (1UL << (l)) + 1) & (~0UL >> (63 - (h))))
#define max_t(type, x, y) ((type)(x) > (type)(y) ? (type)(x) : (type)(y))
#define sizeof_field(type, member) sizeof(((type *)0)->member)
#define MODULE_LICENSE(x)
#define MODULE_DESCRIPTION(x)
#define MODULE_DEVICE_TABLE(bus, table)
#define EXPORT_SYMBOL_GPL(sym)

/* the layout's init and exit become the harness's entry points */
#define subsys_initcall(fn) int kshim_layout_init(void) { return fn(); }
#define module_exit(fn) void kshim_layout_exit(void) { fn(); }

/* ---- error pointers ---- */
#define MAX_ERRNO 4095
static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr)
{
	return (unsigned long)ptr >= (unsigned long)-MAX_ERRNO;
}
static inline bool IS_ERR_OR_NULL(const void *ptr) { return !ptr || IS_ERR(ptr); }

/* ---- memory: the C library's, so that ASan sees every buffer ---- */
void *kshim_alloc(size_t size);
static inline void *kmalloc(size_t size, gfp_t gfp) { return kshim_alloc(size); }
static inline void *kvmalloc(size_t size, gfp_t gfp) { return kshim_alloc(size); }
static inline void *kzalloc(size_t size, gfp_t gfp)
{
	void *p = kshim_alloc(size);

	if (p)
		memset(p, 0, size);
	return p;
}
static inline void kfree(const void *p) { free((void *)p); }
static inline void kvfree(const void *p) { free((void *)p); }
char *kstrndup(const char *s, size_t max, gfp_t gfp);
static inline const char *kstrdup_const(const char *s, gfp_t gfp)
{
	return kstrndup(s, strlen(s), gfp);
}
static inline void kfree_const(const void *p) { free((void *)p); }
/* only "%pOFn" (a node's name without unit address), as the core uses it */
char *kshim_kasprintf(const char *fmt, const void *arg);
#define kasprintf(gfp, fmt, arg) kshim_kasprintf(fmt, arg)

/* ---- unaligned access ---- */
static inline u16 get_unaligned_be16(const void *p)
{
	const u8 *b = p;

	return (u16)(b[0] << 8 | b[1]);
}
static inline u32 get_unaligned_be32(const void *p)
{
	const u8 *b = p;

	return (u32)b[0] << 24 | (u32)b[1] << 16 | (u32)b[2] << 8 | b[3];
}
static inline u32 get_unaligned_le32(const void *p)
{
	const u8 *b = p;

	return (u32)b[3] << 24 | (u32)b[2] << 16 | (u32)b[1] << 8 | b[0];
}

/* ---- checksums ---- */
u32 crc32_le(u32 crc, const unsigned char *p, size_t len);
#define CRC8_TABLE_SIZE 256
#define DECLARE_CRC8_TABLE(t) static u8 t[CRC8_TABLE_SIZE]
void crc8_populate_msb(u8 table[CRC8_TABLE_SIZE], u8 polynomial);
u8 crc8(const u8 table[CRC8_TABLE_SIZE], const u8 *pdata, size_t nbytes, u8 crc);

/* ---- Ethernet addresses ---- */
#define ETH_ALEN 6
bool is_valid_ether_addr(const u8 *addr);
void eth_addr_add(u8 *addr, long long offset);
bool mac_pton(const char *s, u8 *mac);
int hex2bin(u8 *dst, const char *src, size_t count);

/* ---- devices, nodes and messages ---- */
struct device_node;
struct list_head {
	struct list_head *next, *prev;
};

struct device {
	const char *name;
	struct device_node *of_node;
};

struct of_device_id {
	char name[32];
	char type[32];
	char compatible[128];
	const void *data;
};

struct device_node *of_node_get(struct device_node *np);
void of_node_put(struct device_node *np);
struct device_node *of_get_child_by_name(const struct device_node *np,
					 const char *name);
int of_property_read_u32(const struct device_node *np, const char *name,
			 u32 *out);
int of_device_is_compatible(const struct device_node *np, const char *compat);
const void *of_get_property(const struct device_node *np, const char *name,
			    int *lenp);
struct device_node *of_get_next_child(const struct device_node *np,
				      struct device_node *prev);
#define for_each_child_of_node(parent, child) \
	for (child = of_get_next_child(parent, NULL); child; \
	     child = of_get_next_child(parent, child))
static inline u32 be32_to_cpup(const __be32 *p)
{
	return get_unaligned_be32(p);
}

void kshim_dev_log(const struct device *dev, const char *level,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* messages: the kernel's %*pE (escaped buffer) is formatted as %.*s */
#define dev_err(dev, fmt, ...) kshim_dev_log(dev, "err", fmt, ##__VA_ARGS__)
#define dev_warn(dev, fmt, ...) kshim_dev_log(dev, "warn", fmt, ##__VA_ARGS__)
#define dev_info(dev, fmt, ...) kshim_dev_log(dev, "info", fmt, ##__VA_ARGS__)
#define dev_err_ratelimited dev_err

/* ---- nvmem ---- */
typedef int (*nvmem_cell_post_process_t)(void *context, const char *con_id,
					  int arg, unsigned int pos,
					  void *data, size_t len);

struct nvmem_cell_info {
	const char *name;
	unsigned int offset;
	unsigned int bytes;
	size_t raw_len;
	unsigned int bit_offset;
	unsigned int nbits;
	struct device_node *np;
	nvmem_cell_post_process_t read_post_process;
	void *priv;
};

struct nvmem_device;
struct module;

struct nvmem_layout {
	const char *name;
	const struct of_device_id *of_match_table;
	int (*add_cells)(struct device *dev, struct nvmem_device *nvmem,
			 struct nvmem_layout *layout);
	void (*fixup_cell_info)(struct nvmem_device *nvmem,
				struct nvmem_layout *layout,
				struct nvmem_cell_info *cell);
	struct module *owner;
};

int nvmem_layout_register(struct nvmem_layout *layout);
void nvmem_layout_unregister(struct nvmem_layout *layout);
const void *nvmem_layout_get_match_data(struct nvmem_device *nvmem,
					struct nvmem_layout *layout);
struct device_node *of_nvmem_layout_get_container(struct nvmem_device *nvmem);
size_t nvmem_dev_size(struct nvmem_device *nvmem);
int nvmem_device_read(struct nvmem_device *nvmem, unsigned int offset,
		      size_t bytes, void *buf);
int nvmem_add_one_cell(struct nvmem_device *nvmem,
		       const struct nvmem_cell_info *info);

#endif /* NVLAB_KSHIM_H */
