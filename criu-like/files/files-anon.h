/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_ANON_H
#define CRIU_LIKE_FILES_ANON_H

/*
 * Helpers shared by the anonymous-inode kinds of a dump: files-anon.c
 * (eventfd, signalfd, timerfd), files-epoll.c and files-inotify.c. Their
 * state is what /proc/PID/fdinfo/N shows.
 */
#include <stdbool.h>
#include <stddef.h>

#include "files-int.h"
#include "proc-parse.h"

/*
 * The fdinfo of @f in *@ret, which must say @kind; FDINFO_PLAIN is accepted
 * too when @plain_ok (an epoll without targets, an inotify without watches).
 * 0 or -errno, logged naming the pid and fd. Free with fdinfo_fini().
 */
int anon_fdinfo_read(const struct fd_info *f, enum fdinfo_kind kind, bool plain_ok,
		     struct fdinfo *ret);

/* @size zeroed bytes owned by @d (freed with it); NULL with errno. */
void *anon_priv_alloc(struct file_desc *d, size_t size);

#endif
