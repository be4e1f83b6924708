// SPDX-License-Identifier: GPL-2.0
/*
 * The shared anonymous and memfd objects of a dump (struct shmem_set): one
 * per object, whatever the tasks and addresses mapping it, with the pages
 * the scan found in each mapping and those only the object still holds.
 * See include/mem-scan.h and Documentation/memory.md.
 */
#define LOG_PREFIX "mem: "
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mem-int.h"
#include "mem-scan.h"
#include "util.h"

void shmem_set_fini(struct shmem_set *s)
{
	for (unsigned int i = 0; i < s->nr; i++)
		mem_runs_fini(&s->objs[i].runs);
	free(s->objs);
	*s = (struct shmem_set){ 0 };
}

struct shmem_obj *shmem_set_find(struct shmem_set *s, unsigned int dev_major,
				 unsigned int dev_minor, unsigned long ino)
{
	for (unsigned int i = 0; i < s->nr; i++) {
		struct shmem_obj *o = &s->objs[i];

		if (o->ino == ino && o->dev_major == dev_major && o->dev_minor == dev_minor)
			return o;
	}
	return NULL;
}

static struct shmem_obj *shmem_get(struct shmem_set *s, pid_t pid, const struct vma_entry *v)
{
	struct shmem_obj *o = shmem_set_find(s, v->dev_major, v->dev_minor, v->ino);

	if (o)
		return o;
	if (s->nr == s->cap) {
		unsigned int cap = s->cap ? s->cap * 2 : 8;
		struct shmem_obj *n = reallocarray(s->objs, cap, sizeof(*n));

		if (!n)
			return NULL;
		s->objs = n;
		s->cap = cap;
	}
	o = &s->objs[s->nr++];
	*o = (struct shmem_obj){ .dev_major = v->dev_major,
				 .dev_minor = v->dev_minor,
				 .ino = v->ino,
				 .pid = pid,
				 .vma_start = v->start,
				 .vma_end = v->end,
				 .huge = v->vm_flags & VMF_HT ? v->kernel_page_size * 1024 : 0 };
	return o;
}

int shmem_set_add(struct shmem_set *s, pid_t pid, const struct vma_entry *v,
		  const struct mem_runs *found)
{
	struct shmem_obj *o = shmem_get(s, pid, v);
	unsigned long base = v->pgoff >> PAGE_SHIFT;

	if (!o)
		return -ENOMEM;
	o->size = max(o->size, v->pgoff + (v->end - v->start));
	for (unsigned int i = 0; i < found->nr; i++) {
		const struct mem_run *m = &found->runs[i];
		int err = mem_runs_push(&o->runs, base + ((m->start - v->start) >> PAGE_SHIFT),
					m->nr_pages, MEM_SAVE_SHMEM);

		if (err)
			return err;
	}
	mem_runs_normalize_pages(&o->runs);
	return 0;
}

/*
 * Pages of the object that no scanned task has in its page tables: swapped
 * out shmem pages (their PTEs are gone, the swap entry lives in the object),
 * or pages written by a task that unmapped them. shmem answers SEEK_DATA with
 * every page it holds, resident or in swap (3.8 for tmpfs lseek).
 */
static int shmem_seek_data(struct shmem_obj *o)
{
	char path[96];
	_cleanup_close_ int fd = -1;
	off_t data = 0, hole;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", o->pid, o->vma_start,
		 o->vma_end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = neg_errno();

		pr_perror("shmem %u:%u ino %lu: open %s", o->dev_major, o->dev_minor, o->ino, path);
		return err;
	}
	while ((unsigned long)data < o->size) {
		int err;

		data = lseek(fd, data, SEEK_DATA);
		if (data < 0)
			return errno == ENXIO ? 0 : neg_errno(); /* ENXIO: no data after */
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return neg_errno();
		hole = min((unsigned long)hole, PAGE_ALIGN(o->size));
		if (hole <= data)
			break;
		err = mem_runs_push(&o->runs, data >> PAGE_SHIFT, (hole - data) >> PAGE_SHIFT,
				    MEM_SAVE_SHMEM);
		if (err)
			return err;
		data = hole;
	}
	return 0;
}

int shmem_set_add_unmapped(struct shmem_set *s)
{
	for (unsigned int i = 0; i < s->nr; i++) {
		/* hugetlbfs has no SEEK_DATA: its pages are found by reading them (mem.c) */
		int err = s->objs[i].huge ? 0 : shmem_seek_data(&s->objs[i]);

		if (err)
			return err;
		mem_runs_normalize_pages(&s->objs[i].runs);
	}
	return 0;
}
