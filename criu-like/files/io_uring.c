// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring instances (io_uring_setup(2)) that are idle: no request in
 * flight, no submission thread. Their state is the kernel's two positions
 * (submissions consumed, completions posted: fdinfo CachedSqHead and
 * CachedCqTail), the rings and SQEs the task shares with the kernel (read
 * whole through the dumper's copy of the fd, mapped read-only), the
 * registered files (fdinfo: slot and path, found again as an fd of the
 * holder) and the registered buffers (slot, address, length).
 *
 * The kernel shows no setup flag. What the dump can tell is kept: SQPOLL
 * (SqThread:), R_DISABLED (io_uring_enter() says EBADFD), NO_MMAP (the
 * rings cannot be mapped), SINGLE_ISSUER (a registration from the dumper
 * says EEXIST), the entry sizes SQE128 and CQE32 and the absence of an SQ
 * array (NO_SQARRAY) from the size of the regions (pages mapped) and from
 * the SQEs and CQEs fdinfo lists. The others (IOPOLL, SUBMIT_ALL,
 * COOP_TASKRUN, TASKRUN_FLAG, DEFER_TASKRUN, ATTACH_WQ, HYBRID_IOPOLL) leave
 * no trace and come back unset (Documentation/files.md).
 *
 * Restore, in the task (the ring's memory accounting and its single issuer
 * are the task's), once its fds are in place (installed hook): the ring is
 * set up again with the same sizes and flags, its positions brought where
 * they were by submitting NOPs (IOSQE_CQE_SKIP_SUCCESS for the ones that
 * posted nothing), the rings and SQEs written back byte for byte (the task's
 * own positions, the unreaped CQEs, SQEs not submitted yet), and the files
 * registered from the task's fd numbers. The mappings of the rings are file
 * mappings of the description (open_mapped), made by the restorer, which
 * also registers the buffers once the memory they are in is back.
 */
#define LOG_PREFIX "files: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <linux/kcmp.h>

#include "anon.h"
#include "compat.h"
#include "log.h"
#include "restore-files-int.h"
#include "restorer.h"
#include "util.h"

extern const struct file_kind io_uring_kind;

/* NOPs a restore may submit to bring a ring's positions back (a second or so). */
#define IOU_REPLAY_MAX (1u << 26)
/* Pages of a region probed for its size. */
#define IOU_PROBE_PAGES 64u
#define IOU_MAX_SLOTS (1u << 16)

/* ---- dump: fdinfo ------------------------------------------------------------------------- */

struct iou_info {
	uint32_t sq_mask, sq_head, sq_tail, cached_sq_head;
	uint32_t cq_mask, cq_head, cq_tail, cached_cq_tail;
	int sq_thread;
	bool polls, overflow; /* entries listed: requests in flight */
	int sqe128, cqe32; /* what the SQEs: and CQEs: lists say: 1, 0, or -1 (no entry) */
	uint32_t nr_files, nr_bufs;
	char **files; /* [nr_files], NULL for an empty slot */
	uint64_t *buf_addr, *buf_len; /* [nr_bufs] */
};

static void iou_info_fini(struct iou_info *in)
{
	for (uint32_t i = 0; in->files && i < in->nr_files; i++)
		free(in->files[i]);
	free(in->files);
	free(in->buf_addr);
	free(in->buf_len);
}

/* seq_file_path() escapes " \t\n\\" as \ooo: back to the bytes, in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

enum iou_section {
	SEC_NONE,
	SEC_SQES,
	SEC_CQES,
	SEC_FILES,
	SEC_BUFS,
	SEC_POLL,
	SEC_OVERFLOW
};

static int iou_slots(uint32_t n, struct iou_info *in, bool files)
{
	if (n > IOU_MAX_SLOTS)
		return -E2BIG;
	if (files) {
		in->nr_files = n;
		in->files = calloc(n + 1, sizeof(*in->files));
		return in->files ? 0 : -ENOMEM;
	}
	in->nr_bufs = n;
	in->buf_addr = calloc(n + 1, sizeof(uint64_t));
	in->buf_len = calloc(n + 1, sizeof(uint64_t));
	return in->buf_addr && in->buf_len ? 0 : -ENOMEM;
}

/* One line of a list: an SQE, a CQE, a registered file or buffer, a poll, an overflow. */
static int iou_list_line(enum iou_section sec, const char *line, struct iou_info *in)
{
	unsigned long long addr;
	unsigned int idx, len;
	int off = 0;

	switch (sec) {
	case SEC_SQES:
		in->sqe128 = strstr(line, ", e0:") != NULL;
		return 0;
	case SEC_CQES:
		in->cqe32 = strstr(line, ", extra1:") != NULL;
		return 0;
	case SEC_POLL:
		in->polls = true;
		return 0;
	case SEC_OVERFLOW:
		in->overflow = true;
		return 0;
	case SEC_FILES:
		if (sscanf(line, " %u: %n", &idx, &off) != 1 || !off || idx >= in->nr_files)
			return -EINVAL;
		in->files[idx] = strdup(line + off);
		if (!in->files[idx])
			return -ENOMEM;
		unescape(in->files[idx]);
		return 0;
	case SEC_BUFS:
		/* an empty slot says so otherwise ("<none>"): address and length 0 */
		if (sscanf(line, " %u: 0x%llx/%u", &idx, &addr, &len) == 3 && idx < in->nr_bufs) {
			in->buf_addr[idx] = addr;
			in->buf_len[idx] = len;
		}
		return 0;
	default:
		return 0;
	}
}

static int iou_key_line(const char *line, struct iou_info *in, enum iou_section *sec)
{
	static const struct {
		const char *fmt;
		size_t off;
	} keys[] = {
		{ "SqMask: %x", offsetof(struct iou_info, sq_mask) },
		{ "SqHead: %u", offsetof(struct iou_info, sq_head) },
		{ "SqTail: %u", offsetof(struct iou_info, sq_tail) },
		{ "CachedSqHead: %u", offsetof(struct iou_info, cached_sq_head) },
		{ "CqMask: %x", offsetof(struct iou_info, cq_mask) },
		{ "CqHead: %u", offsetof(struct iou_info, cq_head) },
		{ "CqTail: %u", offsetof(struct iou_info, cq_tail) },
		{ "CachedCqTail: %u", offsetof(struct iou_info, cached_cq_tail) },
	};
	unsigned int n;

	*sec = SEC_NONE;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (sscanf(line, keys[i].fmt, (uint32_t *)((char *)in + keys[i].off)) == 1)
			return 0;
	if (sscanf(line, "SqThread: %d", &in->sq_thread) == 1)
		return 0;
	if (!strncmp(line, "SQEs:", 5))
		*sec = SEC_SQES;
	else if (!strncmp(line, "CQEs:", 5))
		*sec = SEC_CQES;
	else if (!strncmp(line, "PollList:", 9))
		*sec = SEC_POLL;
	else if (!strncmp(line, "CqOverflowList:", 15))
		*sec = SEC_OVERFLOW;
	else if (sscanf(line, "UserFiles: %u", &n) == 1)
		return (*sec = SEC_FILES, iou_slots(n, in, true));
	else if (sscanf(line, "UserBufs: %u", &n) == 1)
		return (*sec = SEC_BUFS, iou_slots(n, in, false));
	return 0;
}

static int iou_fdinfo_parse(char *text, struct iou_info *in)
{
	enum iou_section sec = SEC_NONE;
	char *save = NULL, *line;
	int err = 0;

	in->sq_thread = -1;
	in->sqe128 = in->cqe32 = -1;
	for (line = strtok_r(text, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save))
		err = line[0] == ' ' || line[0] == '\t' ? iou_list_line(sec, line, in)
							: iou_key_line(line, in, &sec);
	return err;
}

/* ---- dump: what the setup was ------------------------------------------------------------- */

/* The size the kernel gives the rings region (rings_size()), rounded to pages. */
static size_t rings_pages(uint32_t sq, uint32_t cq, uint32_t flags)
{
	size_t off = 64 + (size_t)cq * (flags & IORING_SETUP_CQE32 ? 32 : 16);

	if (!(flags & CR_IORING_SETUP_NO_SQARRAY))
		off = ((off + 63) & ~(size_t)63) + (size_t)sq * 4;
	return (off + PAGE_SIZE - 1) / PAGE_SIZE;
}

static size_t sqes_pages(uint32_t sq, uint32_t flags)
{
	return ((size_t)sq * (flags & IORING_SETUP_SQE128 ? 128 : 64) + PAGE_SIZE - 1) / PAGE_SIZE;
}

/*
 * The layout flags (SQE128, CQE32, NO_SQARRAY) that fit the regions' sizes
 * in pages (@rp, @qp) and what fdinfo listed; among several, the one with
 * the fewest flags. 0 and *@ret, or -ENOENT when none fits.
 */
int iou_layout_infer(uint32_t sq, uint32_t cq, size_t rp, size_t qp, int sqe128, int cqe32,
		     uint32_t *ret)
{
	static const uint32_t order[] = {
		0,
		IORING_SETUP_SQE128,
		IORING_SETUP_CQE32,
		CR_IORING_SETUP_NO_SQARRAY,
		IORING_SETUP_SQE128 | IORING_SETUP_CQE32,
		IORING_SETUP_SQE128 | CR_IORING_SETUP_NO_SQARRAY,
		IORING_SETUP_CQE32 | CR_IORING_SETUP_NO_SQARRAY,
		IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | CR_IORING_SETUP_NO_SQARRAY,
	};

	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		uint32_t fl = order[i];

		if (rings_pages(sq, cq, fl) != rp || sqes_pages(sq, fl) != qp)
			continue;
		if (sqe128 >= 0 && !!(fl & IORING_SETUP_SQE128) != sqe128)
			continue;
		if (cqe32 >= 0 && !!(fl & IORING_SETUP_CQE32) != cqe32)
			continue;
		*ret = fl;
		return 0;
	}
	return -ENOENT;
}

/*
 * The region at @off of the ring @dfd mapped read-only into *@ret (@pages
 * probed) and how many pages the kernel put in it (mincore: the region's
 * size), in *@n. -ENODEV: it cannot be mapped (NO_MMAP).
 */
static int map_region(int dfd, off_t off, void **ret, size_t *n)
{
	unsigned char vec[IOU_PROBE_PAGES];
	size_t len = IOU_PROBE_PAGES * PAGE_SIZE, i;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, dfd, off);

	if (m == MAP_FAILED)
		return -ENODEV;
	if (mincore(m, len, vec)) {
		int err = neg_errno();

		munmap(m, len);
		return err;
	}
	for (i = 0; i < IOU_PROBE_PAGES && (vec[i] & 1); i++)
		;
	*ret = m;
	*n = i;
	return 0;
}

