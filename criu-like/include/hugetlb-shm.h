/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_HUGETLB_SHM_H
#define CRIU_LIKE_HUGETLB_SHM_H

/*
 * Shared hugetlb memory (MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB) at dump:
 * hugetlbfs has neither SEEK_DATA nor splice, so its pages are found and read
 * with pread (Documentation/memory.md, "Shared hugetlb memory").
 */
#include "mem-scan.h"

/*
 * Read the @size bytes hugetlbfs object @fd in huge pages of @huge bytes:
 * every huge page that is not all zeros goes into *@runs (object offsets in
 * 4 KiB pages, merged) and is copied at its offset into a new memfd, *@copy,
 * which can be spliced as the object could not. A page never touched reads
 * as zeros, as does one only zeroed: neither is saved (the restore leaves it
 * unallocated, which reads the same).
 */
int hugetlb_shm_read(int fd, unsigned long size, unsigned long huge, struct mem_runs *runs,
		     int *copy);

#endif
