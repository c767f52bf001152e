/* SPDX-License-Identifier: GPL-2.0 */
/* host stand-in for <linux/crc32.h>: everything is in kshim.h */
#include <kshim.h>
