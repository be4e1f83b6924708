// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp state of a seized process, for core-PID.img.
 *
 * Seccomp is per thread: each has a mode (0 off, 1 strict, 2 filter) and in
 * filter mode a chain of classic BPF programs. The kernel shares filters by
 * reference (fork copies the chain pointer, TSYNC gives every thread the
 * caller's chain) and offers no kcmp for them, so sharing is found by
 * content: a filter is the same when its program, its flags and everything
 * below it are. Each distinct one is stored once per process; every thread
 * names its newest filter, and each filter names the one below it.
 *
 * The thread must be in a ptrace stop: PTRACE_SECCOMP_GET_FILTER (4.4,
 * CONFIG_CHECKPOINT_RESTORE, CAP_SYS_ADMIN) copies the program at an index
 * counted from the oldest filter, PTRACE_SECCOMP_GET_METADATA (4.16) its
 * flags (only SECCOMP_FILTER_FLAG_LOG is kept by the kernel).
 *
 * On restore, in the controller: each thread's mode and chain from the core
 * image is checked and the programs laid out for the restorer blob, which
 * installs them last (parasite/restorer.c, Documentation/restore.md). The
 * programs go into the args of the restorer area, in room reserved after the
 * last thread's signal queue (restore/restore-task.c): each distinct filter
 * of the process once, then per thread its chain, oldest first, as struct
 * rst_seccomp entries pointing at them.
 */
#define LOG_PREFIX "seccomp: "

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "compat.h"
#include "infect.h"
#include "log.h"
#include "restore/restore-task-int.h"
#include "seccomp.h"
#include "util.h"

/* struct seccomp_metadata of linux/ptrace.h, which clashes with glibc's sys/ptrace.h. */
struct cr_seccomp_metadata {
	uint64_t filter_off;
	uint64_t flags;
};

#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U /* 5.0 */
#endif
#ifndef SECCOMP_RET_ACTION_FULL
#define SECCOMP_RET_ACTION_FULL 0xffff0000U /* 4.14 */
#endif
#ifndef SECCOMP_FILTER_FLAG_LOG
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1) /* 4.14 */
#endif

/* The kernel caps a chain at 32768 instructions, counting 4 more per filter: 6553 filters. */
#define SECCOMP_MAX_CHAIN 6554

void seccomp_dump_fini(struct seccomp_dump *sd)
{
	size_t i;

	for (i = 0; i < sd->n; i++)
		free(sd->e[i].insns.data);
	free(sd->e);
	free(sd->p);
	*sd = (struct seccomp_dump){ 0 };
}

bool seccomp_prog_may_notify(const struct sock_filter *insns, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (BPF_CLASS(insns[i].code) != BPF_RET)
			continue;
		if (BPF_RVAL(insns[i].code) == BPF_A)
			return true; /* a computed action: it may be USER_NOTIF */
		if ((insns[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
			return true;
	}
	return false;
}

/* The index in @sd of the filter @p stacked on filter @prev (1-based, 0: none), or -ENOENT. */
static ssize_t find_filter(const struct seccomp_dump *sd, const struct seccomp_prog *p,
			   uint32_t prev)
{
	size_t i, size = p->len * sizeof(*p->insns);

	for (i = 0; i < sd->n; i++) {
		const SeccompFilterEntry *e = &sd->e[i];

		if (e->prev == prev && e->flags == p->flags && e->insns.len == size &&
		    !memcmp(e->insns.data, p->insns, size))
			return (ssize_t)i;
	}
	return -ENOENT;
}

static int add_filter(struct seccomp_dump *sd, const struct seccomp_prog *p, uint32_t prev)
{
	size_t size = p->len * sizeof(*p->insns);
	SeccompFilterEntry *e;
	void *copy;

	e = realloc(sd->e, (sd->n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	sd->e = e;
	copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, p->insns, size);
	e = &sd->e[sd->n++];
	seccomp_filter_entry__init(e);
	e->insns.data = copy;
	e->insns.len = size;
	e->has_prev = true;
	e->prev = prev;
	e->has_flags = true;
	e->flags = p->flags;
	return 0;
}

int seccomp_add_chain(struct seccomp_dump *sd, const struct seccomp_prog *chain, size_t n,
		      uint32_t *ret_id)
{
	uint32_t id = 0;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		ssize_t at = find_filter(sd, &chain[i], id);

		if (at < 0) {
			err = add_filter(sd, &chain[i], id);
			if (err)
				return err;
			at = (ssize_t)sd->n - 1;
		}
		id = (uint32_t)at + 1;
	}
	*ret_id = id;
	return 0;
}

static int thread_mode(pid_t pid, pid_t tid, int *ret_mode)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text) {
		pr_perror("read %s", path);
		return neg_errno();
	}
	err = seccomp_parse_status(text, ret_mode);
	if (err)
		pr_err("task %d/%d: cannot parse the Seccomp: line of %s\n", pid, tid, path);
	return err;
}

/* The flags of filter @idx (0: the oldest); 4.16+, older kernels keep none we could lose. */
static int filter_flags(pid_t pid, pid_t tid, long idx, uint32_t *ret)
{
	struct cr_seccomp_metadata md = { .filter_off = (uint64_t)idx };

	*ret = 0;
	if (ptrace(PTRACE_SECCOMP_GET_METADATA, tid, (void *)sizeof(md), &md) < 0) {
		if (errno == EIO || errno == EINVAL)
			return 0;
		pr_perror("task %d/%d: PTRACE_SECCOMP_GET_METADATA of filter %ld", pid, tid, idx);
		return neg_errno();
	}
	*ret = (uint32_t)(md.flags & SECCOMP_FILTER_FLAG_LOG);
	return 0;
}

