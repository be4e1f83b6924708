// SPDX-License-Identifier: GPL-2.0
/*
 * What the runner compares before a dump and after the restore (or after a
 * dump with --leave-running): for every process of the test tree, its pid,
 * /proc/PID/maps and a few /proc/PID/status fields.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "runner.h"

static const char *const status_keys[] = {
	"Uid:", "Gid:", "Groups:", "SigBlk:", "SigIgn:", "SigCgt:", "CapEff:", "Umask:",
};

/*
 * The kernel may split or merge VMAs differently for the same memory: two
 * adjacent anonymous areas with different anon_vmas (one inherited through
 * fork) stay apart, a restore that maps them at once gets one area. Like
 * CRIU's zdtm, compare maps with adjacent compatible areas merged: same
 * permissions, device, inode and name, and for files a contiguous offset.
 */
struct map_line {
	unsigned long start, end, off, ino;
	char perms[8], dev[16];
	const char *name; /* rest of the line */
	int name_len;
};

static bool parse_map_line(const char *l, int len, struct map_line *m)
{
	int n = 0;

	if (sscanf(l, "%lx-%lx %7s %lx %15s %lu %n", &m->start, &m->end, m->perms, &m->off, m->dev,
		   &m->ino, &n) < 6)
		return false;
	if (n > len)
		n = len;
	m->name = l + n;
	m->name_len = len - n;
	return true;
}

static bool can_merge(const struct map_line *a, const struct map_line *b)
{
	return a->end == b->start && !strcmp(a->perms, b->perms) && !strcmp(a->dev, b->dev) &&
	       a->ino == b->ino && a->name_len == b->name_len &&
	       !memcmp(a->name, b->name, (size_t)a->name_len) &&
	       (a->ino == 0 || a->off + (a->end - a->start) == b->off);
}

/*
 * An anonymous shared mapping is backed by an inode of the internal shmem
 * mount ("/dev/zero (deleted)"), and a mapping of an unlinked file by an
 * inode without a name: a restore has to create new ones for both. What must
 * stay is which processes share which object: the inode of a "(deleted)"
 * mapping (and of an anonymous inode's, "anon_inode:[io_uring]") is replaced
 * by its ordinal of first appearance in the tree (pids ascending, then
 * addresses); private hugetlb memory's by 0. So is the inode of a packet
 * socket's rings, whose name (with that inode) is cut.
 */
struct deleted_ids {
	unsigned long ino[256];
	int n;
};

static unsigned long deleted_ordinal(struct deleted_ids *ids, struct map_line *m)
{
	static const char deleted[] = " (deleted)";
	const int dl = sizeof(deleted) - 1;
	int i;

	static const char huge[] = "/anon_hugepage (deleted)";
	static const char anon[] = "anon_inode:";
	bool anon_inode = m->name_len > (int)sizeof(anon) - 1 &&
			  !memcmp(m->name, anon, sizeof(anon) - 1);

	/* the rings of a packet socket ("socket:[INO]"): a new socket at restore */
	if (m->name_len > 8 && !memcmp(m->name, "socket:[", 8)) {
		m->name = "socket:";
		m->name_len = 7;
	} else if (!anon_inode &&
		   (m->name_len < dl || memcmp(m->name + m->name_len - dl, deleted, dl))) {
		/* a file that stays (an anonymous inode, io_uring's rings, is made anew) */
		return m->ino;
	}
	/*
	 * private hugetlb memory (MAP_HUGETLB): each mmap() has a hidden inode,
	 * which a fork shares; restored, a child maps its own: not state
	 */
	if (m->name_len == sizeof(huge) - 1 && !memcmp(m->name, huge, sizeof(huge) - 1) &&
	    m->perms[3] == 'p')
		return 0;
	for (i = 0; i < ids->n && ids->ino[i] != m->ino; i++)
		;
	if (i == ids->n && ids->n < (int)ARRAY_SIZE(ids->ino))
		ids->ino[ids->n++] = m->ino;
	return i + 1;
}

/*
 * @rootdev: the anonymous device ("00:NN") of the tree's root filesystem
 * when it has one (an overlayfs root: a new superblock at each restore, its
 * files the same), else "": compared as "root".
 */
static char *merge_maps(char *maps, struct deleted_ids *ids, const char *rootdev)
{
	size_t cap = strlen(maps) + 1, used = 0;
	char *out = malloc(cap);
	struct map_line cur, next;
	bool have = false;

	if (!out)
		return maps;
	out[0] = '\0'; /* a zombie has no maps at all */
	for (const char *l = maps; *l;) {
		int ll = (int)strcspn(l, "\n");

		if (!parse_map_line(l, ll, &next)) {
			free(out);
			return maps;
		}
		/* the kernel's out-of-line stepping page: left out by --allow-uprobes,
		 * made again by the kernel on the next uprobe hit */
		if (next.name_len == 9 && !memcmp(next.name, "[uprobes]", 9)) {
			l += ll;
			if (*l)
				l++;
			continue;
		}
		next.ino = deleted_ordinal(ids, &next);
		if (rootdev[0] && !strcmp(next.dev, rootdev))
			snprintf(next.dev, sizeof(next.dev), "root");
		if (have && can_merge(&cur, &next)) {
			cur.end = next.end;
		} else {
			if (have)
				used += (size_t)snprintf(out + used, cap - used,
							 "%lx-%lx %s %08lx %s %lu %.*s\n",
							 cur.start, cur.end, cur.perms, cur.off,
							 cur.dev, cur.ino, cur.name_len, cur.name);
			cur = next;
			have = true;
		}
		l += ll;
		if (*l)
			l++;
	}
	if (have)
		snprintf(out + used, cap - used, "%lx-%lx %s %08lx %s %lu %.*s\n", cur.start,
			 cur.end, cur.perms, cur.off, cur.dev, cur.ino, cur.name_len, cur.name);
	free(maps);
	return out;
}

