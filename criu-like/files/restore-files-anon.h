/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_FILES_ANON_H
#define CRIU_LIKE_RESTORE_FILES_ANON_H

/*
 * Anonymous-inode files of a restore: eventfd, signalfd, timerfd, inotify
 * (restore-files-anon.c) and epoll (restore-files-epoll.c).
 */
#include <stddef.h>

#include "restore-files-int.h"

/* For the image check: 0 if @fe (of one of these types) has its part, else -EINVAL (logged). */
int rst_anonfd_check(const FileEntry *fe);

/* In the controller: a new description for file idx.by_id[@pos], or -errno (logged). */
int rst_anonfd_open(struct restore_ctx *ctx, size_t pos);

/* restore-files-epoll.c: the epoll description of file idx.by_id[@pos], without targets. */
int rst_epoll_open(struct restore_ctx *ctx, size_t pos);

/*
 * restore-files-epoll.c: in task @t, register every epoll target that is an
 * fd of @t, by that fd number (epoll keys registrations by it).
 */
int rst_epoll_register(struct restore_ctx *ctx, const struct rst_task *t);

/*
 * In task @t, once every fd is at its number (end of rst_files_install()):
 * register the epoll targets that are fds of @t, and arm every timerfd of which @t is the first holder (ctx->tasks order),
 * with its time left and its unread expirations. 0 or -errno (logged).
 */
int rst_timerfd_installed(struct restore_ctx *ctx, struct rst_task *t);

#endif