static int iou_refuse(const struct fd_info *f, const char *why)
{
	pr_err("pid %d fd %d: an io_uring instance %s: not supported\n", f->pid, f->fd, why);
	return -EOPNOTSUPP;
}

/* What fdinfo says that makes the ring impossible to bring back. */
static int iou_check_idle(const struct fd_info *f, const struct iou_info *in)
{
	uint32_t cq = in->cq_mask + 1;
	char why[160];

	if (in->sq_thread >= 0)
		return iou_refuse(f, "with a submission thread (IORING_SETUP_SQPOLL)");
	if (in->polls)
		return iou_refuse(f, "with requests in flight (armed polls: fdinfo PollList)");
	if (in->overflow)
		return iou_refuse(f, "with completions that overflowed its CQ ring");
	if (in->sq_head != in->cached_sq_head || in->cq_tail != in->cached_cq_tail)
		return iou_refuse(f, "with submissions or completions in progress");
	if (in->cq_tail - in->cq_head > cq)
		return iou_refuse(f, "with more completions than its CQ ring holds");
	if (in->cq_tail > in->sq_head || in->sq_head > IOU_REPLAY_MAX) {
		snprintf(why, sizeof(why),
			 "whose positions (%u submissions, %u completions) cannot be reached "
			 "again with at most %u NOPs",
			 in->sq_head, in->cq_tail, IOU_REPLAY_MAX);
		return iou_refuse(f, why);
	}
	return 0;
}

