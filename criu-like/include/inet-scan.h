/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_INET_SCAN_H
#define CRIU_LIKE_INET_SCAN_H

/*
 * The dump of a tree's bound inet sockets refuses one that a process outside
 * the tree holds too (files/inet-diag.c): it reads the fds of every process
 * under /proc, by a thread beside the dump, which the dump waits for before
 * it ends; the walk grows with the machine's processes (300-500 ms of a
 * freeze under load). A migration reads it before the freeze instead
 * (Documentation/migration.md): a socket handed outside between this read
 * and the freeze is then not seen (the walk never was exact: the processes
 * outside are not frozen while it reads them).
 */
#include <stddef.h>
#include <sys/types.h>

struct inet_scan;

/*
 * Every process's socket fds but those of @tree[0..@n) and of the caller,
 * read now. NULL (errno set) without memory; a failed walk is kept as such
 * and fails the dump that uses it, as the walk in the freeze would.
 */
struct inet_scan *inet_scan_ahead(const pid_t *tree, size_t n);
void inet_scan_ahead_free(struct inet_scan *sc);

#endif
