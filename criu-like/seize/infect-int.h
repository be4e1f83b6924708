// SPDX-License-Identifier: GPL-2.0
/*
 * Private to infect.c, infect-cure.c, infect-rpc.c and infect-syscall.c: the
 * parasite control block and the helpers they share.
 */
#ifndef CRIU_LIKE_INFECT_INT_H
#define CRIU_LIKE_INFECT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "infect.h"

struct parasite_ctl {
	pid_t pid;
	unsigned int nr_threads;
	struct arch_thread_state *ts; /* [nr_threads], ts[0] is the leader */
	struct parasite_thread_state *tstate; /* per-thread results */
	struct arch_injector inj;
	bool inj_ready;
	uint64_t remote; /* the area in the task */
	uint8_t *local; /* the same area in the dumper */
	size_t size;
	size_t args_off, thread_off, thread_size, frame_size;
	struct parasite_args *args; /* in local */
	int lsk, sk; /* listening and connected control socket */
	bool leader_running; /* the leader runs the command loop */
	/* parasite_prefetch_task(): a command sent ahead, its answer not read yet */
	struct parasite_msg pending;
	bool has_pending;
	/* GET_TASK's answer once read (NULL: ask each part by its own command) */
	struct parasite_task_state *task;
};

/* Copy the blob's log lines into ours, prefixed with the task, and empty the ring (infect.c). */
void drain_log(struct parasite_ctl *ctl);
/* Wait for @fd to be ready while watching the leader for stops (infect.c). */
int wait_fd(struct parasite_ctl *ctl, int fd);
/*
 * The hold of the thread mode (infect-hold.c): hold_arm() makes @ctl's
 * futex word owned by criu-like's holding thread (started on first use in
 * each process) and adds it to that thread's robust list, so that its
 * waiters are woken if criu-like dies; hold_disarm() takes it off the list
 * (before the area goes). 0 or -errno.
 */
int hold_arm(struct parasite_ctl *ctl);
void hold_disarm(struct parasite_ctl *ctl);
/* PTRACE_INTERRUPT the running leader and wait for the interrupt stop (infect-cure.c). */
int interrupt_leader(struct parasite_ctl *ctl);
/* Where @ctl's blob and its rt_sigreturn lie in the task, for arch_step_blob() (infect.c). */
struct arch_blob_range ctl_blob_range(const struct parasite_ctl *ctl);
/*
 * Send one command to the parasite, with the two fds @send_fds attached
 * unless NULL, and take its answer (infect-rpc.c).
 */
int ctl_cmd(struct parasite_ctl *ctl, struct parasite_msg *m, const int *send_fds, int *fds,
	    unsigned int n_fds);
/*
 * Read and drop the answer to a command sent ahead, if any: before any use
 * of the data area or stop of the leader outside ctl_cmd() (infect-rpc.c).
 */
int ctl_settle(struct parasite_ctl *ctl);
/* The two halves of ctl_cmd(): several parasites can work on their commands at once. */
int ctl_cmd_send(struct parasite_ctl *ctl, struct parasite_msg *m, const int *send_fds);
int ctl_cmd_recv(struct parasite_ctl *ctl, struct parasite_msg *m, int *fds, unsigned int n_fds);

#endif
