/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_SMAPS_READER_H
#define CRIU_LIKE_SMAPS_READER_H

/*
 * /proc/PID/smaps read after the infection (proc/smaps-reader.c): at 2 GiB
 * the read walks every page table entry (20 ms of CPU here), which
 * --snapshot overlaps with the write protection armed in the background.
 * The VmFlags are only in smaps; the layout is checked against
 * /proc/PID/maps read before the infection (cheap, no page walk), so that
 * what the infection added (the parasite's area) and nothing else differs.
 */
#include <stdbool.h>
#include <sys/types.h>

#include "proc-parse.h"

/*
 * Read it, drop the VMAs inside [@skip_start, @skip_end) (the parasite's
 * area; 0, 0 for none) and hand the list over in @ret. 0 or -errno.
 */
int smaps_read(pid_t pid, unsigned long skip_start, unsigned long skip_end, struct vma_list *ret);

/*
 * The smaps of @n tasks that nothing changes meanwhile (frozen, before
 * their infection), read side by side by up to one thread per CPU: a
 * forked child's walk is slow on the pages it shares (every page's
 * mapcount is looked at), about 10 ms per 256 MiB here. @rets[i] and
 * @errs[i] (0 or -errno) for @pids[i]; @us[i] the time its read took, in
 * microseconds.
 */
void smaps_read_many(const pid_t *pids, unsigned int n, struct vma_list *rets, int *errs,
		     uint64_t *us);

/*
 * The same VMAs, range by range (start, end, protection, sharing, kind,
 * device, inode, offset), in @a and @b: pure, for the check above.
 */
bool vma_layout_same(const struct vma_list *a, const struct vma_list *b);

#endif
