/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_REG_H
#define CRIU_LIKE_FILES_REG_H

/* Regular files (reg.c) and the contents of unlinked ones (reg-ghost.c). */
#include <sys/stat.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dump.h"
#include "restore.h"

#include "files.pb-c.h"

/* reg.c: the kind, for reg-ghost.c and locks.c (its descriptions list). */
extern const struct file_kind reg_kind;

/*
 * The contents of the unlinked file behind the dumper's @fd (of task @pid),
 * entry @e of file @id, into ghost-ID.img, with their crc32c in @e.
 */
int ghost_dump(struct dump_ctx *ctx, pid_t pid, int fd, uint32_t id, RegFileEntry *e);
/*
 * reg-ghost.c, the attributes of an unlinked file that the restore makes
 * again: its owner and times from @st, into @e; the room its extended
 * attributes take (the entries and their names and values), 0 for none or
 * -errno; those attributes into @e, in @buf of that size.
 */
void ghost_attrs_fill(RegFileEntry *e, const struct stat *st);
ssize_t ghost_xattrs_size(int fd);
int ghost_xattrs_fill(int fd, RegFileEntry *e, char *buf, size_t size);
/*
 * reg-remap.c, --link-remap: a hidden link "link_remap.ID[.K]" to the file
 * behind the dumper's @fd next to @path (as task @pid sees it), whose name was
 * removed while other links remain: its path as the task sees it (kept until
 * the dump's end),
 * or NULL with errno (logged). Removed again by link_remap_dump_fini() when
 * the dump failed (ctx->failed).
 */
const char *link_remap_make(struct dump_ctx *ctx, pid_t pid, int fd, const char *path, uint32_t id);
void link_remap_dump_fini(struct dump_ctx *ctx, bool resume);
/* The name of hidden link @attempt (0, 1...) for file @id into @buf: 0 or -ENAMETOOLONG. */
int link_remap_name(uint32_t id, unsigned int attempt, char *buf, size_t size);
/* Restore: the directories of the hidden links, opened before any description is. */
int link_remap_prepare(struct restore_ctx *ctx);
/* Restore: every description opened (@remove: the tree about to run): the links removed. */
void link_remap_restored(struct restore_ctx *ctx, bool remove);
/* The unlinked file idx.by_id[@pos], rebuilt from ghost-ID.img, opened and unlinked again. */
int rst_ghost_open(struct restore_ctx *ctx, size_t pos);

/*
 * reg-proc.c: whether @path names a file of one process in /proc, "/proc/N"
 * or "/proc/N/...": 1 with N in *@pid and, for "/proc/N/task/T[/...]", T in
 * *@tid (else 0); 0 for any other path.
 */
int proc_pid_path(const char *path, pid_t *pid, pid_t *tid);
/*
 * reg-proc.c: 0 when @f is not such a file (or not on a procfs) or can be
 * restored (a process of the tree, a position it can seek to again), 1 when
 * it is a file of a process that has exited and can be restored as such
 * (RegFileEntry.proc_dead), else -EOPNOTSUPP (logged, naming the pid, fd and
 * path).
 */
struct fd_info;
int reg_proc_check(const struct dump_ctx *ctx, const struct fd_info *f);
/*
 * reg-proc.c, restore: a new fd of @path, /proc/N[/FILE] of a process that had
 * exited: opened with @open_fn while a child given pid N (clone3 set_tid)
 * lives, which then exits and is reaped, so the fd is of a process gone as it
 * was (reads give ESRCH). -EEXIST (logged) when another process has pid N.
 */
int rst_proc_dead_open(const char *path, uint32_t flags, int (*open_fn)(const char *, uint32_t));

#endif
