/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_VMA_FAST_H
#define CRIU_LIKE_VMA_FAST_H

/*
 * What the dump takes from /proc/PID/smaps, without its walk of every page
 * table entry (about 10 ms of CPU per 256 MiB here, more for a forked child's
 * shared pages, and in the freeze): /proc/PID/maps for the layout, the BPF
 * task_vma iterator (vma-bpf.h) for each VMA's kernel flags, translated into
 * smaps' VmFlags bits (VMF_*), and one PAGEMAP_SCAN per private or
 * inaccessible VMA for the counters the dump looks at (resident or swapped
 * pages, anonymous ones, huge ones). proc/vma-fast.c; Documentation/memory.md.
 */
#include <stdbool.h>
#include <sys/types.h>

#include "proc-parse.h"
#include "vma-bpf.h"

/*
 * The VMF_* bits of the kernel's vm_flags @raw (pure). false when @raw holds
 * a bit the table does not know (a protection key, a seal, a newer flag):
 * the caller reads smaps then.
 */
bool vmf_from_raw(unsigned long raw, unsigned long *vmf);

/*
 * The table checked on this kernel: areas of ours given one flag each (by
 * mmap, madvise, mlock), their iterator flags translated against their
 * smaps VmFlags. 0 when every one agrees, -EPROTO (logged) when one does
 * not, -errno when the check could not run.
 */
int vma_fast_verify(struct vma_bpf *b);

/*
 * @pid's VMAs as smaps_read() gives them, the fields the dump uses filled
 * (has_smaps set; Rss and Swap are 0 or 4 and Anonymous and AnonHugePages 0
 * or 4 kB: whether there are some, not how many). -EAGAIN when smaps must be
 * read instead (a flag not translated, a hugetlb VMA, the two lists not the
 * same VMAs), else 0 or -errno.
 */
int vma_fast_read(struct vma_bpf *b, pid_t pid, struct vma_list *ret);

#endif