/* The setup flags the dump can tell (file comment), into *@ret. */
static int iou_flags(const struct seized_task *t, const struct fd_info *f,
		     const struct iou_info *in, size_t rp, size_t qp, uint32_t *ret)
{
	uint32_t sq = in->sq_mask + 1, cq = in->cq_mask + 1, layout;

	if (syscall(__NR_io_uring_enter, f->dfd, 0, 0, 0, NULL, 0) < 0 && errno == EBADFD)
		return iou_refuse(f, "that is not enabled yet (IORING_SETUP_R_DISABLED)");
	if (iou_layout_infer(sq, cq, rp, qp, in->sqe128, in->cqe32, &layout))
		return iou_refuse(f, "whose regions' sizes fit no known layout");
	*ret = layout;
	if (cq != 2 * sq)
		*ret |= IORING_SETUP_CQSIZE;
	/* a registration by another task than its submitter: EEXIST */
	if (syscall(__NR_io_uring_register, f->dfd, IORING_REGISTER_PROBE, NULL, 0) < 0 &&
	    errno == EEXIST) {
		if (t && t->nr_threads > 1)
			return iou_refuse(f,
					  "with a single issuer (IORING_SETUP_SINGLE_ISSUER) in a "
					  "process of several threads, which may not be its "
					  "leader");
		*ret |= IORING_SETUP_SINGLE_ISSUER;
	}
	return 0;
}

