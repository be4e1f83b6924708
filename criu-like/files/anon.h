/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_ANON_KINDS_H
#define CRIU_LIKE_FILES_ANON_KINDS_H

/*
 * Helpers shared by the anonymous-inode kinds (anon.c): eventfd.c,
 * signalfd.c, timerfd.c, epoll.c, inotify.c, fanotify.c, pidfd.c. Their state is
 * what /proc/PID/fdinfo/N shows.
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

/* Fill @entry (zeroed, owned by @d) and d->fe from @f and its fdinfo @fi. */
typedef void anon_fill_fn(const struct fd_info *f, const struct fdinfo *fi, struct file_desc *d,
			  void *entry);

/*
 * Dump @f, of a kind whose whole state is in its fdinfo (which must say
 * @kind): @fill makes its entry of @size bytes. 0 or -errno (logged).
 */
int anon_dump_fdinfo(const struct fd_info *f, enum fdinfo_kind kind, size_t size,
		     anon_fill_fn *fill, struct file_desc *d);

/*
 * Restore's image check of an anonymous-inode kind: 0 when @ok (@fe has its
 * part, with sane values), else -EINVAL, logged naming the file.
 */
int anon_check(const FileEntry *fe, bool ok);

#endif
