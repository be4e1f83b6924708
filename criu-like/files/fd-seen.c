// SPDX-License-Identifier: GPL-2.0
/*
 * What a parent's fds showed (/proc/PID/fd/N's link and stat), kept for its
 * children: a child's fd that kcmp(KCMP_FILE) finds to be the same open file
 * as its parent's of that number (what fork() gave it) takes them from here,
 * and only its fdinfo (its close-on-exec bit, its locks) is read. The link
 * and the stat of /proc/PID/fd/N cost two lookups and a permission check of
 * the task each, about 60% of what an fd cost (Documentation/infect.md).
 *
 * Kept by the parent's dump (files.c, after its fds are read), read by its
 * children's once it is done (a parallel dump takes a child after its
 * parent), freed with the dump's tasks.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <linux/kcmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dump.h"
#include "files-int.h"
#include "log.h"

struct fd_seen {
	int fd;
	char *link;
	struct stat st;
};

struct fd_seen_set {
	unsigned int n;
	struct fd_seen e[]; /* by fd, ascending */
};

int fd_seen_keep(struct dump_task *dt, const struct fd_info *const *fi, unsigned int n)
{
	struct fd_seen_set *s;
	unsigned int i;

	if (!dt->t->nr_children || !n)
		return 0;
	s = calloc(1, sizeof(*s) + n * sizeof(s->e[0]));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		s->e[i].fd = fi[i]->fd;
		s->e[i].st = fi[i]->st;
		s->e[i].link = strdup(fi[i]->link);
		s->n = i + 1;
		if (!s->e[i].link) {
			fd_seen_free(s);
			return -ENOMEM;
		}
	}
	fd_seen_free(dt->fds_seen);
	dt->fds_seen = s;
	return 0;
}

const struct dump_task *fd_seen_parent(const struct dump_ctx *ctx, const struct dump_task *dt)
{
	const struct seized_task *p = dt->t->parent;

	for (unsigned int i = 0; p && i < ctx->nr_tasks; i++)
		if (ctx->tasks[i].t == p)
			return ctx->tasks[i].fds_seen ? &ctx->tasks[i] : NULL;
	return NULL;
}

bool fd_seen_take(const struct dump_task *parent, struct fd_info *f)
{
	const struct fd_seen_set *s = parent ? parent->fds_seen : NULL;
	unsigned int lo = 0, hi = s ? s->n : 0;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct fd_seen *e = &s->e[mid];

		if (e->fd < f->fd) {
			lo = mid + 1;
		} else if (e->fd > f->fd) {
			hi = mid;
		} else {
			/* the same open file as the parent's, or not taken */
			if (syscall(SYS_kcmp, f->pid, parent->t->pid, KCMP_FILE,
				    (unsigned long)f->fd, (unsigned long)e->fd))
				return false;
			f->link = strdup(e->link);
			if (!f->link)
				return false;
			f->st = e->st;
			return true;
		}
	}
	return false;
}

void fd_seen_free(struct fd_seen_set *s)
{
	for (unsigned int i = 0; s && i < s->n; i++)
		free(s->e[i].link);
	free(s);
}

/*
 * A table shared with the parent (CLONE_FILES): keeps in @fds[0..*@n) only
 * the fds the parent's listing had. The tree is frozen, so any other is a
 * parasite's own of the moment in that table: a pipe it was handed to
 * vmsplice the parent's pages into while this child's dump listed the fds
 * (a parallel dump takes the child once the parent's memory plan is made).
 * Listed, it failed the dump when gone before its readlink (zdtm
 * clone_files in CI), or was saved as one of the task's when still there.
 */
void fd_seen_filter(const struct dump_task *parent, pid_t pid, int *fds, unsigned int *n)
{
	const struct fd_seen_set *s = parent ? parent->fds_seen : NULL;
	unsigned int i, j = 0, k = 0;

	if (!s)
		return;
	for (i = 0; i < *n; i++) {
		while (k < s->n && s->e[k].fd < fds[i])
			k++;
		if (k < s->n && s->e[k].fd == fds[i])
			fds[j++] = fds[i];
		else
			pr_debug(
				"pid %d fd %d: not in the listing of its parent %d, whose table it "
				"shares: a parasite's, left out\n",
				pid, fds[i], parent->t->pid);
	}
	*n = j;
}
