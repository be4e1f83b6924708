/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_VMAS_AHEAD_H
#define CRIU_LIKE_VMAS_AHEAD_H

/*
 * The smaps of a tree read while it runs, just before its freeze, so that
 * the freeze does not walk every page table entry (/proc/PID/smaps: 40-50 ms
 * for redis at 1 GiB here): a migration's rounds (mem/vmas-ahead.c,
 * Documentation/migration.md). In the freeze, a task's list is used only if
 * its VMAs are still those of the read: their kernel flags (a BPF task_vma
 * iterator, proc/vma-bpf.c) the same before the read, after it and in the
 * freeze, and its /proc/PID/maps (ranges, protections, files, names) the same.
 */
#include <stdbool.h>
#include <sys/types.h>

#include "proc-parse.h"

struct vmas_ahead;

/*
 * The smaps of the tasks @pids[0..@n), read now. NULL when there is no BPF
 * VMA iterator or no memory: smaps is then read in the freeze, as without.
 */
struct vmas_ahead *vmas_ahead_read(const pid_t *pids, unsigned int n);
/*
 * In the freeze, before the infection: @pid's smaps as read ahead into @ret
 * (given to the caller) when its VMAs have not changed since; -ENOENT (not
 * read ahead), -ESTALE (changed) or -errno otherwise: the caller reads smaps.
 */
int vmas_ahead_take(struct vmas_ahead *a, pid_t pid, struct vma_list *ret);
void vmas_ahead_free(struct vmas_ahead *a);

struct vma_raw;
/* The same VMAs with the same kernel flags, as two reads of the BPF iterator give them. */
bool vma_raw_same(const struct vma_raw *a, unsigned int na, const struct vma_raw *b,
		  unsigned int nb);
/* Does @l (smaps) hold the VMAs of @r, no more? [vsyscall] (not of the mm) aside. */
bool vma_raw_is_list(const struct vma_list *l, const struct vma_raw *r, unsigned int n);

/* Do @maps (read in the freeze) and @smaps (read ahead) name the same VMAs? (pure) */
bool vmas_ahead_same(const struct vma_list *maps, const struct vma_list *smaps);

#endif
