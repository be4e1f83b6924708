// SPDX-License-Identifier: GPL-2.0
/*
 * Single syscalls injected into stopped threads through the vDSO
 * trampoline, without a parasite (compel_syscalls()), or with data passed
 * through the data area of the task's parasite (parasite_syscall_data()).
 */
#define LOG_PREFIX "infect: "
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infect.h"
#include "infect-int.h"
#include "log.h"
#include "util.h"

/* One thread's injected syscalls, step by step in compel_syscalls(). */
struct compel_thread {
	struct arch_thread_state ts;
	struct arch_injector inj;
	int err;
	bool saved, placed, running, restoring;
};

/* Syscall @k of every thread: started in each, then each one's stops taken. */
static void compel_step(struct compel_thread *b, const pid_t *tids, unsigned int n,
			struct compel_call *calls, unsigned int per, unsigned int k)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct compel_call *c = &calls[i * per + k];

		if (b[i].err || !b[i].placed || c->nr < 0)
			continue;
		b[i].err = arch_inject_syscall_start(&b[i].inj, c->nr, c->args);
		b[i].running = !b[i].err;
	}
	for (i = 0; i < n; i++) {
		struct compel_call *c = &calls[i * per + k];

		if (!b[i].running)
			continue;
		b[i].running = false;
		b[i].err = arch_inject_syscall_finish(&b[i].inj, c->nr, &c->ret);
		if (b[i].err)
			pr_err("injecting syscall %ld into %d failed: %d\n", c->nr, tids[i],
			       b[i].err);
	}
}

int compel_syscalls(const pid_t *tids, unsigned int n, struct compel_call *calls, unsigned int per)
{
	_cleanup_free_ struct compel_thread *b = calloc(n ? n : 1, sizeof(*b));
	unsigned int i, k;
	int err = 0, e;

	if (!b)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		b[i].err = arch_thread_save(tids[i], &b[i].ts);
		b[i].saved = !b[i].err;
		if (!b[i].err)
			b[i].err = arch_injector_init(&b[i].inj, &b[i].ts);
		b[i].placed = !b[i].err;
	}
	for (k = 0; k < per; k++)
		compel_step(b, tids, n, calls, per, k);
	/* every thread put back, even after a failure: as it was before the first call */
	for (i = 0; i < n; i++) {
		if (!b[i].saved)
			continue;
		e = arch_thread_restore_start(&b[i].ts);
		b[i].restoring = !e;
		b[i].err = b[i].err ?: e;
	}
	for (i = 0; i < n; i++) {
		e = b[i].restoring ? arch_thread_restore_finish(&b[i].ts) : 0;
		if (!e && b[i].placed)
			e = arch_injector_fini(&b[i].inj);
		b[i].err = b[i].err ?: e;
		if (b[i].saved)
			arch_thread_state_fini(&b[i].ts);
		err = err ?: b[i].err;
	}
	return err;
}

int compel_syscall(pid_t tid, long nr, const unsigned long args[6], long *ret)
{
	struct compel_call c = { .nr = nr };
	int err;

	memcpy(c.args, args, sizeof(c.args));
	err = compel_syscalls(&tid, 1, &c, 1);
	if (!err)
		*ret = c.ret;
	return err;
}

struct syscall_data_req {
	struct parasite_ctl *ctl;
	long nr;
	unsigned long args[6];
	long ret;
};

/*
 * compel_syscall() in a task whose parasite's injector holds the vDSO
 * trampoline already: the same trampoline is used and left in place (the
 * cure takes it away), never "put back" over it.
 */
static int syscall_data_stopped(pid_t tid, void *arg)
{
	struct syscall_data_req *r = arg;
	struct arch_thread_state ts;
	struct arch_injector inj;
	int err, err2;

	err = arch_thread_save(tid, &ts);
	if (err)
		return err;
	err = arch_injector_init(&inj, &ts);
	if (!err && inj.patched && r->ctl->inj_ready && inj.patch == r->ctl->inj.patch)
		inj.patched = false;
	if (!err)
		err = arch_inject_syscall(&inj, r->nr, r->args, &r->ret);
	err2 = arch_thread_restore(&ts);
	if (!err2)
		err2 = arch_injector_fini(&inj);
	arch_thread_state_fini(&ts);
	if (err)
		pr_err("injecting syscall %ld into %d failed: %d\n", r->nr, tid, err);
	return err ? err : err2;
}

int parasite_syscall_data(struct parasite_ctl *ctl, long nr, const unsigned long args[6],
			  unsigned int data_args, void *data, size_t size, long *ret)
{
	struct syscall_data_req r = { .ctl = ctl, .nr = nr };
	uint64_t remote = ctl->remote +
			  (uint64_t)((uint8_t *)((uint8_t *)ctl->args + ctl->args->data_off) -
				     ctl->local);
	unsigned int i;
	int err;

	if (size > ctl->args->data_size)
		return -E2BIG;
	err = ctl_settle(ctl);
	if (err)
		return err;
	memcpy(((uint8_t *)ctl->args + ctl->args->data_off), data, size);
	for (i = 0; i < 6; i++)
		r.args[i] = data_args & (1u << i) ? remote + args[i] : args[i];
	err = parasite_leader_stopped(ctl, syscall_data_stopped, &r);
	if (err)
		return err;
	memcpy(data, ((uint8_t *)ctl->args + ctl->args->data_off), size);
	*ret = r.ret;
	return 0;
}
