/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_FILES_INT_H
#define CRIU_LIKE_RESTORE_FILES_INT_H

/* Shared by restore-files.c, restore-files-pipe.c and restore-files-ghost.c. */
#include <sys/socket.h>
#include <sys/un.h>

#include "restore/restore-int.h"
#include "kind.h"

/* One pipe, by inode: both ends, created once for every description of it. */
struct rst_pipe {
	uint64_t ino;
	int ends[2]; /* [0] read, [1] write; the controller's, until rst_pipes_close() */
	bool taken[2]; /* a description already is this end: others reopen it */
};

struct rst_files {
	ProtobufCMessage **file_recs; /* FileEntry */
	size_t nr_file_recs;
	ProtobufCMessage **pipe_recs; /* PipeDataEntry */
	size_t nr_pipe_recs;
	struct rst_file_index idx;
	const struct file_kind **kind_at; /* per idx position: its kind */
	struct rst_kind *kinds; /* per file_kinds[] entry: its descriptions and state */
	char **paths; /* per idx position: NUL-terminated path, or NULL */
	int *fds; /* per idx position: the description, a service fd, or -1 */
	struct rst_pipe *pipes;
	size_t nr_pipes;
	/* restore-files-unix.c: per position, USK_LATE_* (NULL until a unix socket is opened) */
	uint8_t *usk_late;
	int *usk_from; /* per position: the closed peer kept to refill its queue late, or -1 */
};

/* A unix socket whose queue has control data (fds in flight, credentials): refilled late. */
#define USK_LATE_RECV 1
/* A unix socket that sends into such a queue: its options and shutdown applied late too. */
#define USK_LATE_SEND 2

/* The description of pipe file idx.by_id[@pos] (an fd below the base), or -errno. */
int rst_pipe_open(struct restore_ctx *ctx, size_t pos);
/* Close the controller's own pipe ends (each description has its own fd). */
void rst_pipes_close(struct rst_files *f);
/* The unlinked file idx.by_id[@pos], rebuilt from ghost-ID.img, opened and unlinked again. */
int rst_ghost_open(struct restore_ctx *ctx, size_t pos);
/*
 * restore-files-unix.c: the unix socket idx.by_id[@pos], made with the sockets
 * it belongs with (those are parked at their own f->fds slot), or -errno.
 */
int rst_unix_open(struct restore_ctx *ctx, size_t pos);
/*
 * restore-files-unix-queue.c, once every description is open (before any
 * fork): refill the queues with control data, each message with its fds in
 * flight and credentials, then apply the options and shutdown state held
 * back; close the descriptions only in flight (no task holds them).
 */
int rst_unix_late(struct restore_ctx *ctx);
/* restore-files-unix.c, for the late refill */
const UnixSkEntry *usk_at(const struct rst_files *f, size_t pos);
uint32_t usk_id(const struct rst_files *f, size_t pos);
long usk_find(const struct rst_files *f, uint64_t ino);
/* The datagram socket bound to @name, or -1. */
long usk_find_named(const struct rst_files *f, const ProtobufCBinaryData *name);
int usk_addr(const ProtobufCBinaryData *name, struct sockaddr_un *sa, socklen_t *len);
int usk_set_sndbuf(int sk, int val);
/* Options, shutdown state and flags of the socket @sk of entry @e, once its queue is refilled. */
int usk_finish_now(int sk, const UnixSkEntry *e, uint32_t id);
/* Mark the sockets of late refills (f->usk_late), before the first unix socket is opened. */
int rst_unix_late_init(struct rst_files *f);
/* Close what the late refill kept, free the marks. */
void rst_unix_late_fini(struct rst_files *f);
/* restore-files-fanotify.c: the fanotify group idx.by_id[@pos], or -errno. */
int rst_fanotify_open(struct restore_ctx *ctx, size_t pos);
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
