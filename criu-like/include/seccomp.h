/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_SECCOMP_H
#define CRIU_LIKE_SECCOMP_H

/*
 * Seccomp state of a seized process (seccomp.c): the mode of every thread
 * and its filter chain, read with PTRACE_SECCOMP_GET_FILTER (4.4) and
 * PTRACE_SECCOMP_GET_METADATA (4.16). The filters go into the process's
 * TaskCoreEntry.seccomp, each distinct one once (chains shared by threads
 * are stored once); each ThreadCoreEntry names its newest filter.
 */
#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core.pb-c.h"
#include "proc-parse.h" /* seccomp_parse_status() */
#include "seize.h" /* seize_seccomp_options() */

struct parasite_ctl;

/* The filters of one process, owned by the struct: free with seccomp_dump_fini(). */
struct seccomp_dump {
	size_t n;
	SeccompFilterEntry *e;
	SeccompFilterEntry **p; /* what TaskCoreEntry.seccomp points to */
};

/* One filter of a chain as the kernel reports it. */
struct seccomp_prog {
	struct sock_filter *insns;
	size_t len;
	uint32_t flags;
};

/*
 * Fill the seccomp fields of @tc and of every @th (their tids must be seized
 * and stopped; @ctl, when not NULL, is the parasite the leader runs, and
 * the leader is caught in a ptrace stop for it): per-thread modes, the deduplicated filters. Refuses filters
 * that may return SECCOMP_RET_USER_NOTIF (their listener cannot be rebuilt)
 * and unknown modes, naming the pid. @sd backs the entries until the image
 * is written.
 */
int seccomp_dump_task(struct parasite_ctl *ctl, pid_t pid, ThreadCoreEntry **th, size_t n,
		      TaskCoreEntry *tc, struct seccomp_dump *sd);
void seccomp_dump_fini(struct seccomp_dump *sd);

/*
 * Add a chain, given oldest first, to @sd; the programs are copied. Sets
 * @ret_id to the 1-based index of its newest filter (0 for an empty chain).
 */
int seccomp_add_chain(struct seccomp_dump *sd, const struct seccomp_prog *chain, size_t n,
		      uint32_t *ret_id);

/* Whether a program may return SECCOMP_RET_USER_NOTIF (a constant one, or a computed one). */
bool seccomp_prog_may_notify(const struct sock_filter *insns, size_t len);

#endif
