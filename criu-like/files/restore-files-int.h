/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_FILES_INT_H
#define CRIU_LIKE_RESTORE_FILES_INT_H

/* The files of a restore (restore-files.c), shared with the kinds' restore halves. */
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

#endif
