// SPDX-License-Identifier: GPL-2.0
/* Libraries loaded at their first use (include/dl-lib.h). */
#define LOG_PREFIX "dl: "

#include <dlfcn.h>
#include <errno.h>

#include "dl-lib.h"
#include "log.h"

int dl_lib_open(struct dl_lib *l)
{
	/* never unloaded: the table points into it for the rest of the run */
	l->dl = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!l->dl) {
		pr_err("%s needs %s: cannot load it: %s\n", l->what, l->soname, dlerror());
		l->err = -ENOENT;
	}
	return l->err;
}

void *dl_lib_sym(struct dl_lib *l, const char *name)
{
	void *p = dlsym(l->dl, name);

	if (!p) {
		pr_err("%s needs %s: it has no %s: %s\n", l->what, l->soname, name, dlerror());
		l->err = -ENOENT;
	}
	return p;
}
