// SPDX-License-Identifier: GPL-2.0
/* Libraries loaded at their first use (include/dl-lib.h). */
#define LOG_PREFIX "dl: "

#include <dlfcn.h>
#include <errno.h>

#include "dl-lib.h"
#include "log.h"

/* A required library missing is an error; an optional one, a debug line (its caller falls back). */
#define dl_report(l, fmt, ...)                        \
	do {                                          \
		if ((l)->optional)                    \
			pr_debug(fmt, ##__VA_ARGS__); \
		else                                  \
			pr_err(fmt, ##__VA_ARGS__);   \
	} while (0)

int dl_lib_open(struct dl_lib *l)
{
	/* never unloaded: the table points into it for the rest of the run */
	l->dl = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!l->dl) {
		dl_report(l, "%s needs %s: cannot load it: %s\n", l->what, l->soname, dlerror());
		l->err = -ENOENT;
	}
	return l->err;
}

void *dl_lib_sym(struct dl_lib *l, const char *name)
{
	void *p = dlsym(l->dl, name);

	if (!p) {
		dl_report(l, "%s needs %s: it has no %s: %s\n", l->what, l->soname, name,
			  dlerror());
		l->err = -ENOENT;
	}
	return p;
}
