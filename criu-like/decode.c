// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include "cr.h"
#include "log.h"

int cr_decode(const struct cr_options *o, const char *path)
{
	(void)o;
	(void)path;
	return -EOPNOTSUPP;
}

int cr_encode(const struct cr_options *o, const char *in)
{
	(void)o;
	(void)in;
	return -EOPNOTSUPP;
}
