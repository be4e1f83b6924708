// SPDX-License-Identifier: GPL-2.0
/*
 * Room for the first pages image, made before the freeze (Documentation/
 * memory.md 4, "The pages image's room"). On a tmpfs, each page written into
 * a new file is allocated and cleared by the write itself: writing 18 MiB
 * into a new tmpfs file took 10 ms here, into one whose pages were
 * allocated before (fallocate) 4 ms. The dump writes its pages frozen, so
 * the allocation is moved out: before the freeze, an unnamed file of the
 * image directory (O_TMPFILE) gets, beyond its end (FALLOC_FL_KEEP_SIZE),
 * as many pages as the root task has anonymous memory (RssAnon); the
 * root's pages image (or another one of at least half its size, opened
 * first) takes it (linked under its name, written from its start), and its
 * close gives back what it did not use.
 */
#define LOG_PREFIX "mem: "

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "dump.h"
#include "log.h"
#include "options.h"
#include "util.h"

/* Not worth an fallocate below this. */
#define SPARE_MIN (1UL << 20)

struct pages_spare {
	int fd;
	uint64_t size;
};

uint64_t mem_rss_anon(pid_t pid)
{
	char path[64];
	_cleanup_free_ char *s = NULL;
	const char *p;
	unsigned long long kb;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	s = read_file_at(AT_FDCWD, path, NULL);
	p = s ? strstr(s, "\nRssAnon:") : NULL;
	if (!p || sscanf(p + 9, "%llu", &kb) != 1)
		return 0;
	return (uint64_t)kb << 10;
}

void pages_spare_make(struct dump_ctx *ctx)
{
	const struct cr_options *o = ctx->opts;
	struct pages_spare *sp;
	struct statfs sf;
	uint64_t size;
	int fd;

	/*
	 * copied while the tree runs (pre-dump, --snapshot), or not here
	 * (--page-server), or left in the tree (--lazy-pages, lazy-dump.c)
	 */
	if (ctx->pre_dump || o->snapshot || o->page_server || o->lazy_pages || ctx->spare)
		return;
	if (fstatfs(ctx->dirfd, &sf) || sf.f_type != TMPFS_MAGIC)
		return;
	size = mem_rss_anon(o->tree);
	/* half of the free room at most: the other images need theirs */
	if (size < SPARE_MIN || size > (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize / 2)
		return;
	fd = openat(ctx->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_debug("no room made for the pages image: O_TMPFILE: %m\n");
		return;
	}
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)size) || !(sp = malloc(sizeof(*sp)))) {
		pr_debug("no room made for the pages image: fallocate of %llu bytes: %m\n",
			 (unsigned long long)size);
		close(fd);
		return;
	}
	sp->fd = fd;
	sp->size = size;
	ctx->spare = sp;
	pr_debug("room for the pages image made before the freeze: %llu bytes\n",
		 (unsigned long long)size);
}

int pages_spare_take(struct dump_ctx *ctx, const char *name, pid_t pid, uint64_t size)
{
	struct pages_spare *sp = ctx->spare;
	char path[64];
	int err = 0;

	/*
	 * A child's few pages, written while its parent's are (dump/tasks.c,
	 * dump_task_memory()), may come before the root's: the room, sized on
	 * the root, stays for it.
	 */
	if (!sp || (pid != ctx->opts->tree && size < sp->size / 2))
		return 0;
	ctx->spare = NULL;
	/* an image of an earlier dump in this directory is replaced, as O_TRUNC would */
	if (unlinkat(ctx->dirfd, name, 0) && errno != ENOENT)
		err = neg_errno();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", sp->fd);
	if (!err && linkat(AT_FDCWD, path, ctx->dirfd, name, AT_SYMLINK_FOLLOW))
		err = neg_errno();
	close(sp->fd);
	free(sp);
	if (err) {
		pr_errno(err, "cannot name the room made for the pages image %s", name);
		return err;
	}
	return 1;
}

void pages_spare_trim(int fd)
{
	struct stat st;

	/* the same size: what lies beyond the end is freed (shmem_setattr()) */
	if (!fstat(fd, &st) && ftruncate(fd, st.st_size))
		pr_debug("pages image: the room beyond its end stays: %m\n");
}

void pages_spare_drop(struct dump_ctx *ctx)
{
	if (!ctx->spare)
		return;
	close(ctx->spare->fd);
	free(ctx->spare);
	ctx->spare = NULL;
}
