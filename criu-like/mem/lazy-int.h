/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_LAZY_INT_H
#define CRIU_LIKE_LAZY_INT_H

/* Between the lazy-pages daemon (lazy-pages.c) and its guard (lazy-guard.c). */
#include <stdint.h>
#include <sys/types.h>

enum lazy_guard_type {
	LAZY_GUARD_ADD = 1, /* SCM_RIGHTS: the uffd, then the pidfd (none for a forked child) */
	LAZY_GUARD_DONE, /* task @id has every page: the uffd copy goes */
	LAZY_GUARD_EXIT, /* all done: exit without killing anything */
};

struct lazy_guard_msg {
	uint32_t type;
	uint32_t id;
	int32_t pid;
	int32_t pad;
};

int lazy_guard_start(pid_t *ret_pid, int *ret_sk);
int lazy_guard_send(int sk, uint32_t type, uint32_t id, pid_t pid, int uffd, int pidfd);
/* SIGSTOP @pid, SIGKILL its descendants, then it. */
void lazy_kill_task(pid_t pid, int pidfd);

#endif