/* The lowest fd of @pid (not @self) whose link is @path: the registered file's holder. */
static int holder_fd(pid_t pid, int self, const char *path)
{
	_cleanup_closedir_ DIR *dir = NULL;
	char dpath[64], link[PATH_MAX];
	struct dirent *de;
	long best = -1;

	snprintf(dpath, sizeof(dpath), "/proc/%d/fd", pid);
	dir = opendir(dpath);
	while (dir && (de = readdir(dir))) {
		long fd;
		ssize_t n;

		if (de->d_name[0] == '.' || parse_long(de->d_name, &fd) || fd == self)
			continue;
		n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (!strcmp(link, path) && (best < 0 || fd < best))
			best = fd;
	}
	return (int)best;
}

/*
 * The ring held by another process of the tree than @f's (and its fd table):
 * each holder would make a ring of its own.
 */
static int iou_check_shared(const struct dump_ctx *ctx, const struct fd_info *f)
{
	for (unsigned int i = 0; i < ctx->nr_tasks; i++) {
		pid_t pid = ctx->tasks[i].t->pid;
		_cleanup_closedir_ DIR *dir = NULL;
		char dpath[64], link[64];
		struct dirent *de;

		if (pid == f->pid || !syscall(SYS_kcmp, f->pid, pid, KCMP_FILES, 0, 0))
			continue;
		snprintf(dpath, sizeof(dpath), "/proc/%d/fd", pid);
		dir = opendir(dpath);
		while (dir && (de = readdir(dir))) {
			long fd;
			ssize_t n;

			if (de->d_name[0] == '.' || parse_long(de->d_name, &fd))
				continue;
			n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
			if (n <= 0 || (link[n] = '\0', strcmp(link, "anon_inode:[io_uring]")))
				continue;
			if (!syscall(SYS_kcmp, f->pid, pid, KCMP_FILE, f->fd, fd)) {
				pr_err("pid %d fd %d: an io_uring instance held by pid %d too (fd "
				       "%ld): a ring shared by processes is not supported\n",
				       f->pid, f->fd, pid, fd);
				return -EOPNOTSUPP;
			}
		}
	}
	return 0;
}

static int iou_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	return !strcmp(f->link, "anon_inode:[io_uring]");
}

/* Registered files and buffers into @e (owned by @d's block): files by the holder's fds. */
static int iou_dump_slots(const struct fd_info *f, const struct iou_info *in, IoUringEntry *e,
			  struct file_desc *d)
{
	uint32_t i;

	(void)d;
	e->n_files = in->nr_files;
	e->files = calloc(in->nr_files + 1, sizeof(*e->files));
	e->n_bufs = in->nr_bufs;
	e->bufs = calloc(in->nr_bufs + 1, sizeof(*e->bufs));
	if (!e->files || !e->bufs)
		return -ENOMEM;
	for (i = 0; i < in->nr_files; i++) {
		e->files[i] = in->files[i] ? holder_fd(f->pid, f->fd, in->files[i]) : -1;
		if (in->files[i] && e->files[i] < 0) {
			pr_err("pid %d fd %d: io_uring: registered file %u (%s) is held by no fd "
			       "of "
			       "the process: not supported\n",
			       f->pid, f->fd, i, in->files[i]);
			return -EOPNOTSUPP;
		}
	}
	for (i = 0; i < in->nr_bufs; i++) {
		e->bufs[i] = malloc(sizeof(*e->bufs[i]));
		if (!e->bufs[i])
			return -ENOMEM;
		io_uring_buf__init(e->bufs[i]);
		e->bufs[i]->addr = in->buf_addr[i];
		e->bufs[i]->len = in->buf_len[i];
	}
	return 0;
}

