/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FILES_INT_H
#define CRIU_LIKE_FILES_INT_H

/*
 * The file table of a dump (files.c) and the kinds of open files it knows,
 * one file each behind a struct file_kind (reg.c, chr.c, pipe.c, ...).
 * Documentation/files.md describes the images.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "dump.h"
#include "proc-parse.h"
#include "kind.h"

#include "files.pb-c.h"

#define FT_HASH_BITS 12

/* One open file description of the tree (or one file of dump_file_by_fd()). */
struct file_desc {
	uint32_t id;
	uint64_t dev, ino; /* of the inode: the hash key */
	/* The first fd seen with this description, for kcmp; pid 0 for dump_file_by_fd(). */
	pid_t pid;
	int fd;
	FileEntry fe;
	FownEntry fown; /* fe.fown points here when set (fown.c) */
	void *priv; /* a kind's own entry, one malloc'ed block, freed with the description */
	struct file_desc *hnext;
};

/*
 * The descriptions of fds on one inode, sorted in the order kcmp(KCMP_FILE)
 * gives their struct file, so each new fd is found with a binary search.
 */
struct inode_group {
	uint64_t dev, ino;
	struct file_desc **v;
	unsigned int n, cap;
	struct inode_group *hnext;
};

/* An fd in flight in a unix socket's queue, installed in the dumper by a peek. */
struct in_flight {
	int dfd; /* owned */
	uint32_t *slot; /* where its FileEntry id goes (a UnixSkScm of the queue) */
	pid_t pid; /* the socket it is queued in, for messages */
	int fd;
};

struct file_table {
	struct file_desc **descs; /* in id order */
	unsigned int nr, cap;
	struct file_desc *hash[1u << FT_HASH_BITS];
	struct inode_group *groups[1u << FT_HASH_BITS];
	/* Processes whose fd table was dumped, by their table (KCMP_FILES). */
	struct kcmp_set tables;
	/* files.c: fds in flight, resolved into descriptions by dump_files_finish() */
	struct in_flight *in_flight;
	unsigned int nr_in_flight, cap_in_flight;
	/* per file_kinds[] entry: the kind's own dump state (file_kind_dump_state()) */
	void **kind_state;
};

/*
 * fdtable.c: refuse an fd table shared in a way the restore cannot make
 * again (logged, naming the pids), else add @t's to @tables; *@with_parent:
 * @t shares its parent's (dumped with the parent's). Its threads are
 * told by @thr where listed (thread-facts.c), else by kcmp().
 */
int fdt_check_shared(struct kcmp_set *tables, const struct seized_task *t,
		     const struct proc_threads *thr, bool *with_parent);

/*
 * io_uring.c, pure logic: the layout flags (IORING_SETUP_SQE128, CQE32,
 * NO_SQARRAY) of a ring of @sq and @cq entries whose rings and SQEs regions
 * are @rp and @qp pages, @sqe128 and @cqe32 being what fdinfo's lists said
 * (1, 0, or -1: no entry listed); the one with the fewest flags among those
 * that fit, or -ENOENT.
 */
int iou_layout_infer(uint32_t sq, uint32_t cq, size_t rp, size_t qp, int sqe128, int cqe32,
		     uint32_t *ret);

/* What is known about one fd of a task before its description is dumped. */
struct seized_task;

struct fd_info {
	pid_t pid;
	int fd; /* in the task */
	int dfd; /* the same description, drained into the dumper; -1 before the drain */
	char *link; /* readlink of /proc/PID/fd/N, malloc'ed */
	struct stat st; /* stat of /proc/PID/fd/N (the inode) */
	unsigned int flags; /* fdinfo flags without O_CLOEXEC */
	bool cloexec;
	uint64_t pos;
	int mnt_id;
	int sk_family; /* a socket's SO_DOMAIN (AF_UNIX, AF_INET, AF_INET6), else -1 */
	/* the fdinfo "lock:" lines, malloc'ed (locks.c) */
	struct fdinfo_lock *locks;
	unsigned int n_locks;
};

