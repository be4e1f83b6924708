/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_FILES_INT_H
#define CRIU_LIKE_RESTORE_FILES_INT_H

/* The files of a restore (restore-files.c), shared with the kinds' restore halves. */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "restore-files.h"
#include "kind.h"

struct rst_files {
	ProtobufCMessage **file_recs; /* FileEntry */
	size_t nr_file_recs;
	struct rst_file_index idx;
	const struct file_kind **kind_at; /* per idx position: its kind */
	struct rst_kind *kinds; /* per file_kinds[] entry: its descriptions and state */
	char **paths; /* per idx position: NUL-terminated path, or NULL */
	int *fds; /* per idx position: the description, a service fd, or -1 */
};

/*
 * Flags a description is reopened with: nothing that creates or truncates,
 * never inherited by exec.
 */
int rst_open_flags(uint32_t flags);
/*
 * open() that cannot block: a FIFO or a device put at the path since the dump
 * would wait for a peer. The caller checks the type, then drops O_NONBLOCK
 * with rst_drop_nonblock() unless the description had it (@flags).
 */
int rst_open_nonblock(const char *path, uint32_t flags);
int rst_drop_nonblock(int fd, uint32_t flags);
/* files.img: file @fe lacks the part its type needs (logged): -EINVAL. */
int rst_file_part_missing(const FileEntry *fe);
/* A new description of the file behind @fd, opened with @flags (O_CREAT etc. dropped). */
int rst_reopen_fd(int fd, uint32_t flags);
/*
 * Open @path, relative to /proc, through criu-like's own /proc while the
 * descriptions are opened (the tree's mount namespace may have none yet);
 * a /proc/sys/net file shows the network namespace the caller is in.
 */
FILE *rst_proc_fopen(const char *path);

/*
 * Descriptions that can only be opened once the whole tree exists (a pidfd,
 * a file of /proc/PID): the kind's open gives rst_late_placeholder() (an
 * eventfd, installed at the fd numbers like any description), and its
 * installed hook calls rst_late_install(), which in task @t, for each
 * description of kind @k that @late accepts (NULL: all), calls @open once
 * and dup3()s the new fd over every fd number of @t that names the
 * description, keeping each number's close-on-exec bit. A description shared
 * by several tasks becomes one per task. 0 or -errno, logged.
 */
int rst_late_placeholder(const struct restore_ctx *ctx, size_t pos);
/* A new fd (any number) for description idx.by_id[@pos], for @fd of @t; or -errno, logged. */
typedef int (*rst_late_open_fn)(struct restore_ctx *ctx, const struct rst_task *t,
				const FdEntry *fd, size_t pos);
int rst_late_install(struct restore_ctx *ctx, struct rst_task *t, const struct file_kind *k,
		     bool (*late)(const struct restore_ctx *ctx, size_t pos),
		     rst_late_open_fn reopen);

/*
 * fown.c: in the task @t, its fds in place: the owners, signals and O_ASYNC of
 * the descriptions it holds (FileEntry.fown), through its own fd numbers.
 */
int rst_fown_installed(struct restore_ctx *ctx, const struct rst_task *t);

#endif