/* The bytes of both regions, copied out of the dumper's read-only mappings. */
static int iou_copy_regions(const struct fd_info *f, IoUringEntry *e, size_t *rp, size_t *qp,
			    void **rings, void **sqes)
{
	int err = map_region(f->dfd, IORING_OFF_SQ_RING, rings, rp);

	if (!err)
		err = map_region(f->dfd, IORING_OFF_SQES, sqes, qp);
	if (err == -ENODEV)
		return iou_refuse(f, "whose rings are in its own memory (IORING_SETUP_NO_MMAP)");
	if (err) {
		pr_errno(err, "pid %d fd %d: cannot map the io_uring regions", f->pid, f->fd);
		return err;
	}
	if (!*rp || *rp >= IOU_PROBE_PAGES || !*qp || *qp >= IOU_PROBE_PAGES)
		return iou_refuse(f, "whose regions are larger than 63 pages");
	(void)e;
	return 0;
}

static void iou_free_entry(IoUringEntry *e)
{
	for (size_t i = 0; e->bufs && i < e->n_bufs; i++)
		free(e->bufs[i]);
	free(e->bufs);
	free(e->files);
	free(e->rings.data);
	free(e->sqes.data);
}

static int iou_fill(const struct dump_ctx *ctx, const struct fd_info *f, const struct iou_info *in,
		    IoUringEntry *e)
{
	size_t rp = 0, qp = 0;
	void *rings = MAP_FAILED, *sqes = MAP_FAILED;
	bool leader;
	int err;

	e->flags = f->flags;
	e->sq_entries = in->sq_mask + 1;
	e->cq_entries = in->cq_mask + 1;
	e->sq_head = in->sq_head;
	e->cq_tail = in->cq_tail;
	err = iou_copy_regions(f, e, &rp, &qp, &rings, &sqes);
	if (!err)
		err = iou_flags(dump_tree_task_of(ctx, f->pid, &leader), f, in, rp, qp,
				&e->setup_flags);
	if (!err) {
		e->rings.len = rp * PAGE_SIZE;
		e->sqes.len = (size_t)e->sq_entries *
			      (e->setup_flags & IORING_SETUP_SQE128 ? 128 : 64);
		e->rings.data = malloc(e->rings.len);
		e->sqes.data = malloc(e->sqes.len);
		if (!e->rings.data || !e->sqes.data)
			err = -ENOMEM;
	}
	if (!err) {
		memcpy(e->rings.data, rings, e->rings.len);
		memcpy(e->sqes.data, sqes, e->sqes.len);
	}
	if (rings != MAP_FAILED)
		munmap(rings, IOU_PROBE_PAGES * PAGE_SIZE);
	if (sqes != MAP_FAILED)
		munmap(sqes, IOU_PROBE_PAGES * PAGE_SIZE);
	return err;
}

static int iou_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	struct iou_info in = { 0 };
	char path[64];
	_cleanup_free_ char *text = NULL;
	IoUringEntry *e;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", f->pid, f->fd);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text) {
		pr_perror("pid %d fd %d: cannot read %s", f->pid, f->fd, path);
		return neg_errno();
	}
	err = iou_fdinfo_parse(text, &in);
	if (err)
		pr_errno(err, "pid %d fd %d: cannot parse the io_uring fdinfo", f->pid, f->fd);
	if (!err)
		err = iou_check_idle(f, &in);
	if (!err)
		err = iou_check_shared(ctx, f);
	e = err ? NULL : anon_priv_alloc(d, sizeof(*e));
	if (!err && !e)
		err = -ENOMEM;
	if (!err) {
		io_uring_entry__init(e);
		d->fe.type = FILE_TYPE__FILE_IO_URING;
		d->fe.io_uring = e;
		err = iou_fill(ctx, f, &in, e);
		/* their pages are pinned at restore before a lazy-pages daemon serves any */
		if (!err && e->n_bufs && ctx->opts->lazy_pages) {
			pr_err("pid %d fd %d: io_uring with %zu registered buffers: the restore "
			       "reads them before the lazy-pages daemon serves anything, so a "
			       "lazy dump cannot leave them in the tree; dump without "
			       "--lazy-pages\n",
			       f->pid, f->fd, e->n_bufs);
			err = -EOPNOTSUPP;
		}
		if (!err)
			err = iou_dump_slots(f, &in, e, d);
	}
	if (!err)
		pr_debug("pid %d fd %d: io_uring %u/%u entries, flags %#x, sq head %u, cq %u..%u, "
			 "%zu files, %zu buffers\n",
			 f->pid, f->fd, e->sq_entries, e->cq_entries, e->setup_flags, e->sq_head,
			 in.cq_head, e->cq_tail, e->n_files, e->n_bufs);
	iou_info_fini(&in);
	return err;
}

