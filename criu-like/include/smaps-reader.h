/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_SMAPS_READER_H
#define CRIU_LIKE_SMAPS_READER_H

/*
 * /proc/PID/smaps read in a thread of its own (proc/smaps-reader.c): at 2 GiB
 * the read walks every page table entry (20 ms of CPU here) while the dumper
 * infects the task and arms its write protection. The VmFlags are only in
 * smaps; the layout is checked against /proc/PID/maps read before (cheap,
 * no page walk), so that what the infection added (the parasite's area) and
 * nothing else differs.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "proc-parse.h"

struct smaps_reader {
	pid_t pid;
	pthread_t th;
	bool started;
	int err;
	struct vma_list vmas;
};

/* Start reading; a thread that cannot start reads at join. 0 or -errno. */
int smaps_read_start(struct smaps_reader *r, pid_t pid);

/*
 * Wait for the list, drop the VMAs inside [@skip_start, @skip_end) (the
 * parasite's area; 0, 0 for none) and hand it over in @ret. 0 or -errno.
 */
int smaps_read_join(struct smaps_reader *r, unsigned long skip_start, unsigned long skip_end,
		    struct vma_list *ret);

/*
 * The same VMAs, range by range (start, end, protection, sharing, kind,
 * device, inode, offset), in @a and @b: pure, for the check above.
 */
bool vma_layout_same(const struct vma_list *a, const struct vma_list *b);

#endif
