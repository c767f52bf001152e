/* SPDX-License-Identifier: GPL-2.0 */
/* host stand-in for <linux/nvmem-provider.h>: everything is in kshim.h */
#include <kshim.h>
