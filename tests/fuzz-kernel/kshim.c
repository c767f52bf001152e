// SPDX-License-Identifier: GPL-2.0
/*
 * Host implementation of kshim.h and the libFuzzer entry point shared by
 * the harnesses of tests/fuzz-kernel/: each input is the content of one
 * nvmem device (after a configuration prefix where the layout reads
 * device-tree properties), handed to the layout's add_cells() as the
 * kernel core would. Checked for every input, besides what ASan and UBSan
 * see:
 *  - add_cells() returns 0: bad content is reported, the device stays;
 *  - no read outside the device, no cell outside it, no cell without a
 *    name or with a '/' in it (sysfs); an empty cell (a U-Boot variable
 *    with an empty value) is one;
 *  - every node reference taken is given back, or handed to a cell;
 *  - each cell's read hook, run as the core runs it (a buffer of the
 *    larger of stored and read length, indexes from INT_MIN to INT_MAX),
 *    stays inside the buffer and answers 0 or -EINVAL.
 * A checksum stands between random bytes and most of a parser: after the
 * input as it is, each input runs again with the checksums the harness's
 * kshim_fixup() recomputes, where it finds their place, and a third time
 * with one allocation or device read failing.
 * With NVLAB_FUZZ_LIST set in the environment, each run also prints one
 * JSON line: the configuration, the cells, the messages and the bytes of
 * a fixed-up device (for the differential against nvmem-image,
 * scripts/fuzz-kernel.py).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "kshim-harness.h"

#define KSHIM_MAX_NODES 64
#define KSHIM_MAX_CELLS 4096
#define KSHIM_MAX_LOG 64

struct device_node {
	char name[64];
	int refs;		/* 1: the tree's own */
	const struct device_node *parent;
	const char *compatible;
	const struct kshim_config *props;
	const struct kshim_child *child;	/* a cell's node */
};

struct kshim_cell {
	char *name;
	struct nvmem_cell_info info;
};

static struct nvmem_layout *layout;
static struct device_node nodes[KSHIM_MAX_NODES];
static unsigned int n_nodes;
static struct kshim_cell cells[KSHIM_MAX_CELLS];
static unsigned int n_cells;
static char *messages[KSHIM_MAX_LOG];
static unsigned int n_messages;
static bool listing;
/*
 * fault injection: the n-th (from 0) allocation, device read or cell the
 * core would allocate fails
 */
static long fault_at = -1;
static long fault_points;

