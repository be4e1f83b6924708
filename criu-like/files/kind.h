/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_KIND_H
#define CRIU_LIKE_FILES_KIND_H

/*
 * A kind of open file description, its whole life in one table: how the dump
 * recognises and saves it, and how the restore checks, opens and finishes it.
 * Each kind lives in its own file (files/NAME.c, or NAME.c and NAME-*.c next
 * to it) and ends with its `const struct file_kind NAME_kind`; files/kinds.c
 * lists them. Nothing outside a kind's file looks at its image entry or at
 * its state: the generic code (files.c on dump, restore-files.c on restore)
 * only calls the hooks below.
 *
 * Every hook but match/dump/check/open is optional (NULL: nothing to do).
 * Every int hook returns 0 or -errno after logging what failed, naming the
 * pid, fd or file id.
 */
#include <stdbool.h>
#include <stddef.h>

#include "dump.h"
#include "restore.h"

#include "files.pb-c.h"

struct fd_info;
struct file_desc;
struct file_table;
struct rst_task;

struct file_kind {
	const char *name;
	/* The files.img types this kind restores (FileEntry.type); 0 ends the list. */
	FileType types[3];

	/* ---- dump ---- */
	/*
	 * 1 when this kind dumps @f, 0 when it is not this kind, -EOPNOTSUPP (logged,
	 * naming the pid and fd) when it is this kind but a variant that is refused.
	 * Kinds are asked in the order of files/kinds.c.
	 */
	int (*match)(const struct dump_ctx *ctx, const struct fd_info *f);
	/* Fill @d (its FileEntry type and part) from @f, whose dfd is valid. May write images. */
	int (*dump)(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d);
	/*
	 * Whether a description of this kind held by no task, only in flight in a
	 * unix socket's queue, can be dumped from the description alone (f->pid is
	 * the dumper's, f->fd its fd).
	 */
	bool in_flight;
	/*
	 * The kernel refuses to pass it in SCM_RIGHTS (io_uring): the dumper
	 * takes its copy with pidfd_getfd() instead of the parasite's drain.
	 */
	bool no_scm;
	/*
	 * Once the tree is frozen, before any task is infected: work of the kind
	 * that needs the frozen tree but none of its fds, started early (it may
	 * run in the background until the kind's first dump()). 0 or -errno.
	 */
	int (*dump_start)(struct dump_ctx *ctx);
	/* Once every task's fds are dumped (and fds in flight resolved): write own images, checks. */
	int (*dump_finish)(struct dump_ctx *ctx);
	/*
	 * At the end of every dump, the tree still frozen. @resume: the tree goes
	 * on (-R, or the dump failed): undo what the kind did to it. Frees the
	 * kind's dump state.
	 */
	void (*dump_fini)(struct dump_ctx *ctx, bool resume);

	/* ---- restore ---- */
	/* @fe (of one of types[]) has the parts its kind needs, with sane values: 0 or -EINVAL. */
	int (*check)(const FileEntry *fe);
	/* The path of @fe, for messages and for kinds opened by path; NULL when it has none. */
	const ProtobufCBinaryData *(*path)(const FileEntry *fe);
	/* In the controller, before the first description is opened: read own images, state. */
	int (*prepare)(struct restore_ctx *ctx);
	/* In the controller: a new fd for description idx.by_id[@pos], or -errno. */
	int (*open)(struct restore_ctx *ctx, size_t pos);
	/*
	 * For a file mapping or the exe link, when description @pos was not opened
	 * (NULL: this kind cannot back a mapping): an fd with @flags.
	 */
	int (*open_mapped)(struct restore_ctx *ctx, size_t pos, int flags);
	/* The kernel refuses to map it at an address (io_uring): the restorer steers it there. */
	bool map_unfixed;
	/* In the controller, every description open, before any fork (queues with fds in flight). */
	int (*opened)(struct restore_ctx *ctx);
	/*
	 * A description of this kind in flight in a queue can only be made once
	 * the tree exists (a pidfd): in the root, every task made, before the
	 * queues are refilled, a new fd for description idx.by_id[@pos] (sent in
	 * place of the placeholder), or -errno. NULL: the controller's fd is sent.
	 */
	int (*in_flight_open)(struct restore_ctx *ctx, size_t pos);
	/* In the task @t, right after setsid(), before the rest of its session is forked. */
	int (*after_setsid)(struct restore_ctx *ctx, const struct rst_task *t);
	/* In the task @t, once every process group of the tree exists. */
	int (*after_groups)(struct restore_ctx *ctx, const struct rst_task *t);
	/* In the task @t, its fd table installed (epoll targets by fd number, timers armed). */
	int (*installed)(struct restore_ctx *ctx, struct rst_task *t);
	/* In the controller, every thread at the barrier, just before the resume. */
	int (*resume)(struct restore_ctx *ctx);
	/* Free the kind's restore state (after the resume, or a failure). */
	void (*fini)(struct restore_ctx *ctx);
};

/* files/kinds.c: every kind, in the order the dump asks them. */
extern const struct file_kind *const file_kinds[];
extern const size_t nr_file_kinds;

/* The position of @k in file_kinds[]. */
size_t file_kind_index(const struct file_kind *k);
/* The kind restoring FileEntry type @type, or NULL. */
const struct file_kind *file_kind_of_type(int type);

/* ---- per-kind state ---- */

/* files.c: where kind @k keeps its dump state (NULL until the kind sets it). */
void **file_kind_dump_state(struct dump_ctx *ctx, const struct file_kind *k);

/* restore-files.c: the descriptions of one kind, in id order, and the kind's own state. */
struct rst_kind {
	size_t *pos; /* positions in idx.by_id */
	size_t n;
	void *priv; /* the kind's, freed by its fini() */
};
struct rst_kind *rst_kind_get(const struct restore_ctx *ctx, const struct file_kind *k);

#endif
