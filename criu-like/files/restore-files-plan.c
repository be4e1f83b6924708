// SPDX-License-Identifier: GPL-2.0
/*
 * The plan of the files of a restore: files.img indexed by id, each task's
 * fd table sorted and checked, and the first service fd number. Pure logic
 * over image records, so every refusal is unit-tested.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#define LOG_PREFIX "restore-files: "
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

static int cmp_file_id(const void *a, const void *b)
{
	uint32_t x = (*(FileEntry *const *)a)->id, y = (*(FileEntry *const *)b)->id;

	return x < y ? -1 : x > y;
}

int rst_file_part_missing(const FileEntry *fe)
{
	pr_err("files.img: file %u lacks the description of its type %d\n", fe->id, fe->type);
	return -EINVAL;
}

/* The part of FileEntry its type needs (the reader must never dereference a missing one). */
static int check_file_entry(const FileEntry *fe)
{
	const struct file_kind *k = file_kind_of_type(fe->type);

	if (!k) {
		pr_err("files.img: file %u has unknown type %d\n", fe->id, fe->type);
		return -EINVAL;
	}
	return k->check(fe);
}

int rst_file_index_build(struct rst_file_index *idx, FileEntry **fes, size_t n)
{
	size_t i;
	int err;

	idx->n = 0;
	idx->by_id = NULL;
	for (i = 0; i < n; i++) {
		err = check_file_entry(fes[i]);
		if (err)
			return err;
	}
	idx->by_id = malloc((n ? n : 1) * sizeof(*idx->by_id));
	if (!idx->by_id)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		idx->by_id[i] = fes[i];
	qsort(idx->by_id, n, sizeof(*idx->by_id), cmp_file_id);
	for (i = 1; i < n; i++) {
		if (idx->by_id[i]->id == idx->by_id[i - 1]->id) {
			pr_err("files.img: file id %u appears twice\n", idx->by_id[i]->id);
			rst_file_index_free(idx);
			return -EINVAL;
		}
	}
	idx->n = n;
	return 0;
}

void rst_file_index_free(struct rst_file_index *idx)
{
	free(idx->by_id);
	idx->by_id = NULL;
	idx->n = 0;
}

long rst_file_index_pos(const struct rst_file_index *idx, uint32_t id)
{
	size_t lo = 0, hi = idx->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t mid_id = idx->by_id[mid]->id;

		if (mid_id == id)
			return (long)mid;
		if (mid_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

FileEntry *rst_file_index_find(const struct rst_file_index *idx, uint32_t id)
{
	long pos = rst_file_index_pos(idx, id);

	return pos >= 0 ? idx->by_id[pos] : NULL;
}

static int cmp_fd(const void *a, const void *b)
{
	uint32_t x = (*(FdEntry *const *)a)->fd, y = (*(FdEntry *const *)b)->fd;

	return x < y ? -1 : x > y;
}

int rst_fd_plan_check(struct rst_task_files *tf, const struct rst_file_index *idx, pid_t pid)
{
	size_t i;

	qsort(tf->fds, tf->nr_fds, sizeof(*tf->fds), cmp_fd);
	for (i = 0; i < tf->nr_fds; i++) {
		const FdEntry *fd = tf->fds[i];

		if (fd->fd > INT_MAX / 2) {
			pr_err("fdinfo-%d.img: fd %u is out of range\n", pid, fd->fd);
			return -EINVAL;
		}
		if (i && fd->fd == tf->fds[i - 1]->fd) {
			pr_err("fdinfo-%d.img: fd %u appears twice\n", pid, fd->fd);
			return -EINVAL;
		}
		if (!rst_file_index_find(idx, fd->id)) {
			pr_err("fdinfo-%d.img: fd %u refers to file %u, which files.img lacks\n",
			       pid, fd->fd, fd->id);
			return -EINVAL;
		}
	}
	return 0;
}

int rst_service_fd_base(const struct restore_ctx *ctx)
{
	int base = 3;
	unsigned int i;

	for (i = 0; i < ctx->nr_tasks; i++) {
		const struct rst_task_files *tf = ctx->tasks[i].files;

		if (tf && tf->nr_fds)
			base = max(base, (int)tf->fds[tf->nr_fds - 1]->fd + 1);
	}
	return base;
}