/* The entry's allocations live in d->priv's block only for the entry itself: free the rest. */
static void iou_dump_fini(struct dump_ctx *ctx, bool resume)
{
	struct file_table *ft = ctx->files;

	(void)resume;
	for (unsigned int i = 0; ft && i < ft->nr; i++)
		if (ft->descs[i]->fe.type == FILE_TYPE__FILE_IO_URING &&
		    ft->descs[i]->fe.io_uring) {
			iou_free_entry(ft->descs[i]->fe.io_uring);
			ft->descs[i]->fe.io_uring = NULL;
		}
}

int dump_anon_mapping(struct dump_ctx *ctx, pid_t pid, const char *path, dev_t dev, ino_t ino,
		      uint32_t *id)
{
	struct file_desc *d = ctx->files ? file_desc_next(ctx->files, dev, ino, NULL) : NULL;

	if (!d || d->fe.type != FILE_TYPE__FILE_IO_URING) {
		pr_err("pid %d: a mapping of %s (inode %lu), %s: not supported\n", pid, path,
		       (unsigned long)ino,
		       d ? "not an io_uring instance" : "whose fd no task of the tree holds");
		return -EOPNOTSUPP;
	}
	*id = d->id;
	return 0;
}

/* ---- restore ------------------------------------------------------------------------------ */

/* The kind's restore state: per description, the fd this task made it at (-1). */
struct iou_rst {
	int *task_fd;
};

static int iou_check(const FileEntry *fe)
{
	const IoUringEntry *e = fe->io_uring;

	return anon_check(fe, e && e->sq_entries && !(e->sq_entries & (e->sq_entries - 1)) &&
				      e->cq_entries >= e->sq_entries && e->rings.len >= 64 &&
				      e->sqes.len >= (size_t)e->sq_entries * 64 &&
				      e->n_files <= IOU_MAX_SLOTS && e->n_bufs <= IOU_MAX_SLOTS &&
				      e->cq_tail <= e->sq_head && e->sq_head <= IOU_REPLAY_MAX);
}

static int iou_prepare(struct restore_ctx *ctx)
{
	struct rst_kind *k = rst_kind_get(ctx, &io_uring_kind);
	struct iou_rst *st;
	size_t n = ctx->files->idx.n;

	if (!k->n)
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st || !(st->task_fd = malloc((n + 1) * sizeof(int)))) {
		free(st);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		st->task_fd[i] = -1;
	k->priv = st;
	return 0;
}

static void iou_fini(struct restore_ctx *ctx)
{
	struct rst_kind *k = rst_kind_get(ctx, &io_uring_kind);
	struct iou_rst *st = k->priv;

	if (st)
		free(st->task_fd);
	free(st);
	k->priv = NULL;
}

