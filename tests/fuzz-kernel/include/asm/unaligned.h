/* SPDX-License-Identifier: GPL-2.0 */
/* host stand-in for <asm/unaligned.h>: everything is in kshim.h */
#include <kshim.h>