/*
 * files.c: whether the path @link, as /proc shows a file of task @pid, leads
 * to @want (its dev and inode; with @by_rdev, a character device of its
 * rdev) from where the restore opens it: the task's root, or, for a task
 * that chroot()ed (whose links /proc shows from its mount namespace's root),
 * the tree root's root, or criu-like's own when the task shares its mount
 * namespace. @nofollow: the last component itself (lstat).
 */
bool file_path_leads_to(const struct dump_ctx *ctx, pid_t pid, const char *link, bool nofollow,
			const struct stat *want, bool by_rdev);

/*
 * fown.c: the owner for signal-driven I/O of the description @d, read from
 * @f (drained), into d->fe.fown when there is one. Refused by name: an owner
 * outside the tree, or a task in a pid namespace nested in the tree's.
 */
int fown_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d);

/*
 * files.c: 0 when the socket @f (drained) is in the tree's network namespace,
 * else -EOPNOTSUPP naming it as @what ("an inet", "a netlink") and the namespace.
 */
int sock_check_netns(const struct fd_info *f, const char *what);

/*
 * files.c: the task of the dumped tree that has thread @tid, or NULL; whether
 * @tid is its leader in *@leader.
 */
const struct seized_task *dump_tree_task_of(const struct dump_ctx *ctx, pid_t tid, bool *leader);
/* files.c: the table of @ctx, made on first use; NULL with errno. */
struct file_table *file_table_get(struct dump_ctx *ctx);
/* A new description with the next id, in the table and hashed by @dev/@ino. */
struct file_desc *file_desc_new(struct file_table *ft, uint64_t dev, uint64_t ino);
/* The first description hashed by @dev/@ino after @from (NULL: from the start). */
struct file_desc *file_desc_next(struct file_table *ft, uint64_t dev, uint64_t ino,
				 struct file_desc *from);

/*
 * files.c: the fd @dfd (taken, closed with the table) in flight in the queue
 * of the socket @rcv: dump_files_finish() writes the FileEntry id of its
 * description to *@slot, dumping it first if no task holds it.
 */
int file_in_flight_add(struct file_table *ft, int dfd, uint32_t *slot, const struct fd_info *rcv);
/*
 * files.c: whether a task of the tree has the socket @ino (on the sockfs @dev)
 * open: a description dumped already, or a /proc/PID/fd link of a task (all
 * frozen).
 */
bool sock_in_tree(const struct dump_ctx *ctx, dev_t dev, uint32_t ino);
/*
 * files.c: send the sock_diag request @req (@len bytes) on @sk with @flags
 * (NLM_F_DUMP or 0) added to NLM_F_REQUEST: -ENOMEM, or libnl's error (< 0),
 * or the bytes sent.
 */
struct nl_sock;
int sock_diag_send(struct nl_sock *sk, const void *req, size_t len, int flags);
/* A sock_diag socket (libnl) connected in the tree's network namespace, peeking at sizes. */
int sock_diag_open(struct nl_sock **ret);
/*
 * fd-seen.c: @dt's fds @fi[0..@n) (read) kept for its children, if it has any;
 * the parent's task whose fds were kept (NULL: none); the link and stat of
 * @f (pid, fd set) taken from @parent's when it is the same open file
 * (kcmp), else false and nothing set.
 */
int fd_seen_keep(struct dump_task *dt, const struct fd_info *const *fi, unsigned int n);
const struct dump_task *fd_seen_parent(const struct dump_ctx *ctx, const struct dump_task *dt);
bool fd_seen_take(const struct dump_task *parent, struct fd_info *f);
/* A table shared with @parent: only the fds of its listing kept in @fds[0..*@n). */
void fd_seen_filter(const struct dump_task *parent, pid_t pid, int *fds, unsigned int *n);

/* files.c: *@v (of *@cap elements of @size) has room for @n + 1. */
int file_table_grow(void **v, unsigned int *cap, unsigned int n, size_t size);

/*
 * chr.c, for dump_file_by_fd() (reg.c): mappings of character devices. Only the
 * memory devices (a private map of /dev/zero is the common one): 0 or
 * -EOPNOTSUPP (logged). Then fill @d for it.
 */
int chr_check_mapped(pid_t pid, const char *path, const struct stat *st);
int chr_fill_mapped(struct file_desc *d, const char *path, const struct stat *st,
		    unsigned int flags);

#endif
