// SPDX-License-Identifier: GPL-2.0
/*
 * Seccomp on restore, controller side: check each thread's mode and filter
 * chain in the core image and lay the programs out for the restorer blob,
 * which installs them (parasite/restorer.c, Documentation/restore.md).
 *
 * The programs go into the args of the restorer area, in room reserved
 * after the last thread's signal queue (restore-task.c): each distinct
 * filter of the process once, then per thread its chain, oldest first, as
 * struct rst_seccomp entries pointing at them.
 */
#define LOG_PREFIX "restore-seccomp: "

#include <errno.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "restore/restore-task-int.h"
#include "util.h"

#ifndef SECCOMP_FILTER_FLAG_LOG
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1) /* 4.14 */
#endif

/* The kernel caps a chain at 32768 instructions, counting 4 more per filter. */
#define MAX_CHAIN 6554
#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

static int thread_mode(const struct finish *f, const ThreadCoreEntry *tc, uint32_t *ret)
{
	if (!tc->has_seccomp_mode) {
		/* Images from before per-thread seccomp state held only mode 0. */
		if (f->core->tc->seccomp_mode != SECCOMP_MODE__SECCOMP_DISABLED) {
			pr_err("pid %d: seccomp mode %d without per-thread state in the image\n",
			       f->pid, f->core->tc->seccomp_mode);
			return -EINVAL;
		}
		*ret = 0;
		return 0;
	}
	switch (tc->seccomp_mode) {
	case SECCOMP_MODE__SECCOMP_DISABLED:
		*ret = 0;
		return 0;
	case SECCOMP_MODE__SECCOMP_STRICT:
		*ret = SECCOMP_MODE_STRICT;
		return 0;
	case SECCOMP_MODE__SECCOMP_FILTER:
		*ret = SECCOMP_MODE_FILTER;
		return 0;
	default:
		pr_err("pid %d: thread %u: unknown seccomp mode %d\n", f->pid, tc->tid,
		       tc->seccomp_mode);
		return -EINVAL;
	}
}

static int check_filter(const struct finish *f, size_t i)
{
	const SeccompFilterEntry *e = f->core->tc->seccomp[i];
	size_t len = e->insns.len;

	if (!len || len % sizeof(struct sock_filter) ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		pr_err("pid %d: seccomp filter %zu: %zu bytes of program\n", f->pid, i + 1, len);
		return -EINVAL;
	}
	if (e->prev > i) {
		pr_err("pid %d: seccomp filter %zu sits on filter %u\n", f->pid, i + 1, e->prev);
		return -EINVAL;
	}
	if (e->flags & ~(uint32_t)SECCOMP_FILTER_FLAG_LOG) {
		pr_err("pid %d: seccomp filter %zu: unknown flags %#x\n", f->pid, i + 1, e->flags);
		return -EINVAL;
	}
	return 0;
}

/* Filters from the newest one (@id, 1-based) down; checked by check_filter(). */
static int chain_len(const struct finish *f, const ThreadCoreEntry *tc, uint32_t *ret)
{
	const TaskCoreEntry *t = f->core->tc;
	uint32_t id = tc->has_seccomp_filter ? tc->seccomp_filter : 0, n = 0;

	if (!id || id > t->n_seccomp) {
		pr_err("pid %d: thread %u: seccomp filter mode with filter %u of %zu\n", f->pid,
		       tc->tid, id, t->n_seccomp);
		return -EINVAL;
	}
	for (; id; id = t->seccomp[id - 1]->prev)
		n++;
	if (n > MAX_CHAIN) {
		pr_err("pid %d: thread %u: %u seccomp filters\n", f->pid, tc->tid, n);
		return -E2BIG;
	}
	*ret = n;
	return 0;
}

int task_seccomp_size(struct finish *f, uint64_t *ret)
{
	const TaskCoreEntry *t = f->core->tc;
	uint64_t size = 0;
	uint32_t mode, n;
	size_t i;
	int err;

	for (i = 0; i < t->n_seccomp; i++) {
		err = check_filter(f, i);
		if (err)
			return err;
		size += ALIGN8(t->seccomp[i]->insns.len);
	}
	for (i = 0; i < f->core->n_threads; i++) {
		const ThreadCoreEntry *tc = f->core->threads[i];

		err = thread_mode(f, tc, &mode);
		if (!err && mode == SECCOMP_MODE_FILTER)
			err = chain_len(f, tc, &n);
		else if (!err && tc->has_seccomp_filter && tc->seccomp_filter) {
			pr_err("pid %d: thread %u: seccomp filters in mode %u\n", f->pid, tc->tid,
			       mode);
			err = -EINVAL;
		}
		if (err)
			return err;
		if (mode == SECCOMP_MODE_FILTER)
			size += (uint64_t)n * sizeof(struct rst_seccomp);
	}
	*ret = size;
	return 0;
}

/*
 * Without no_new_privs the kernel lets only a CAP_SYS_ADMIN task install a
 * filter: when the restored creds lack both, the blob installs the filters
 * while it still has every capability, right before capset().
 */
static bool install_early(const struct finish *f)
{
	const CredsEntry *c = f->p->creds;

	return !c->no_new_privs && !(c->cap_eff & (1ULL << CAP_SYS_ADMIN));
}

int task_plan_seccomp(struct finish *f)
{
	const TaskCoreEntry *t = f->core->tc;
	uint64_t base = f->seccomp_off, off = base;
	_cleanup_free_ uint64_t *prog_off = calloc(t->n_seccomp + 1, sizeof(*prog_off));
	uint32_t mode, n, id, k;
	size_t i;
	int err;

	if (!prog_off)
		return -ENOMEM;
	for (i = 0; i < t->n_seccomp; i++) {
		prog_off[i] = off;
		memcpy((char *)f->a + off, t->seccomp[i]->insns.data, t->seccomp[i]->insns.len);
		off += ALIGN8(t->seccomp[i]->insns.len);
	}
	for (i = 0; i < f->core->n_threads; i++) {
		const ThreadCoreEntry *tc = f->core->threads[i];
		struct rst_thread *th = (struct rst_thread *)((char *)f->a + f->lay.threads_off) +
					i;
		struct rst_seccomp *out;

		err = thread_mode(f, tc, &mode);
		if (!err && mode == SECCOMP_MODE_FILTER)
			err = chain_len(f, tc, &n);
		if (err)
			return err;
		th->seccomp_mode = mode;
		if (mode != SECCOMP_MODE_FILTER)
			continue;
		th->nr_seccomp = n;
		th->seccomp_off = off;
		th->seccomp_early = install_early(f);
		out = (struct rst_seccomp *)((char *)f->a + off);
		/* The image names the newest filter: fill the array from its end. */
		for (id = tc->seccomp_filter, k = n; id; id = t->seccomp[id - 1]->prev) {
			k--;
			out[k].flags = t->seccomp[id - 1]->flags;
			out[k].len = (uint32_t)(t->seccomp[id - 1]->insns.len /
						sizeof(struct sock_filter));
			out[k].insns_off = prog_off[id - 1];
		}
		off += (uint64_t)n * sizeof(*out);
		pr_debug("pid %d: thread %u: %u seccomp filters%s\n", f->pid, tc->tid, n,
			 th->seccomp_early ? ", installed before capset" : "");
	}
	if (off - base > f->seccomp_size) {
		pr_err("pid %d: seccomp filters overflow their %lu bytes\n", f->pid,
		       f->seccomp_size);
		return -EOVERFLOW;
	}
	return 0;
}
