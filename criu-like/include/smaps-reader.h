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
#include <stdint.h>
#include <sys/types.h>

#include "proc-parse.h"

/*
 * Read it, drop the VMAs inside each of the @nskip ranges [@skip[2k],
 * @skip[2k + 1]) (the task's parasite area: a dump refuses tasks that
 * share their memory, CLONE_VM, so no other's is there) and hand the list
 * over in @ret. 0 or -errno.
 */
int smaps_read(pid_t pid, const unsigned long *skip, unsigned int nskip, struct vma_list *ret);

/*
 * From now on smaps_read() takes what the dump needs of smaps from maps, the
 * iterator @b and PAGEMAP_SCAN (vma-fast.h), and reads smaps only for a task
 * whose VMAs need it; NULL: smaps again. @b stays open until then.
 */
struct vma_bpf;
void smaps_fast_use(struct vma_bpf *b);

/*
 * The smaps of @n tasks that nothing changes meanwhile (frozen), read side
 * by side by up to one thread per CPU, the caller one of them: a forked
 * child's walk is slow on the pages it shares (every page's mapcount is
 * looked at), about 10 ms per 256 MiB here. @rets[i] and @errs[i] (0 or
 * -errno) for @pids[i]; @us[i] the time its read took, in microseconds.
 */
void smaps_read_many(const pid_t *pids, unsigned int n, struct vma_list *rets, int *errs,
		     uint64_t *us);

/*
 * The same, in background threads, list i without [@skip[2i], @skip[2i + 1])
 * (NULL: nothing dropped): the arrays must stay until smaps_read_wait(), which
 * joins them and frees the job; @then (NULL: none) is called in the thread
 * after each list is read or has failed (@errs[i]), with its index and @arg.
 * NULL with errno set when there is no memory for it (no thread runs then).
 * smaps_read_cancel(): no task is taken from then on (the ones taken end).
 * smaps_read_threads(): how many threads read (0: smaps_read_wait() reads all).
 */
struct smaps_job;
struct smaps_job *smaps_read_start(const pid_t *pids, unsigned int n, const unsigned long *skip,
				   struct vma_list *rets, int *errs, uint64_t *us,
				   void (*then)(unsigned int i, void *arg), void *arg);
void smaps_read_cancel(struct smaps_job *j);
unsigned int smaps_read_threads(const struct smaps_job *j);
void smaps_read_wait(struct smaps_job *j);

/*
 * The same VMAs, range by range (start, end, protection, sharing, kind,
 * device, inode, offset), in @a and @b: pure, for the check above.
 */
bool vma_layout_same(const struct vma_list *a, const struct vma_list *b);

#endif
