/* SPDX-License-Identifier: GPL-2.0 */
/* Private to the files of mem/ that plan and make the memory images of a dump. */
#ifndef CRIU_LIKE_MEM_INT_H
#define CRIU_LIKE_MEM_INT_H

#include <sys/types.h>

#include "mem-scan.h"

struct dump_ctx;
struct dump_task;

/*
 * mm-img.c: mm-PID.img of @dt (the mm fields, auxv, exe, every VMA of
 * dt->vmas with the policy of dt->plan, guard regions, AIO rings).
 */
int mm_img_write(struct dump_ctx *ctx, struct dump_task *dt);
/*
 * mem.c: @dt's /proc/PID/pagemap, opened at the first call and kept until
 * mem_task_pagemap_close(); a negative errno when it cannot be opened (logged).
 */
int mem_task_pagemap(struct dump_task *dt);
/* RssAnon of @pid in bytes (/proc/PID/status), 0 when unknown (pages-spare.c). */
uint64_t mem_rss_anon(pid_t pid);

/* mem-runs.c: add a run at the end of @r, not merged with the one before. */
int mem_runs_push(struct mem_runs *r, unsigned long start, unsigned long nr_pages,
		  enum mem_policy policy);
/* mem-runs.c: sort page-offset runs and merge the ones that overlap or touch (shmem objects). */
void mem_runs_normalize_pages(struct mem_runs *r);

/*
 * shmem-set.c: add the address runs @found of VMA @v of @pid (a shmem
 * mapping) to its object in @s, as object page offsets.
 */
int shmem_set_add(struct shmem_set *s, pid_t pid, const struct vma_entry *v,
		  const struct mem_runs *found);

#endif