static void __attribute__((noreturn, format(printf, 1, 2)))
kshim_bug(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kshim: layout %s: ", layout ? layout->name : "?");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static bool fault(void)
{
	return fault_points++ == fault_at;
}

void *kshim_alloc(size_t size)
{
	if (fault())
		return NULL;
	/* as kmalloc: nothing above 4 MiB here (KMALLOC_MAX_SIZE-like) */
	if (size > (4u << 20))
		return NULL;
	return malloc(size ? size : 1);
}

char *kstrndup(const char *s, size_t max, gfp_t gfp)
{
	size_t len = strnlen(s, max);
	char *p = kshim_alloc(len + 1);	/* a fault point too */

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

/* CRC-32 (IEEE 802.3, reflected) without the inversions, as the kernel's */
u32 crc32_le(u32 crc, const unsigned char *p, size_t len)
{
	while (len--) {
		int bit;

		crc ^= *p++;
		for (bit = 0; bit < 8; bit++)
			crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return crc;
}

void crc8_populate_msb(u8 table[CRC8_TABLE_SIZE], u8 polynomial)
{
	int i, bit;

	for (i = 0; i < CRC8_TABLE_SIZE; i++) {
		u8 v = (u8)i;

		for (bit = 0; bit < 8; bit++)
			v = v & 0x80 ? (u8)(v << 1) ^ polynomial : (u8)(v << 1);
		table[i] = v;
	}
}

u8 crc8(const u8 table[CRC8_TABLE_SIZE], const u8 *pdata, size_t nbytes, u8 crc)
{
	while (nbytes--)
		crc = table[crc ^ *pdata++];
	return crc;
}

bool is_valid_ether_addr(const u8 *addr)
{
	static const u8 zero[ETH_ALEN];

	return !(addr[0] & 1) && memcmp(addr, zero, ETH_ALEN);
}

void eth_addr_add(u8 *addr, long long offset)
{
	u64 v = 0;
	int i;

	for (i = 0; i < ETH_ALEN; i++)
		v = v << 8 | addr[i];
	v += (u64)offset;
	for (i = ETH_ALEN - 1; i >= 0; i--, v >>= 8)
		addr[i] = (u8)v;
}

static int hexval(char c)
{
	if (!isxdigit((unsigned char)c))
		return -1;
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

int hex2bin(u8 *dst, const char *src, size_t count)
{
	while (count--) {
		int hi = hexval(src[0]), lo = hexval(src[1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		*dst++ = (u8)(hi << 4 | lo);
		src += 2;
	}
	return 0;
}

/* "xx:xx:xx:xx:xx:xx" (':' only, as lib/net_utils.c), at least that long */
bool mac_pton(const char *s, u8 *mac)
{
	u8 out[ETH_ALEN];
	int i;

	if (strnlen(s, 3 * ETH_ALEN - 1) < 3 * ETH_ALEN - 1)
		return false;
	for (i = 0; i < ETH_ALEN; i++) {
		if (hex2bin(&out[i], s + 3 * i, 1))
			return false;
		if (i < ETH_ALEN - 1 && s[3 * i + 2] != ':')
			return false;
	}
	memcpy(mac, out, ETH_ALEN);
	return true;
}

/* ---- nodes ---- */

static struct device_node *new_node(const char *name, const struct device_node *parent)
{
	struct device_node *np;

	if (n_nodes == KSHIM_MAX_NODES)
		kshim_bug("more than %d device-tree nodes asked for", KSHIM_MAX_NODES);
	np = &nodes[n_nodes++];
	memset(np, 0, sizeof(*np));
	snprintf(np->name, sizeof(np->name), "%s", name);
	np->refs = 1;
	np->parent = parent;
	return np;
}

static void check_node(const struct device_node *np)
{
	if (np < nodes || np >= nodes + n_nodes)
		kshim_bug("%p is no device-tree node", (const void *)np);
}

struct device_node *of_node_get(struct device_node *np)
{
	if (np) {
		check_node(np);
		np->refs++;
	}
	return np;
}

void of_node_put(struct device_node *np)
{
	if (!np)
		return;
	check_node(np);
	if (np->refs <= 1)
		kshim_bug("of_node_put() of %s: more puts than gets", np->name);
	np->refs--;
}

/*
 * The tree has a child for each name asked, as long as it has room: the
 * first cells get a node, the others none.
 */
struct device_node *of_get_child_by_name(const struct device_node *np,
					 const char *name)
{
	unsigned int i;

	if (!np)
		return NULL;
	check_node(np);
	for (i = 0; i < n_nodes; i++)
		if (nodes[i].parent == np && !strcmp(nodes[i].name, name))
			return of_node_get(&nodes[i]);
	if (strlen(name) >= sizeof(nodes[0].name) || n_nodes == KSHIM_MAX_NODES)
		return NULL;
	return of_node_get(new_node(name, np));
}

int of_property_read_u32(const struct device_node *np, const char *name,
			 u32 *out)
{
	const struct kshim_config *p;

	if (!np)
		return -EINVAL;
	check_node(np);
	p = np->props;
	if (p && !strcmp(name, "env-size") && p->has_env_size) {
		*out = p->env_size;
		return 0;
	}
	if (p && !strcmp(name, "env-redundant-offset") && p->has_redundant_offset) {
		*out = p->redundant_offset;
		return 0;
	}
	return -EINVAL;
}

int of_device_is_compatible(const struct device_node *np, const char *compat)
{
	if (!np)
		return 0;
	check_node(np);
	if (np->child)
		return np->child->mac_base && !strcmp(compat, "mac-base");
	return np->compatible && !strcmp(np->compatible, compat);
}

const void *of_get_property(const struct device_node *np, const char *name,
			    int *lenp)
{
	const struct kshim_child *c;

	if (!np)
		return NULL;
	check_node(np);
	c = np->child;
	if (c && !strcmp(name, "reg") && c->reg_len >= 0) {
		*lenp = c->reg_len;
		return c->reg;
	}
	if (c && !strcmp(name, "bits") && c->bits_len >= 0) {
		*lenp = c->bits_len;
		return c->bits;
	}
	return NULL;
}

/* as the kernel's: a reference on the next child, the previous one's put */
struct device_node *of_get_next_child(const struct device_node *np,
				      struct device_node *prev)
{
	unsigned int i = 0;

	if (!np)
		return NULL;
	check_node(np);
	if (prev) {
		check_node(prev);
		i = prev - nodes + 1;
		of_node_put(prev);
	}
	for (; i < n_nodes; i++)
		if (nodes[i].parent == np)
			return of_node_get(&nodes[i]);
	return NULL;
}

const struct kshim_child *kshim_node_child(const struct device_node *np)
{
	if (!np)
		return NULL;
	check_node(np);
	return np->child;
}

char *kshim_kasprintf(const char *fmt, const void *arg)
{
	const struct device_node *np = arg;
	size_t len;

	if (strcmp(fmt, "%pOFn"))
		kshim_bug("kasprintf(\"%s\") is not in the shim", fmt);
	check_node(np);
	len = strcspn(np->name, "@");
	return kstrndup(np->name, len, GFP_KERNEL);
}

/* ---- messages ---- */

/* each "0x<pointer>\x01" of @text made the name of that node */
static void node_names(char *text, size_t room)
{
	char *mark;

	while ((mark = strchr(text, '\x01'))) {
		char *start = mark, name[80];
		const struct device_node *np;
		unsigned long long v;

		while (start > text && isxdigit((unsigned char)start[-1]))
			start--;
		if (start - text >= 2 && start[-1] == 'x' && start[-2] == '0')
			start -= 2;
		v = strtoull(start, NULL, 16);
		if (start == mark || v < (uintptr_t)nodes ||
		    v >= (uintptr_t)(nodes + n_nodes) ||
		    (v - (uintptr_t)nodes) % sizeof(nodes[0])) {
			/* a \x01 of the message's own bytes (a %*pE buffer) */
			*mark = '?';
			continue;
		}
		np = (const struct device_node *)(uintptr_t)v;
		snprintf(name, sizeof(name), "/%s", np->name);
		if (strlen(text) + strlen(name) >= room)
			break;
		memmove(start + strlen(name), mark + 1, strlen(mark + 1) + 1);
		memcpy(start, name, strlen(name));
	}
}

void kshim_dev_log(const struct device *dev, const char *level,
		   const char *fmt, ...)
{
	char conv[512], text[1024];
	size_t i = 0, o = 0;
	va_list ap;

	/*
	 * %*pE -> %.*s: the same arguments (length, buffer); %pOF (a node's
	 * path) -> %p and a mark, the pointer made the node's name below
	 */
	while (fmt[i] && o < sizeof(conv) - 5) {
		if (!strncmp(fmt + i, "%*pE", 4)) {
			memcpy(conv + o, "%.*s", 4);
			o += 4;
			i += 4;
		} else if (!strncmp(fmt + i, "%pOF", 4)) {
			memcpy(conv + o, "%p\x01", 3);
			o += 3;
			i += 4 + (fmt[i + 4] == 'n');
		} else {
			conv[o++] = fmt[i++];
		}
	}
	conv[o] = '\0';
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), conv, ap);
	va_end(ap);
	node_names(text, sizeof(text));
	text[strcspn(text, "\n")] = '\0';
	if (listing && n_messages < KSHIM_MAX_LOG) {
		char *m = malloc(strlen(dev->name) + strlen(level) + strlen(text) + 4);

		sprintf(m, "%s %s: %s", level, dev->name, text);
		messages[n_messages++] = m;
	}
}

/* ---- nvmem ---- */

int nvmem_layout_register(struct nvmem_layout *l)
{
	if (!l->name || !l->add_cells || !l->of_match_table)
		kshim_bug("registers a layout without name, add_cells or match table");
	layout = l;
	return 0;
}

void nvmem_layout_unregister(struct nvmem_layout *l)
{
	if (l != layout)
		kshim_bug("unregisters a layout it did not register");
}

static const struct device_node *layout_node(struct nvmem_device *nvmem)
{
	return nvmem->container ? nvmem->container : nvmem->dev.of_node;
}

const void *nvmem_layout_get_match_data(struct nvmem_device *nvmem,
					struct nvmem_layout *l)
{
	const struct device_node *np = layout_node(nvmem);
	const struct of_device_id *id;

	for (id = l->of_match_table; id->compatible[0]; id++)
		if (np->compatible && !strcmp(id->compatible, np->compatible))
			return id->data;
	return NULL;
}

struct device_node *of_nvmem_layout_get_container(struct nvmem_device *nvmem)
{
	return of_node_get(nvmem->container);
}

size_t nvmem_dev_size(struct nvmem_device *nvmem)
{
	return nvmem->size;
}

int nvmem_device_read(struct nvmem_device *nvmem, unsigned int offset,
		      size_t bytes, void *buf)
{
	if (offset > nvmem->size || bytes > nvmem->size - offset)
		kshim_bug("reads %zu bytes at %#x of a device of %zu bytes",
			  bytes, offset, nvmem->size);
	if (fault())
		return -EIO;
	memcpy(buf, nvmem->data + offset, bytes);
	return (int)bytes;
}

/* the layouts' view; the fixed-layout harness has the core's own */
__attribute__((weak))
int nvmem_add_one_cell(struct nvmem_device *nvmem,
		       const struct nvmem_cell_info *info)
{
	size_t stored = info->raw_len ? info->raw_len : info->bytes;

	if (!info->name || !info->name[0] || strchr(info->name, '/'))
		kshim_bug("adds a cell named \"%s\"", info->name ? info->name : "(null)");
	if (info->offset > nvmem->size || stored > nvmem->size - info->offset)
		kshim_bug("adds cell %s of %zu bytes at %#x on a device of %zu bytes",
			  info->name, stored, info->offset, nvmem->size);
	/* the core allocates the cell: a fault point */
	if (fault())
		return -ENOMEM;
	/* what the core refuses (drivers/nvmem/core.c) */
	if (stored != info->bytes &&
	    (!info->read_post_process || info->bit_offset || info->nbits))
		return -EINVAL;
	return kshim_keep_cell(info);
}

int kshim_keep_cell(const struct nvmem_cell_info *info)
{
	size_t stored = info->raw_len ? info->raw_len : info->bytes;
	struct kshim_cell *c;

	if (info->np)
		check_node(info->np);
	if (n_cells == KSHIM_MAX_CELLS)
		kshim_bug("more than %d cells", KSHIM_MAX_CELLS);
	c = &cells[n_cells++];
	c->name = strdup(info->name);
	c->info = *info;
	c->info.name = c->name;
	c->info.raw_len = stored;
	return 0;
}

/* ---- the run ---- */

static void run_hooks(const struct nvmem_device *nvmem, const struct kshim_cell *c)
{
	static const int indexes[] = { 0, 1, -1, 2, 255, 256, 0xffffff,
				       INT_MAX, INT_MIN };
	size_t len = c->info.raw_len > c->info.bytes ? c->info.raw_len : c->info.bytes;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(indexes); i++) {
		/* exactly the core's buffer: ASan sees a write past it */
		u8 *buf = calloc(1, len ? len : 1);
		int rc;

		memcpy(buf, nvmem->data + c->info.offset, c->info.raw_len);
		rc = c->info.read_post_process(c->info.priv, "fuzz", indexes[i],
					       c->info.offset, buf, c->info.raw_len);
		if (rc && rc != -EINVAL)
			kshim_bug("read hook of %s (index %d) returns %d",
				  c->name, indexes[i], rc);
		free(buf);
	}
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void list(const struct kshim_config *cfg, size_t prefix, int ret,
		 const u8 *fixed, size_t size)
{
	unsigned int i;

	printf("{\"layout\": ");
	json_string(cfg->compatible);
	printf(", \"prefix\": %zu, \"ret\": %d, \"env_size\": ", prefix, ret);
	cfg->has_env_size ? printf("%u", cfg->env_size) : printf("null");
	printf(", \"env_redundant_offset\": ");
	cfg->has_redundant_offset ? printf("%u", cfg->redundant_offset) : printf("null");
	printf(", \"cells\": [");
	for (i = 0; i < n_cells; i++) {
		printf("%s[", i ? ", " : "");
		json_string(cells[i].name);
		printf(", %u, %u, %zu]", cells[i].info.offset, cells[i].info.bytes,
		       cells[i].info.raw_len);
	}
	printf("], \"messages\": [");
	for (i = 0; i < n_messages; i++) {
		printf("%s", i ? ", " : "");
		json_string(messages[i]);
	}
	printf("]");
	/* the checksums the harness made right: the device it parsed */
	if (fixed) {
		printf(", \"fixed\": \"");
		for (i = 0; i < size; i++)
			printf("%02x", fixed[i]);
		printf("\"");
	}
	printf("}\n");
	fflush(stdout);
}

/*
 * One run of add_cells() over @size bytes of device content; with
 * @fault_at set, that allocation or read fails, and add_cells() may pass
 * on -ENOMEM or -EIO (the device then fails to register, and the core
 * drops the cells already added).
 */
static void run_pass(const struct kshim_config *cfg, const u8 *data, size_t size,
		     size_t prefix, bool fixed)
{
	struct nvmem_device nvmem = { 0 };
	struct device_node *devnode, *parent;
	unsigned int i;
	u8 *content;
	int ret;

	n_nodes = n_cells = n_messages = 0;
	devnode = new_node("eeprom@50", NULL);
	if (cfg->container) {
		nvmem.container = new_node("nvmem-layout", devnode);
		nvmem.container->compatible = cfg->compatible;
		nvmem.container->props = cfg;
	} else {
		devnode->compatible = cfg->compatible;
		devnode->props = cfg;
	}
	parent = cfg->container ? nvmem.container : devnode;
	for (i = 0; i < cfg->n_children; i++)
		new_node(cfg->children[i].name, parent)->child = &cfg->children[i];
	/* the device's bytes in a buffer of their own size */
	content = malloc(size ? size : 1);
	memcpy(content, data, size);
	nvmem.data = content;
	nvmem.size = size;
	nvmem.dev.name = "fuzz0";
	nvmem.dev.of_node = devnode;
	nvmem.stride = 1;

	fault_points = 0;
	ret = layout->add_cells(&nvmem.dev, &nvmem, layout);
	if (ret && !(fault_at >= 0 && (ret == -ENOMEM || ret == -EIO)))
		kshim_bug("add_cells returns %d: the device would not register", ret);

	/* each node: the tree's reference and one per cell holding it */
	for (i = 0; i < n_nodes; i++) {
		int want = 1;
		unsigned int c;

		for (c = 0; c < n_cells; c++)
			want += cells[c].info.np == &nodes[i];
		if (nodes[i].refs != want)
			kshim_bug("node %s has %d references, %d expected",
				  nodes[i].name, nodes[i].refs, want);
	}
	for (i = 0; i < n_cells; i++)
		if (cells[i].info.read_post_process && !cfg->core_reads)
			run_hooks(&nvmem, &cells[i]);
	kshim_after_add_cells(&nvmem);
	if (listing && fault_at < 0)
		list(cfg, prefix, ret, fixed ? content : NULL, size);

	/* what the core does when the device goes */
	for (i = 0; i < n_cells; i++) {
		of_node_put(cells[i].info.np);
		free(cells[i].name);
	}
	for (i = 0; i < n_messages; i++)
		free(messages[i]);
	kshim_cells_gone();
	free(content);
}

__attribute__((weak)) void kshim_after_add_cells(struct nvmem_device *nvmem)
{
}

__attribute__((weak)) void kshim_cells_gone(void)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kshim_config cfg = { 0 };
	bool is_fixed;
	size_t prefix;
	u8 *fixed;

	if (!layout) {
		listing = getenv("NVLAB_FUZZ_LIST") != NULL;
		if (kshim_layout_init())
			kshim_bug("init fails");
	}
	prefix = kshim_config(data, size, &cfg);
	if (prefix > size)
		return -1;	/* not an input of this harness */

	/*
	 * The content as it is, then with its checksums made right, then
	 * that again with one of the allocations or reads of the run before
	 * failing (which one: from the input's bytes).
	 */
	fault_at = -1;
	run_pass(&cfg, data + prefix, size - prefix, prefix, false);
	fixed = malloc(size - prefix ? size - prefix : 1);
	memcpy(fixed, data + prefix, size - prefix);
	is_fixed = kshim_fixup(fixed, size - prefix, &cfg);
	if (is_fixed)
		run_pass(&cfg, fixed, size - prefix, prefix, true);
	if (fault_points) {
		fault_at = (long)(crc32_le(0, data, size) % (u32)fault_points);
		run_pass(&cfg, is_fixed ? fixed : data + prefix, size - prefix, prefix, is_fixed);
		fault_at = -1;
	}
	free(fixed);
	return 0;
}
