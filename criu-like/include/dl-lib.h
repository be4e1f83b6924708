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
 * A file that loads one lists the functions it calls (an X macro), declares
 * the library with DL_LIB() (its table dl_fn: pointers of their own types),
 * names each function after its entry, and calls dl_lib_load() before the
 * first call (the load happens once per process):
 *
 *	#define CT_FUNCS(X) X(nfct_open) X(nfct_close)
 *	DL_LIB("libnetfilter_conntrack.so.3", "conntrack", CT_FUNCS);
 *	#define nfct_open (*dl_fn.nfct_open)
 *	... err = dl_lib_load(); if (err) return err;
 *
 * A library the file can do without (it falls back: the network lock runs
 * the nft tool without libnftables) is declared with DL_LIB_OPTIONAL():
 * dl_lib_load() fails the same way, but its absence is a debug line, not an
 * error (an error would end up as the RPC's cr_errmsg, log_first_error()).
 *
 * A forked child inherits what its parent loaded: load before a fork whose
 * child calls the library (dlopen() is not safe in the child of a process
 * with threads).
 */
#include <pthread.h>
#include <stdbool.h>

struct dl_lib {
	const char *soname;
	const char *what; /* what needs it, for the message: "conntrack" */
	bool optional; /* its caller falls back without it: no error logged */
	pthread_once_t once;
	int err; /* 0 loaded, or -errno once the load failed */
	void *dl;
};

#define DL_LIB_INIT_AS(so, w, opt)                                                        \
	{                                                                                 \
		.soname = (so), .what = (w), .optional = (opt), .once = PTHREAD_ONCE_INIT \
	}
#define DL_LIB_INIT(so, w) DL_LIB_INIT_AS(so, w, false)
#define DL_LIB_PTR(f) __typeof__(f) *f;
#define DL_LIB_TABLE(funcs)       \
	static struct {           \
		funcs(DL_LIB_PTR) \
	} dl_fn
#define DL_LIB_SYM(f)    \
	if (!dl_lib.err) \
		dl_fn.f = (__typeof__(f) *)dl_lib_sym(&dl_lib, #f);

/*
 * The library @so (@w: what needs it, for the messages) and the table of the
 * functions @funcs lists, in this file: dl_lib, dl_fn, and dl_lib_load(),
 * which loads the library and its functions once per process: 0, or -ENOENT
 * (logged once) when it or one of them is missing.
 */
#define DL_LIB(so, w, funcs) DL_LIB_AS(so, w, false, funcs)
/* The same for a library its caller can do without: its absence logged at debug level. */
#define DL_LIB_OPTIONAL(so, w, funcs) DL_LIB_AS(so, w, true, funcs)
#define DL_LIB_AS(so, w, opt, funcs)                              \
	static struct dl_lib dl_lib = DL_LIB_INIT_AS(so, w, opt); \
	DL_LIB_TABLE(funcs);                                      \
	static void dl_lib_syms(void)                             \
	{                                                         \
		if (!dl_lib_open(&dl_lib)) {                      \
			funcs(DL_LIB_SYM)                         \
		}                                                 \
	}                                                         \
	static int dl_lib_load(void)                              \
	{                                                         \
		pthread_once(&dl_lib.once, dl_lib_syms);          \
		return dl_lib.err;                                \
	}                                                         \
	static int dl_lib_load(void)

/* dlopen() @l's library: 0, or -ENOENT in l->err (logged: an error unless l->optional). */
int dl_lib_open(struct dl_lib *l);
/* Symbol @name of @l's library, or NULL with -ENOENT in l->err (logged as above). */
void *dl_lib_sym(struct dl_lib *l, const char *name);

#endif