/* The new ring @rfd's positions brought to @e's with NOPs, its CQEs reaped as they come. */
static int iou_replay(int rfd, const struct io_uring_params *p, char *rings, char *sqes,
		      const IoUringEntry *e)
{
	uint32_t *sq_tail = (uint32_t *)(rings + p->sq_off.tail);
	uint32_t *sq_head = (uint32_t *)(rings + p->sq_off.head);
	uint32_t *cq_head = (uint32_t *)(rings + p->cq_off.head);
	uint32_t *cq_tail = (uint32_t *)(rings + p->cq_off.tail);
	uint32_t *array = p->flags & CR_IORING_SETUP_NO_SQARRAY
				  ? NULL
				  : (uint32_t *)(rings + p->sq_off.array);
	size_t sqe_size = p->flags & IORING_SETUP_SQE128 ? 128 : 64;
	uint32_t done = 0, mask = p->sq_entries - 1;

	while (done < e->sq_head) {
		uint32_t n = min(e->sq_head - done, p->sq_entries), posts = 0, i;
		long r;

		for (i = 0; i < n; i++) {
			uint32_t idx = (done + i) & mask;
			struct io_uring_sqe *q = (struct io_uring_sqe *)(sqes + idx * sqe_size);

			memset(q, 0, sqe_size);
			q->opcode = IORING_OP_NOP;
			/* the first cq_tail NOPs post a completion, the others none */
			if (done + i >= e->cq_tail)
				q->flags = IOSQE_CQE_SKIP_SUCCESS;
			else
				posts++;
			if (array)
				array[idx] = idx;
		}
		__atomic_store_n(sq_tail, done + n, __ATOMIC_RELEASE);
		r = syscall(__NR_io_uring_enter, rfd, n, posts, posts ? IORING_ENTER_GETEVENTS : 0,
			    NULL, 0);
		if (r != (long)n)
			return r < 0 ? neg_errno() : -EIO;
		__atomic_store_n(cq_head, __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		done += n;
	}
	if (__atomic_load_n(sq_head, __ATOMIC_ACQUIRE) != e->sq_head ||
	    __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE) != e->cq_tail)
		return -EIO;
	return 0;
}

/* The regions of @rfd mapped here for a moment: positions replayed, then the bytes written back. */
static int iou_restore_regions(int rfd, const struct io_uring_params *p, const IoUringEntry *e)
{
	char *rings = mmap(NULL, e->rings.len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			   rfd, IORING_OFF_SQ_RING);
	char *sqes = mmap(NULL, e->sqes.len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rfd,
			  IORING_OFF_SQES);
	int err = rings == MAP_FAILED || sqes == MAP_FAILED ? neg_errno() : 0;

	if (!err)
		err = iou_replay(rfd, p, rings, sqes, e);
	if (!err) {
		/* sq head and cq tail are the same bytes: the replay put them there */
		memcpy(rings, e->rings.data, e->rings.len);
		memcpy(sqes, e->sqes.data, e->sqes.len);
	}
	if (rings != MAP_FAILED)
		munmap(rings, e->rings.len);
	if (sqes != MAP_FAILED)
		munmap(sqes, e->sqes.len);
	return err;
}

/* Registered files, by the task's own fd numbers (every fd in place, late ones made). */
static int iou_register_files(int rfd, const IoUringEntry *e)
{
	_cleanup_free_ int *fds = NULL;

	if (!e->n_files)
		return 0;
	fds = malloc(e->n_files * sizeof(int));
	if (!fds)
		return -ENOMEM;
	for (size_t i = 0; i < e->n_files; i++)
		fds[i] = e->files[i];
	if (syscall(__NR_io_uring_register, rfd, IORING_REGISTER_FILES, fds, e->n_files) < 0)
		return neg_errno();
	return 0;
}

static int iou_make(struct restore_ctx *ctx, const struct rst_task *t, const FdEntry *fd,
		    size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const IoUringEntry *e = fe->io_uring;
	struct iou_rst *st = rst_kind_get(ctx, &io_uring_kind)->priv;
	struct io_uring_params p;
	int rfd, err = 0;

	memset(&p, 0, sizeof(p));
	p.flags = e->setup_flags;
	p.cq_entries = e->cq_entries;
	rfd = (int)syscall(__NR_io_uring_setup, e->sq_entries, &p);
	if (rfd < 0)
		err = neg_errno();
	else if (p.sq_entries != e->sq_entries || p.cq_entries != e->cq_entries)
		err = -ERANGE;
	if (!err)
		err = iou_restore_regions(rfd, &p, e);
	if (!err)
		err = iou_register_files(rfd, e);
	if (!err && (e->flags & O_NONBLOCK) && fcntl(rfd, F_SETFL, O_NONBLOCK))
		err = neg_errno();
	if (err) {
		pr_errno(err,
			 "pid %u fd %u: cannot make its io_uring (file %u, %u/%u entries, flags "
			 "%#x, %u submissions, %u completions) again",
			 t->pe->pid, fd->fd, fe->id, e->sq_entries, e->cq_entries, e->setup_flags,
			 e->sq_head, e->cq_tail);
		if (rfd >= 0)
			close(rfd);
		return err;
	}
	st->task_fd[pos] = (int)fd->fd;
	return rfd;
}

