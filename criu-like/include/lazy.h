/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_LAZY_H
#define CRIU_LIKE_LAZY_H

/*
 * Lazy restore (post-copy), Documentation/lazy-pages.md: `restore
 * --lazy-pages` leaves the private anonymous memory of every task empty and
 * registered with a userfaultfd; `lazy-pages` receives each task's uffd and
 * fills it from the images: faults first, the rest in the background.
 *
 * mem/lazy-ranges.c: the pages still to come of one address space (pure,
 * test/unit/test-lazy.c). mem/lazy-src.c: where their contents come from.
 * mem/lazy-pages.c: the daemon. restore/restore-lazy.c: the restore's side.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cr_options;

/* ---- the socket between restore and lazy-pages ----------------------------------------------- */

/* In the work directory (-W, default -D), as CRIU's lazy-pages.socket. */
#define LAZY_SOCKET_NAME "lazy-pages.socket"
#define LAZY_PROTO_VERSION 2

enum lazy_msg_type {
	/* restore -> daemon: version; daemon -> restore: version, flags (what it serves) */
	LAZY_MSG_HELLO = 1,
	LAZY_MSG_TASK, /* restore -> daemon: pid; SCM_RIGHTS uffd, pidfd */
	LAZY_MSG_END, /* restore -> daemon: every task sent */
	LAZY_MSG_ACK, /* daemon -> restore: error 0 = every uffd is held, the tree may run */
	/* restore -> daemon, alone on a connection: it failed before it connected (error) */
	LAZY_MSG_FAILED,
};

struct lazy_msg {
	uint32_t type;
	uint32_t version;
	int32_t pid; /* the task's pid in the images */
	int32_t error; /* ACK: 0 or -errno; FAILED: the restore's -errno */
	uint32_t flags; /* HELLO from the daemon: LAZY_HELLO_* */
	uint64_t dump_id; /* HELLO with LAZY_HELLO_FROM_DUMP: InventoryEntry.lazy_dump.id */
};

/*
 * The daemon reads its pages from the frozen tree of a lazy dump (`lazy-pages
 * --page-server` at a `dump --lazy-pages`, which said so): the holes of that
 * dump's images are filled. Without it a restore refuses a lazy dump's images.
 */
#define LAZY_HELLO_FROM_DUMP 1U

/* ---- the pages still to come of one address space ------------------------------------------ */

/* @len bytes at @vaddr come from level @level of the page source at data offset @off. */
struct lazy_range {
	uint64_t vaddr, len;
	uint64_t off;
	uint32_t level;
	uint32_t entry; /* pagemap entry of that level, for its crc32c */
};

struct lazy_ranges {
	size_t n, cap;
	struct lazy_range *r; /* sorted by vaddr, never overlapping */
	uint64_t bytes; /* sum of len */
};

/* Append [vaddr, vaddr + len) (above every range already there). 0, -EINVAL or -ENOMEM. */
int lazy_ranges_add(struct lazy_ranges *s, const struct lazy_range *r);
/* The range holding @addr, or NULL. */
const struct lazy_range *lazy_ranges_find(const struct lazy_ranges *s, uint64_t addr);
/* Forget [start, end): filled, unmapped, or dropped by MADV_DONTNEED/REMOVE. */
int lazy_ranges_remove(struct lazy_ranges *s, uint64_t start, uint64_t end);
/* mremap moved [from, from + len) to @to: the ranges there move with it (to's old ones go). */
int lazy_ranges_move(struct lazy_ranges *s, uint64_t from, uint64_t to, uint64_t len);
/* A copy of @s (a fork: the child lacks the same pages). */
int lazy_ranges_dup(const struct lazy_ranges *s, struct lazy_ranges *out);
void lazy_ranges_fini(struct lazy_ranges *s);

/* A task's read-ahead on its faults: the end and size of the last fault's fill. */
struct lazy_readahead {
	uint64_t next, len;
};

/*
 * How much a fault at @addr fills: @min, doubled at each fault that comes
 * within the last fill's size past its end, up to @max.
 */
uint64_t lazy_readahead(struct lazy_readahead *ra, uint64_t addr, uint64_t min, uint64_t max);

/*
 * The pages written last, copied first: a migrated redis, every page of
 * it lazy, faulted on page after page of what it had written in the last
 * rounds (its requests' keys, values, allocator) while the background copy
 * went through the first round's 1.4 GiB by address. The ranges of every
 * level but the oldest (the first round, or the only level), newest level
 * first, then by address; @at is where the walk is in r[i].
 */
struct lazy_hot {
	struct lazy_range *r;
	size_t n, i;
	uint64_t at;
};

