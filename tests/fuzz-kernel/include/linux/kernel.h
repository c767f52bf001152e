/* SPDX-License-Identifier: GPL-2.0 */
/* host stand-in for <linux/kernel.h>: everything is in kshim.h */
#include <kshim.h>
