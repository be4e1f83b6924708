// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes of a restore: one pipe2() per pipe inode, grown to its saved size and
 * refilled with its unread data before any task runs. The first description
 * of each end is that end; a second description of the same end (an open of
 * /proc/PID/fd/N) is a reopen through /proc/self/fd, a description of its
 * own on the same pipe, as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_PREFIX "restore-files: "
#include "log.h"
#include "restore-files-int.h"
#include "util.h"

/* Status flags F_SETFL can give a pipe end. */
#define PIPE_FL (O_NONBLOCK | O_DIRECT)

static const PipeDataEntry *pipe_data(const struct rst_files *f, uint64_t ino)
{
	size_t i;

	for (i = 0; i < f->nr_pipe_recs; i++) {
		const PipeDataEntry *pd = (const PipeDataEntry *)f->pipe_recs[i];

		if (pd->pipe_ino == ino)
			return pd;
	}
	return NULL;
}

static int fill_pipe(struct rst_pipe *p, const PipeDataEntry *pd)
{
	int size = fcntl(p->ends[1], F_GETPIPE_SZ);
	ssize_t n;

	/* Past /proc/sys/fs/pipe-max-size this needs CAP_SYS_RESOURCE (EPERM). */
	if (pd->has_pipe_size && size >= 0 && pd->pipe_size > (uint32_t)size &&
	    fcntl(p->ends[1], F_SETPIPE_SZ, (int)pd->pipe_size) < 0) {
		pr_perror("pipe %llu: cannot grow to %u bytes", (unsigned long long)p->ino,
			  pd->pipe_size);
		return neg_errno();
	}
	if (!pd->data.len)
		return 0;
	/* The end is non-blocking: data larger than the pipe fails instead of hanging. */
	n = write(p->ends[1], pd->data.data, pd->data.len);
	if (n != (ssize_t)pd->data.len) {
		if (n < 0)
			pr_perror("pipe %llu: cannot refill %zu bytes", (unsigned long long)p->ino,
				  pd->data.len);
		else
			pr_err("pipe %llu: only %zd of its %zu bytes fit\n",
			       (unsigned long long)p->ino, n, pd->data.len);
		return n < 0 ? neg_errno() : -EFBIG;
	}
	return 0;
}

static int new_pipe(struct rst_files *f, uint64_t ino, struct rst_pipe **ret)
{
	struct rst_pipe *p, *arr;
	const PipeDataEntry *pd;
	int err;

	arr = realloc(f->pipes, (f->nr_pipes + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	f->pipes = arr;
	p = &arr[f->nr_pipes];
	memset(p, 0, sizeof(*p));
	p->ino = ino;
	if (pipe2(p->ends, O_CLOEXEC | O_NONBLOCK)) {
		pr_perror("pipe %llu: pipe2", (unsigned long long)ino);
		return neg_errno();
	}
	f->nr_pipes++;
	pd = pipe_data(f, ino);
	if (pd) {
		err = fill_pipe(p, pd);
		if (err)
			return err;
	}
	*ret = p;
	return 0;
}

int rst_pipe_open(struct restore_ctx *ctx, size_t pos)
{
	struct rst_files *f = ctx->files;
	const PipeFileEntry *pe = f->idx.by_id[pos]->pipe;
	struct rst_pipe *p = NULL;
	int acc = (int)(pe->flags & O_ACCMODE), end, fd, err;
	size_t i;

	for (i = 0; i < f->nr_pipes && !p; i++)
		if (f->pipes[i].ino == pe->pipe_ino)
			p = &f->pipes[i];
	if (!p) {
		err = new_pipe(f, pe->pipe_ino, &p);
		if (err)
			return err;
	}
	end = acc == O_RDONLY ? 0 : 1;
	if (acc == O_RDWR || p->taken[end])
		return rst_reopen_fd(p->ends[end], pe->flags);
	fd = fcntl(p->ends[end], F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || fcntl(fd, F_SETFL, (int)pe->flags & PIPE_FL) < 0) {
		err = neg_errno();
		if (fd >= 0)
			close(fd);
		return err;
	}
	p->taken[end] = true;
	return fd;
}

void rst_pipes_close(struct rst_files *f)
{
	size_t i;

	for (i = 0; i < f->nr_pipes; i++) {
		close(f->pipes[i].ends[0]);
		close(f->pipes[i].ends[1]);
	}
	free(f->pipes);
	f->pipes = NULL;
	f->nr_pipes = 0;
}