/* @s's ranges below its highest level, in that order (none with a single level). */
int lazy_hot_init(const struct lazy_ranges *s, struct lazy_hot *h);
/*
 * The next stretch of a hot range that @unserved still holds: true and
 * [*@start, *@start + *@len) (within one range of @unserved), or false once
 * the hot ranges are done.
 */
bool lazy_hot_next(struct lazy_hot *h, const struct lazy_ranges *unserved, uint64_t *start,
		   uint64_t *len);
void lazy_hot_fini(struct lazy_hot *h);

/* ---- where the pages come from ---------------------------------------------------------------- */

/*
 * One source of page contents: the local images (a pre-dump chain
 * included), or (not yet) a remote page server. open_task fills the ranges
 * still to come for a pid; read copies @len bytes of level @level at data
 * offset @off.
 */
struct lazy_src;
struct lazy_src_ops {
	const char *name;
	/* Optional: what open_task will give, worked out before it is asked (best effort). */
	void (*prepare)(struct lazy_src *s);
	int (*open_task)(struct lazy_src *s, pid_t pid, struct lazy_ranges *out);
	/*
	 * Optional: the 2 MiB stretches of @pid's lazy memory (the ranges
	 * open_task gave last) that its restore would have made huge pages
	 * (lazy_thp_chunks()), to collapse once every page is in: *@out
	 * (malloc'd) and *@n. Found with those ranges, from the same images.
	 */
	int (*thp_chunks)(struct lazy_src *s, pid_t pid, uint64_t **out, size_t *n);
	int (*read)(struct lazy_src *s, pid_t pid, uint32_t level, uint64_t off, void *buf,
		    size_t len);
	/*
	 * Optional: the same bytes in place (a mapping of the image), which
	 * UFFDIO_COPY takes as its source without a copy of ours; NULL with
	 * errno set when not possible (read then).
	 */
	const void *(*map)(struct lazy_src *s, pid_t pid, uint32_t level, uint64_t off, size_t len);
	/*
	 * Optional: every task got its pages: end the source's copy of the tree
	 * (a lazy dump's, DONE). 0 once the source answered that it is killed;
	 * else the restored tree is killed (exactly one copy runs).
	 */
	int (*complete)(struct lazy_src *s);
	/* Optional: an fd that reports the source's end (EPOLLRDHUP, EPOLLHUP) while idle. */
	int (*hangup_fd)(struct lazy_src *s);
	void (*fini)(struct lazy_src *s);
};

struct lazy_src {
	const struct lazy_src_ops *ops;
	void *priv;
	/* a lazy dump's own tree, which fills its images' holes (lazy-src-remote.c), its id */
	bool from_lazy_dump;
	uint64_t lazy_dump_id;
};

struct MmEntry;

/*
 * Add of @r the parts in VMAs of @mm that the restore registered with the
 * uffd (rst_lazy_vma(): the rule it uses), cut at the VMA ends: one
 * UFFDIO_COPY stays inside one VMA. The others (a private file mapping, a
 * locked, hugetlb or PROT_NONE one) were filled by the restore itself. 0,
 * -EINVAL (a part outside every VMA) or -ENOMEM.
 */
int lazy_ranges_add_lazy(struct lazy_ranges *out, const struct MmEntry *mm,
			 const struct lazy_range *r);

/*
 * The 2 MiB-aligned stretches of @mm's VMAs that held transparent huge pages
 * and that @unserved's pages reach: in a VMA with MADV_HUGEPAGE, every stretch
 * with a page of @unserved (the first touch made it huge); in one that held huge
 * pages without it (VmaEntry.thp), every stretch @unserved covers whole (what the
 * eager restorer collapses). Their starts in *@out (malloc'd), *@n of them.
 */
int lazy_thp_chunks(const struct MmEntry *mm, const struct lazy_ranges *unserved, uint64_t **out,
		    size_t *n);
/* The images in directory @dirfd (@name for messages). */
int lazy_src_local(int dirfd, const char *name, struct lazy_src *out);
/* Where level @level of @pid's pages is: its directory relative to @dirfd, the file name. */
int lazy_src_local_where(struct lazy_src *s, pid_t pid, uint32_t level, const char **dir,
			 const char **name);
/* A remote `page-server --lazy-pages` at --address/--port (--tls): lazy-src-remote.c. */
int lazy_src_remote(const struct cr_options *o, struct lazy_src *out);

/* ---- the two commands ------------------------------------------------------------------------- */

/*
 * restore-lazy.c: the kernel has what a lazy restore uses: userfaultfd with
 * every event the daemon follows (fork, mremap, remove, unmap, thread ids).
 */
bool lazy_restore_possible(void);

/* `criu-like lazy-pages`: serve one restore, exit when every page is in. */
int cr_lazy_pages(const struct cr_options *o);

#endif