/* Filter @idx of @tid into @p; 1 when there is no such filter (the chain ended). */
static int get_filter(pid_t pid, pid_t tid, long idx, struct seccomp_prog *p)
{
	long len = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, NULL);

	if (len < 0 && errno == ENOENT)
		return 1;
	if (len <= 0) {
		if (errno == EIO || errno == EINVAL)
			pr_err("task %d/%d: PTRACE_SECCOMP_GET_FILTER unsupported (4.4, "
			       "CONFIG_CHECKPOINT_RESTORE): cannot dump its seccomp filters\n",
			       pid, tid);
		else
			pr_perror("task %d/%d: PTRACE_SECCOMP_GET_FILTER %ld", pid, tid, idx);
		return len < 0 ? neg_errno() : -EINVAL;
	}
	p->insns = calloc((size_t)len, sizeof(*p->insns));
	if (!p->insns)
		return -ENOMEM;
	p->len = (size_t)len;
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)idx, p->insns) != len) {
		pr_perror("task %d/%d: PTRACE_SECCOMP_GET_FILTER %ld changed", pid, tid, idx);
		return errno ? neg_errno() : -EAGAIN;
	}
	if (seccomp_prog_may_notify(p->insns, p->len)) {
		pr_err("task %d/%d: seccomp filter %ld may return SECCOMP_RET_USER_NOTIF: its "
		       "listener cannot be restored\n",
		       pid, tid, idx);
		return -EOPNOTSUPP;
	}
	return filter_flags(pid, tid, idx, &p->flags);
}

static void chain_free(struct seccomp_prog *chain, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(chain[i].insns);
	free(chain);
}

/*
 * Read the chain of @tid. The index of PTRACE_SECCOMP_GET_FILTER counts
 * from the oldest filter (kernel get_nth_filter(): 0 is the first one
 * installed), so the chain comes out in the order to install it again.
 */
static int dump_chain(pid_t pid, pid_t tid, struct seccomp_dump *sd, uint32_t *ret_id)
{
	struct seccomp_prog *chain = calloc(SECCOMP_MAX_CHAIN + 1, sizeof(*chain));
	size_t n = 0;
	int err = 0;

	if (!chain)
		return -ENOMEM;
	while (!err && n <= SECCOMP_MAX_CHAIN) {
		err = get_filter(pid, tid, (long)n, &chain[n]);
		if (!err)
			n++;
	}
	if (!err) {
		pr_err("task %d/%d: more than %d seccomp filters\n", pid, tid, SECCOMP_MAX_CHAIN);
		err = -E2BIG;
	} else if (err == 1 && !n) {
		pr_err("task %d/%d: seccomp filter mode without a filter\n", pid, tid);
		err = -EINVAL;
	}
	if (err == 1)
		err = seccomp_add_chain(sd, chain, n, ret_id);
	chain_free(chain, SECCOMP_MAX_CHAIN + 1);
	return err;
}

struct chain_args {
	pid_t pid;
	struct seccomp_dump *sd;
	uint32_t *ret_id;
};

static int chain_stopped(pid_t tid, void *arg)
{
	struct chain_args *c = arg;

	return dump_chain(c->pid, tid, c->sd, c->ret_id);
}

static const SeccompMode modes[] = {
	SECCOMP_MODE__SECCOMP_DISABLED,
	SECCOMP_MODE__SECCOMP_STRICT,
	SECCOMP_MODE__SECCOMP_FILTER,
};

int seccomp_dump_task(struct parasite_ctl *ctl, pid_t pid, ThreadCoreEntry **th, size_t n,
		      TaskCoreEntry *tc, struct seccomp_dump *sd)
{
	size_t i;
	int err = 0, mode;

	tc->seccomp_mode = SECCOMP_MODE__SECCOMP_DISABLED;
	for (i = 0; !err && i < n; i++) {
		pid_t tid = (pid_t)th[i]->tid;

		/* read by the parasite in the thread (dump/core.c), else from its status */
		if (th[i]->has_seccomp_mode)
			mode = (int)th[i]->seccomp_mode;
		else
			err = thread_mode(pid, tid, &mode);
		if (err)
			break;
		th[i]->has_seccomp_mode = true;
		th[i]->seccomp_mode = modes[mode];
		if (i == 0)
			tc->seccomp_mode = modes[mode];
		if (mode == SECCOMP_MODE_FILTER) {
			struct chain_args c = { pid, sd, &th[i]->seccomp_filter };

			/* The leader runs the parasite: catch it in a ptrace stop first. */
			if (ctl && tid == pid)
				err = parasite_leader_stopped(ctl, chain_stopped, &c);
			else
				err = dump_chain(pid, tid, sd, &th[i]->seccomp_filter);
			th[i]->has_seccomp_filter = !err;
		}
		if (!err && mode)
			pr_debug("task %d/%d: seccomp mode %d, newest filter %u\n", pid, tid, mode,
				 th[i]->seccomp_filter);
	}
	if (err)
		return err;
	if (sd->n) {
		sd->p = calloc(sd->n, sizeof(*sd->p));
		if (!sd->p)
			return -ENOMEM;
		for (i = 0; i < sd->n; i++)
			sd->p[i] = &sd->e[i];
	}
	tc->n_seccomp = sd->n;
	tc->seccomp = sd->p;
	return 0;
}

/* ---- restore -------------------------------------------------------------------------------- */

#ifndef SECCOMP_FILTER_FLAG_LOG
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1) /* 4.14 */
#endif

/* The kernel caps a chain at 32768 instructions, counting 4 more per filter. */
#define MAX_CHAIN 6554
#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

static int rst_thread_mode(const struct finish *f, const ThreadCoreEntry *tc, uint32_t *ret)
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

		err = rst_thread_mode(f, tc, &mode);
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

		err = rst_thread_mode(f, tc, &mode);
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
