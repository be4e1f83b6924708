/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_TRACK_H
#define CRIU_LIKE_TRACK_H

/*
 * Write tracking between the rounds of a pre-dump chain (mem/track.c,
 * Documentation/memory.md section 3): the userfaultfds (WP_ASYNC) created
 * inside each task by the parasite, and the keeper process that holds them
 * from one criu-like run to the next.
 */
#include <stdbool.h>
#include <sys/types.h>

struct dump_task;

struct iovec;

struct track_entry {
	pid_t pid; /* the task whose mm the uffd tracks */
	int fd; /* the uffd, in this process */
	/* registered, to protect before they are copied (track_protect_pending()) */
	struct iovec *pending;
	unsigned int nr_pending;
};

struct track_set {
	unsigned int nr;
	struct track_entry *e;
};

void track_set_fini(struct track_set *s);

/*
 * Register and write-protect the private VMAs of @dt that save pages (all
 * of them, or only those marked in @untracked) with a new uffd made in the
 * task, added to @s. The task must be infected and frozen. 0 or -errno.
 * @defer (pre-dump, whose pages are copied once the tree runs again): the
 * private anonymous VMAs are only registered, and the pages of their runs
 * (@dt's plan, what the round copies) are left to track_protect_pending():
 * each page is then protected before it is copied, which is all a round
 * needs (a write before the protection is in the copy, one after is reported
 * written next round), and a page faulted in after the freeze is not
 * protected, so reported written. File-backed private VMAs are protected
 * whole at once, by the dumper.
 */
int track_arm(struct dump_task *dt, const bool *untracked, struct track_set *s, bool defer);

/*
 * Protect every entry's pending ranges (the tree may run). An entry whose
 * address space ended since the freeze (its task exited or exec'd: the
 * uffd answers ESRCH) leaves the set and @gone(@arg, pid) is called: its
 * pages are of no use to a later round. 0 or -errno.
 */
int track_protect_pending(struct track_set *s, void (*gone)(void *arg, pid_t pid), void *arg);

/*
 * How long a keeper holds the tracking when no round takes it over: past
 * that it exits (the tasks' memory is unprotected, the next round saves
 * everything). It exits before when every tracked task has exited.
 */
#define TRACK_KEEPER_TIMEOUT_S 3600

/*
 * Hand @s to a new keeper process bound to the image directory @dirfd
 * (@name: its name for ps), emptied on success: the keeper owns the uffds.
 * 0 or -errno.
 */
int track_keeper_spawn(int dirfd, const char *name, struct track_set *s);

/*
 * Take over the uffds kept for the image directory @prev_dirfd (the keeper
 * exits). No keeper, or one that answers badly: a warning naming
 * @prev_name, and 0 with @s empty (every page will be saved).
 */
int track_keeper_take(int prev_dirfd, const char *prev_name, struct track_set *s);

#endif
