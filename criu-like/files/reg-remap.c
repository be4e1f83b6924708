// SPDX-License-Identifier: GPL-2.0
/*
 * --link-remap (CRIU's): a regular file open in the tree whose name was
 * removed while other hard links to its inode remain (st_nlink > 0, the fd
 * link ending in " (deleted)"). Its data is on disk under the other names,
 * but no name the dump could save leads to it. With the option the dump
 * gives the inode a hidden name next to the removed one, "link_remap.ID"
 * (linkat() of the dumper's fd through /proc/self/fd, AT_SYMLINK_FOLLOW), and
 * saves it in RegFileEntry.link_remap; the restore opens the file through it
 * and removes it once the tree is about to run. A failed dump removes the
 * links it made; a dump that succeeded (with -R too) leaves them for the
 * restore; a failed restore leaves them, as the images (Documentation/files.md).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files-int.h"
#include "log.h"
#include "reg.h"
#include "restore-files-int.h"
#include "util.h"

/* One hidden link: its directory (O_PATH) and name. */
struct remap_link {
	int dirfd;
	char name[NAME_MAX + 1];
	char *path; /* as the task sees it (dump), for messages */
};

struct remap_links {
	size_t n;
	struct remap_link *v;
};

static struct remap_link *links_add(struct remap_links *l)
{
	struct remap_link *v = reallocarray(l->v, l->n + 1, sizeof(*v));

	if (!v)
		return NULL;
	l->v = v;
	memset(&v[l->n], 0, sizeof(*v));
	v[l->n].dirfd = -1;
	return &v[l->n++];
}

static void links_free(struct remap_links *l, bool remove)
{
	for (size_t i = 0; l && i < l->n; i++) {
		struct remap_link *r = &l->v[i];

		if (remove && r->dirfd >= 0) {
			if (unlinkat(r->dirfd, r->name, 0) && errno != ENOENT)
				pr_perror("cannot remove the hidden link %s: remove it by hand",
					  r->path ?: r->name);
			else
				pr_info("hidden link %s removed\n", r->path ?: r->name);
		}
		if (r->dirfd >= 0)
			close(r->dirfd);
		free(r->path);
	}
	if (l)
		free(l->v);
	free(l);
}

int link_remap_name(uint32_t id, unsigned int attempt, char *buf, size_t size)
{
	int n = attempt ? snprintf(buf, size, "link_remap.%u.%u", id, attempt)
			: snprintf(buf, size, "link_remap.%u", id);

	return n > 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

/* The directory part of @path ("/a/b" -> "/a", "/b" -> "/"), into @buf. */
static int dir_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash && slash != path ? (size_t)(slash - path) : 1;

	if (!slash || len >= size)
		return -EINVAL;
	memcpy(buf, path, len);
	buf[len] = '\0';
	return 0;
}

const char *link_remap_make(struct dump_ctx *ctx, pid_t pid, int fd, const char *path, uint32_t id)
{
	void **slot = file_kind_dump_state(ctx, &reg_kind);
	struct remap_links *l = slot ? *slot : NULL;
	char dir[PATH_MAX], where[PATH_MAX + 32], self[64], name[NAME_MAX + 1];
	struct remap_link *r;
	struct stat st, cur;
	unsigned int k;
	int dfd, err;

	if (!slot)
		return NULL;
	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return NULL;
		*slot = l;
	}
	if (fstat(fd, &st) || dir_of(path, dir, sizeof(dir))) {
		errno = EINVAL;
		return NULL;
	}
	/* the directory as the task sees it, through its root */
	snprintf(where, sizeof(where), "/proc/%d/root%s", pid, dir);
	dfd = open(where, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = errno;
		pr_perror("pid %d: %s: cannot open its directory %s for a hidden link", pid, path,
			  dir);
		errno = err;
		return NULL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	err = -EEXIST;
	for (k = 0; k < 100; k++) {
		err = link_remap_name(id, k, name, sizeof(name));
		if (err)
			break;
		if (!linkat(AT_FDCWD, self, dfd, name, AT_SYMLINK_FOLLOW))
			break;
		err = neg_errno();
		if (err != -EEXIST)
			break;
		/* left by an earlier dump of the same file, whose images are not restored yet */
		if (!fstatat(dfd, name, &cur, AT_SYMLINK_NOFOLLOW) && cur.st_dev == st.st_dev &&
		    cur.st_ino == st.st_ino) {
			err = 0;
			break;
		}
	}
	if (err) {
		pr_errno(err, "pid %d: %s: cannot link it as %s/link_remap.%u", pid, path, dir, id);
		close(dfd);
		errno = -err;
		return NULL;
	}
	r = links_add(l);
	if (!r) {
		close(dfd);
		errno = ENOMEM;
		return NULL;
	}
	r->dirfd = dfd;
	memcpy(r->name, name, sizeof(name));
	if (asprintf(&r->path, "%s%s%s", strcmp(dir, "/") ? dir : "", "/", name) < 0) {
		r->path = NULL;
		errno = ENOMEM;
		return NULL;
	}
	pr_info("pid %d: %s was removed, other links remain: hidden link %s (--link-remap)\n", pid,
		path, r->path);
	return r->path;
}

void link_remap_dump_fini(struct dump_ctx *ctx, bool resume)
{
	void **slot = file_kind_dump_state(ctx, &reg_kind);

	(void)resume;
	if (!slot)
		return;
	/* a failed dump takes back what it made; a complete one leaves them to the restore */
	links_free(*slot, ctx->failed);
	*slot = NULL;
}

/* ---- restore -------------------------------------------------------------------------------- */

int link_remap_prepare(struct restore_ctx *ctx)
{
	struct rst_kind *k = rst_kind_get(ctx, &reg_kind);
	struct remap_links *l;
	char dir[PATH_MAX];

	if (!k)
		return 0;
	for (size_t i = 0; i < k->n; i++) {
		const FileEntry *fe = ctx->files->idx.by_id[k->pos[i]];
		const RegFileEntry *e = fe->reg;
		const char *path = ctx->files->paths[k->pos[i]];
		struct remap_link *r;
		const char *base;

		if (!e || !e->has_link_remap || !path)
			continue;
		base = strrchr(path, '/');
		if (!base || !base[1] || strlen(base + 1) > NAME_MAX ||
		    dir_of(path, dir, sizeof(dir))) {
			pr_err("file %u: bad hidden link %s\n", fe->id, path);
			return -EINVAL;
		}
		l = k->priv;
		if (!l) {
			l = calloc(1, sizeof(*l));
			if (!l)
				return -ENOMEM;
			k->priv = l;
		}
		r = links_add(l);
		if (!r)
			return -ENOMEM;
		r->path = strdup(path);
		snprintf(r->name, sizeof(r->name), "%s", base + 1);
		/* opened now, in the tree's root, to remove the link from anywhere later */
		r->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (r->dirfd < 0) {
			pr_perror("file %u: cannot open the directory of its hidden link %s",
				  fe->id, path);
			return neg_errno();
		}
	}
	return 0;
}

void link_remap_restored(struct restore_ctx *ctx, bool remove)
{
	struct rst_kind *k = rst_kind_get(ctx, &reg_kind);

	if (!k)
		return;
	links_free(k->priv, remove);
	k->priv = NULL;
}
