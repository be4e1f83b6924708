/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_DL_LIB_H
#define CRIU_LIKE_DL_LIB_H

/*
 * A library loaded at its first use instead of linked (util/dl-lib.c): one
 * that only the controller calls, and not in every run. A linked one is
 * mapped in every process criu-like starts, every restored task included,
 * whose restorer unmaps it again (Documentation/restore.md, "The controller's
 * heap and the forks").
 *
 * A file that loads one lists the functions it calls (an X macro), keeps
 * them in its table dl_fn (pointers of their own types), names each one
 * after its entry, and loads them once before the first call:
 *
 *	#define CT_FUNCS(X) X(nfct_open) X(nfct_close)
 *	static struct dl_lib dl_lib = DL_LIB_INIT("libnetfilter_conntrack.so.3", "conntrack");
 *	DL_LIB_TABLE(CT_FUNCS);
 *	#define nfct_open (*dl_fn.nfct_open)
 *	static void ct_lib_load(void) { if (!dl_lib_open(&dl_lib)) CT_FUNCS(DL_LIB_SYM) }
 *	... pthread_once(&dl_lib.once, ct_lib_load); if (dl_lib.err) return dl_lib.err;
 *
 * A forked child inherits what its parent loaded: load before a fork whose
 * child calls the library (dlopen() is not safe in the child of a process
 * with threads).
 */
#include <pthread.h>

struct dl_lib {
	const char *soname;
	const char *what; /* what needs it, for the message: "conntrack" */
	pthread_once_t once;
	int err; /* 0 loaded, or -errno once the load failed */
	void *dl;
};

#define DL_LIB_INIT(so, w)                                             \
	{                                                              \
		.soname = (so), .what = (w), .once = PTHREAD_ONCE_INIT \
	}
#define DL_LIB_PTR(f) __typeof__(f) *f;
#define DL_LIB_TABLE(funcs)       \
	static struct {           \
		funcs(DL_LIB_PTR) \
	} dl_fn
#define DL_LIB_SYM(f)    \
	if (!dl_lib.err) \
		dl_fn.f = (__typeof__(f) *)dl_lib_sym(&dl_lib, #f);

/* dlopen() @l's library: 0, or -ENOENT in l->err (logged). */
int dl_lib_open(struct dl_lib *l);
/* Symbol @name of @l's library, or NULL with -ENOENT in l->err (logged). */
void *dl_lib_sym(struct dl_lib *l, const char *name);

#endif
