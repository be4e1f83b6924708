// SPDX-License-Identifier: GPL-2.0
/*
 * Open files of the tree: the fd table of every process (fdinfo-PID.img)
 * and every open file description once (files.img), shared descriptions
 * found with kcmp(KCMP_FILE) among those on the same inode. Each kind of
 * file has its own file behind a struct file_ops (files-int.h). The tasks
 * are only read: their fds are duplicated into the dumper by the parasite.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files-int.h"
#include "image.h"
#include "log.h"
#include "util.h"

static unsigned int ft_hash(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev << 32) ^ (dev >> 32)) * 0x9E3779B97F4A7C15ull;

	return (unsigned int)(h >> (64 - FT_HASH_BITS));
}

struct file_table *file_table_get(struct dump_ctx *ctx)
{
	if (!ctx->files)
		ctx->files = calloc(1, sizeof(*ctx->files));
	return ctx->files;
}

struct file_desc *file_desc_new(struct file_table *ft, uint64_t dev, uint64_t ino)
{
	struct file_desc *d;
	unsigned int h;

	if (ft->nr == ft->cap) {
		unsigned int cap = ft->cap ? ft->cap * 2 : 64;
		struct file_desc **n = realloc(ft->descs, cap * sizeof(*n));

		if (!n)
			return NULL;
		ft->descs = n;
		ft->cap = cap;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	file_entry__init(&d->fe);
	d->id = ft->nr + 1; /* 0 is never a file id */
	d->fe.id = d->id;
	d->dev = dev;
	d->ino = ino;
	h = ft_hash(dev, ino);
	d->hnext = ft->hash[h];
	ft->hash[h] = d;
	ft->descs[ft->nr++] = d;
	return d;
}

struct file_desc *file_desc_next(struct file_table *ft, uint64_t dev, uint64_t ino,
				 struct file_desc *from)
{
	struct file_desc *d = from ? from->hnext : ft->hash[ft_hash(dev, ino)];

	for (; d; d = d->hnext)
		if (d->dev == dev && d->ino == ino)
			return d;
	return NULL;
}

void file_table_free(struct file_table *ft)
{
	unsigned int i;

	if (!ft)
		return;
	for (i = 0; i < ft->nr; i++) {
		free(ft->descs[i]->path);
		free(ft->descs[i]);
	}
	for (i = 0; i < ft->nr_pipes; i++)
		free(ft->pipes[i].data);
	free(ft->descs);
	free(ft->pipes);
	free(ft);
}

static int write_files_img(struct dump_ctx *ctx, struct file_table *ft)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_FILES, 0, IMG_WRITE);
	unsigned int i;
	int err = 0;

	if (!img)
		return -errno;
	for (i = 0; i < ft->nr && !err; i++)
		err = img_write_record(img, &ft->descs[i]->fe.base);
	return img_close(img) ?: err;
}

static int write_pipes_img(struct dump_ctx *ctx, struct file_table *ft)
{
	struct cr_img *img = img_open(ctx->dirfd, CR_IMG_PIPES_DATA, 0, IMG_WRITE);
	unsigned int i;
	int err = 0;

	if (!img)
		return -errno;
	for (i = 0; i < ft->nr_pipes && !err; i++) {
		PipeDataEntry e = PIPE_DATA_ENTRY__INIT;

		e.pipe_ino = ft->pipes[i].ino;
		e.data.data = ft->pipes[i].data;
		e.data.len = ft->pipes[i].len;
		e.has_pipe_size = true;
		e.pipe_size = ft->pipes[i].pipe_size;
		err = img_write_record(img, &e.base);
	}
	return img_close(img) ?: err;
}

int dump_files_finish(struct dump_ctx *ctx)
{
	struct file_table *ft = file_table_get(ctx);
	int err;

	if (!ft)
		return -ENOMEM;
	err = write_files_img(ctx, ft);
	if (!err)
		err = write_pipes_img(ctx, ft);
	if (err)
		pr_errno(err, "cannot write files.img / pipes-data.img");
	else
		pr_info("%u open files, %u pipes\n", ft->nr, ft->nr_pipes);
	return err;
}
