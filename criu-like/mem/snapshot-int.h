/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_SNAPSHOT_INT_H
#define CRIU_LIKE_SNAPSHOT_INT_H

/*
 * What snapshot.c (the freeze, the fault handler, the copy) and
 * snapshot-prearm.c (the arming before the freeze) share.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "proc-parse.h"
#include "snapshot.h"
#include "uffd-wp.h"
#include "util.h"
#include "vma-bpf.h"

struct cr_img;

struct snap_task {
	struct dump_task *dt;
	pid_t pid;
	struct snap_layout lay;
	uint8_t *state; /* SNAP_*, per image page (under lock) */
	uint32_t *crcs; /* per run */
	bool *deferred; /* per run: copied after the tree runs */
	uint32_t pages_id;
	struct cr_img *img;
	int img_fd, rd_fd, mem_fd, pm_fd, uffd; /* rd_fd: the pages image, to read back */
	pthread_mutex_t lock;
	uint64_t faulted; /* pages saved by the handler (under lock) */
	int err; /* the handler's first error for this task (under lock) */
	/* armed early (snapshot_task_early_arm()): the ranges, and their protection */
	struct iovec *early;
	unsigned int nr_early;
	struct uffd_wp_job job;
	bool job_running;
	bool laid_out; /* the layout is known (under lock); before, faulted pages go aside: */
	struct early_page *epages; /* under lock */
	unsigned int nr_epages;
	/*
	 * Armed before the freeze (snapshot-prearm.c). @pre: an entry of
	 * snapshot.pre, whose uffd the handler serves by un-protecting only
	 * until a task of the frozen tree adopts it (@adopted, under lock:
	 * from then its faults are the adopter's). @prearmed: a task of the
	 * frozen tree holding such a uffd (the fd is the entry's).
	 */
	bool pre, prearmed;
	struct snap_task *adopted;
	unsigned long ident[11]; /* @pre: /proc/PID/stat's address space fields at the arming */
	/*
	 * @pre: smaps read once armed, the tree running, and the VMAs' kernel
	 * flags (vma-bpf.h) as they were before and after that read (the same,
	 * else nothing is kept): the freeze takes that smaps if the flags and
	 * the layout are still the same (snapshot_task_vmas()).
	 */
	struct vma_list smaps;
	struct vma_raw *raw;
	unsigned int nr_raw;
};

/* A page saved by a write fault before the task's layout was known. */
struct early_page {
	unsigned long addr;
	uint8_t data[PAGE_SIZE];
};

struct snapshot {
	unsigned int nr;
	struct snap_task *t; /* same order as ctx->tasks; pid 0: no memory */
	int devfd; /* /dev/userfaultfd, or -2: userfaultfd() in the task */
	int stopfd; /* eventfd: the handler exits */
	int epfd; /* the handler waits on every uffd and on stopfd */
	pthread_t th;
	bool th_running;
	uint64_t faults; /* fault messages (handler only) */
	/* armed before the freeze (snapshot-prearm.c): stable, freed by snapshot_fini() */
	struct snap_task *pre;
	unsigned int nr_pre;
	uint64_t pre_faults; /* faults un-protected before the freeze (handler only) */
	struct vma_bpf *bpf; /* the VMA flags' iterator, NULL: none (smaps read frozen) */
};

/* Un-protect [@addr, +@len), which wakes the threads waiting there; at least wake them. */
void snap_unprotect(struct snap_task *t, unsigned long addr, unsigned long len);
/* Append [@start, @end) to @iov[0..*@n), joined with the last range when they touch. */
void snap_push_range(struct iovec *iov, unsigned int *n, unsigned long start, unsigned long end);
/* A private anonymous VMA as /proc/PID/maps shows it: what the plan will likely protect. */
bool snap_early_candidate(const struct vma_entry *v);
/* Add @t's uffd to the handler's epoll. 0 or -errno. */
int snap_watch(struct snapshot *s, struct snap_task *t);
/* The snapshot's state of @dt. */
struct snap_task *snap_task_of(struct dump_ctx *ctx, struct dump_task *dt);
/* No fd, its lock made. */
void snap_task_init(struct snap_task *t);

/*
 * snapshot-prearm.c. snap_adopt(): the tree frozen, each task of it that
 * was armed before, with the same address space, takes that uffd (and opens
 * its /proc/PID/mem: a fault saves the page aside from then on).
 * snap_rearm(): the task infected, @maps read before: register what is new,
 * what reads as written is protected again by snap_rearm_finish(). On failure the
 * adoption is undone and the caller arms the task itself. 0 or -errno.
 */
void snap_adopt(struct dump_ctx *ctx);
int snap_rearm(struct dump_ctx *ctx, struct snap_task *t, const struct vma_list *maps);
/* The plan known: protect again what it found unprotected (a task not armed before: 0). */
int snap_rearm_finish(struct snap_task *t);

#endif