/* In the task, its fds in place: a ring of its own over each placeholder. */
static int iou_installed(struct restore_ctx *ctx, struct rst_task *t)
{
	return rst_late_install(ctx, t, &io_uring_kind, NULL, iou_make);
}

static int iou_open_placeholder(struct restore_ctx *ctx, size_t pos)
{
	return rst_late_placeholder(ctx, pos);
}

/* A mapping of the rings, in the task that made them (rst_task_finish()). */
static int iou_open_mapped(struct restore_ctx *ctx, size_t pos, int flags)
{
	struct iou_rst *st = rst_kind_get(ctx, &io_uring_kind)->priv;
	int fd = st ? st->task_fd[pos] : -1;

	(void)flags;
	if (fd < 0) {
		pr_err("file %u: an io_uring mapped by a task that does not hold it\n",
		       ctx->files->idx.by_id[pos]->id);
		return -EBADF;
	}
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? neg_errno() : fd;
}

size_t rst_io_uring_buf_pages(const struct restore_ctx *ctx, pid_t pid, uint64_t *out, size_t max)
{
	const struct rst_files *f = ctx->files;
	const struct rst_task *t = NULL;
	const struct rst_task_files *tf;
	size_t n = 0;

	for (unsigned int i = 0; i < ctx->nr_tasks && !t; i++)
		if ((pid_t)ctx->tasks[i].pe->pid == pid)
			t = &ctx->tasks[i];
	tf = t ? t->files : NULL;
	for (size_t i = 0; f && tf && i < tf->nr_fds; i++) {
		long pos = rst_file_index_pos(&f->idx, tf->fds[i]->id);
		const IoUringEntry *e;

		if (pos < 0 || f->kind_at[pos] != &io_uring_kind)
			continue;
		e = f->idx.by_id[pos]->io_uring;
		for (size_t j = 0; j < e->n_bufs; j++) {
			uint64_t a = e->bufs[j]->addr & ~(uint64_t)(PAGE_SIZE - 1);

			for (; e->bufs[j]->len && a < e->bufs[j]->addr + e->bufs[j]->len;
			     a += PAGE_SIZE, n++)
				if (out && n < max)
					out[n] = a;
		}
	}
	return out ? min(n, max) : n;
}

int rst_io_uring_bufs(const struct restore_ctx *ctx, const struct rst_task *t,
		      struct rst_uring_reg *regs, struct rst_iovec *iovs, uint32_t *nr_regs,
		      uint32_t *nr_iovs)
{
	const struct rst_task_files *tf = t->files;
	const struct rst_files *f = ctx->files;

	*nr_regs = *nr_iovs = 0;
	for (size_t i = 0; tf && i < tf->nr_fds; i++) {
		long pos = rst_file_index_pos(&f->idx, tf->fds[i]->id);
		const IoUringEntry *e;
		size_t j;

		if (pos < 0 || f->kind_at[pos] != &io_uring_kind)
			continue;
		e = f->idx.by_id[pos]->io_uring;
		for (j = 0; j < i && tf->fds[j]->id != tf->fds[i]->id; j++)
			;
		if (j < i || !e->n_bufs)
			continue; /* registered once, through its first fd */
		if (regs) {
			regs[*nr_regs].fd = (int32_t)tf->fds[i]->fd;
			regs[*nr_regs].nr = (uint32_t)e->n_bufs;
			regs[*nr_regs].first = *nr_iovs;
			for (j = 0; j < e->n_bufs; j++) {
				iovs[*nr_iovs + j].base = e->bufs[j]->addr;
				iovs[*nr_iovs + j].len = e->bufs[j]->len;
			}
		}
		(*nr_regs)++;
		*nr_iovs += (uint32_t)e->n_bufs;
	}
	return 0;
}

const struct file_kind io_uring_kind = {
	.name = "io_uring",
	.match = iou_match,
	.dump = iou_dump,
	.dump_fini = iou_dump_fini,
	.no_scm = true,
	.types = { FILE_TYPE__FILE_IO_URING },
	.check = iou_check,
	.prepare = iou_prepare,
	.open = iou_open_placeholder,
	.open_mapped = iou_open_mapped,
	.map_unfixed = true,
	.installed = iou_installed,
	.fini = iou_fini,
};