/* The status lines we compare, in a fixed order. */
static char *status_fields(pid_t pid)
{
	char path[64], *all, *out;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	all = slurp(path);
	if (!all)
		return NULL;
	out = calloc(1, strlen(all) + 1);
	for (size_t k = 0; out && k < ARRAY_SIZE(status_keys); k++) {
		size_t kl = strlen(status_keys[k]);

		for (char *l = all; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			size_t ll = strcspn(l, "\n");

			if (strncmp(l, status_keys[k], kl))
				continue;
			memcpy(out + len, l, ll);
			len += ll;
			out[len++] = '\n';
			break;
		}
	}
	free(all);
	return out;
}

static int cmp_pair(const void *a, const void *b)
{
	return ((const pid_t *)a)[0] - ((const pid_t *)b)[0];
}

int snap_take(struct tree_snap *s, pid_t root)
{
	_cleanup_free_ pid_t *pids = NULL, *pairs = NULL;
	struct deleted_ids ids = { .n = 0 };
	unsigned int levels = ns_levels(root);
	char path[64], rootdev[16] = "";
	struct stat st;
	size_t n = 0;
	int ret;

	s->p = NULL;
	s->n = 0;
	if (!levels)
		return -ESRCH;
	ret = descendants(root, &pids, &n);
	if (ret)
		return ret;
	pids[n++] = root; /* descendants() leaves room for one more */
	snprintf(path, sizeof(path), "/proc/%d/root", root);
	if (!stat(path, &st) && !major(st.st_dev))
		snprintf(rootdev, sizeof(rootdev), "%02x:%02x", major(st.st_dev), minor(st.st_dev));
	/* (pid at the root's level, host pid), in the order of the first */
	pairs = calloc(2 * n, sizeof(*pairs));
	if (!pairs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		pairs[2 * i] = ns_pid_at(pids[i], levels - 1);
		pairs[2 * i + 1] = pids[i];
	}
	qsort(pairs, n, 2 * sizeof(*pairs), cmp_pair);
	s->p = calloc(n, sizeof(*s->p));
	if (!s->p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		pid_t host = pairs[2 * i + 1];

		s->p[i].pid = pairs[2 * i];
		s->p[i].host = host;
		s->p[i].state = proc_state(host);
		snprintf(path, sizeof(path), "/proc/%d/maps", host);
		s->p[i].maps = slurp(path);
		if (s->p[i].maps)
			s->p[i].maps = merge_maps(s->p[i].maps, &ids, rootdev);
		s->p[i].status = status_fields(host);
		s->n++;
		if (!s->p[i].maps || !s->p[i].status || s->p[i].pid <= 0) {
			pr_perror("reading /proc/%d", host);
			return -ESRCH;
		}
	}
	return 0;
}

void snap_free(struct tree_snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i].maps);
		free(s->p[i].status);
	}
	free(s->p);
	s->p = NULL;
	s->n = 0;
}

static bool has_line(const char *text, const char *line, size_t len)
{
	for (const char *l = text; *l;) {
		size_t ll = strcspn(l, "\n");

		if (ll == len && !memcmp(l, line, len))
			return true;
		l += ll;
		if (*l)
			l++;
	}
	return false;
}

/* Lines of @a missing from @b, prefixed with @sign: enough for maps and status. */
static void diff_lines(FILE *f, const char *a, const char *b, char sign)
{
	for (const char *l = a; *l;) {
		size_t ll = strcspn(l, "\n");

		if (!has_line(b, l, ll))
			fprintf(f, "  %c %.*s\n", sign, (int)ll, l);
		l += ll;
		if (*l)
			l++;
	}
}

static int compare_one(const struct proc_snap *a, const struct proc_snap *b, FILE *diff)
{
	int ret = 0;

	if (strcmp(a->maps, b->maps)) {
		fprintf(diff, "pid %d: /proc/PID/maps differs (- before, + after):\n", a->pid);
		diff_lines(diff, a->maps, b->maps, '-');
		diff_lines(diff, b->maps, a->maps, '+');
		ret = -EINVAL;
	}
	if (strcmp(a->status, b->status)) {
		fprintf(diff, "pid %d: /proc/PID/status differs (- before, + after):\n", a->pid);
		diff_lines(diff, a->status, b->status, '-');
		diff_lines(diff, b->status, a->status, '+');
		ret = -EINVAL;
	}
	return ret;
}

int snap_compare(const struct tree_snap *a, const struct tree_snap *b, FILE *diff)
{
	int ret = 0;
	size_t i = 0, j = 0;

	/* Both are sorted by pid: walk them together. */
	while (i < a->n || j < b->n) {
		if (j == b->n || (i < a->n && a->p[i].pid < b->p[j].pid)) {
			fprintf(diff, "pid %d: present before, missing after\n", a->p[i++].pid);
			ret = -EINVAL;
		} else if (i == a->n || b->p[j].pid < a->p[i].pid) {
			fprintf(diff, "pid %d: missing before, present after\n", b->p[j++].pid);
			ret = -EINVAL;
		} else {
			if (compare_one(&a->p[i++], &b->p[j++], diff))
				ret = -EINVAL;
		}
	}
	return ret;
}
