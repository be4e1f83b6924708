// SPDX-License-Identifier: GPL-2.0
/*
 * A container whose root is an overlayfs (the runner's "ns-root: overlay":
 * the host's / as the lower layer, upper and work directories on a tmpfs of
 * the host's, as a runtime's storage). Before the container exists the test
 * makes files in its directory (the lower layer); inside it removes one (a
 * whiteout in the upper layer), changes another (copied up), makes a new
 * file and a directory, and replaces a lower directory by an opaque one.
 * After the restore the root is an overlayfs again with the same lower,
 * upper and work directories, and the container sees the same files with
 * the same contents; the lower files are untouched.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "zdtmtst.h"

#define OVERLAYFS_MAGIC 0x794c7630

static int put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ? 0 : neg_errno();
}

/* @path holds exactly @text (NULL: @path does not exist). */
static int holds(const char *path, const char *text)
{
	char buf[256];
	long n = test_read_file(path, buf, sizeof(buf));

	if (!text) {
		if (!access(path, F_OK)) {
			fail("%s exists, it was removed", path);
			return -EINVAL;
		}
		return 0;
	}
	if (n < 0 || (size_t)n != strlen(text) || memcmp(buf, text, (size_t)n)) {
		fail("%s holds \"%.*s\", expected \"%s\"", path, n < 0 ? 0 : (int)n, buf, text);
		return -EINVAL;
	}
	return 0;
}

/* The superblock options of the mount at / (mountinfo, after " - overlay "). */
static int root_options(char *buf, size_t size)
{
	char line[8192];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int found = -1;

	if (!f)
		return neg_errno();
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char mp[4096];

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 || strcmp(mp, "/"))
			continue;
		if (strncmp(sep, " - overlay ", 11))
			break;
		sep = strchr(sep + 11, ' ');
		snprintf(buf, size, "%s", sep ? sep + 1 : "");
		buf[strcspn(buf, "\n")] = '\0';
		found = 0;
	}
	fclose(f);
	return found;
}

/* One option "NAME=..." of @opts into @out. */
static void option(const char *opts, const char *name, char *out, size_t size)
{
	const char *p = strstr(opts, name);
	size_t len;

	out[0] = '\0';
	if (!p)
		return;
	len = strcspn(p, ",");
	snprintf(out, size, "%.*s", (int)len, p);
}

static int check(const char *when, const char *want_opts)
{
	static const char *const names[] = { "lowerdir=", "upperdir=", "workdir=" };
	char opts[4096], a[2048], b[2048];
	struct statfs sf;
	struct stat st;
	size_t i;

	if (statfs("/", &sf) || sf.f_type != OVERLAYFS_MAGIC || root_options(opts, sizeof(opts))) {
		fail("%s: the root is not an overlayfs (type %#lx)", when, (long)sf.f_type);
		return -EINVAL;
	}
	for (i = 0; want_opts && i < sizeof(names) / sizeof(names[0]); i++) {
		option(opts, names[i], a, sizeof(a));
		option(want_opts, names[i], b, sizeof(b));
		if (!a[0] || strcmp(a, b)) {
			fail("%s: the root's %s is \"%s\", it was \"%s\" (%s)", when, names[i], a,
			     b, opts);
			return -EINVAL;
		}
	}
	if (holds("lower-kept", "kept\n") || holds("lower-gone", NULL) ||
	    holds("lower-changed", "changed inside\n") || holds("upper-new", "new inside\n") ||
	    holds("newdir/file", "in a new directory\n") || holds("opaque/inside", "opaque\n") ||
	    holds("opaque/lower-only", NULL) || holds("lowerdir/a", "a\n"))
		return neg_errno();
	if (stat("newdir", &st) || !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != 0710) {
		fail("%s: newdir is not a directory of mode 0710", when);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const lower[] = { "lowerdir",	 "opaque",	  "lower-kept",
					     "lower-gone",	 "lower-changed", "lowerdir/a",
					     "opaque/lower-only" };
	char opts[4096];
	struct stat dir;
	size_t i;

	/* the launcher, on the host: the lower layer's files, the directory's owner's */
	if (test_launching() &&
	    (mkdir("lowerdir", 0755) || mkdir("opaque", 0755) || put("lower-kept", "kept\n") ||
	     put("lower-gone", "gone\n") || put("lower-changed", "lower\n") ||
	     put("lowerdir/a", "a\n") || put("opaque/lower-only", "lower\n") || stat(".", &dir))) {
		perror("the lower files");
		return 1;
	}
	for (i = 0; test_launching() && i < sizeof(lower) / sizeof(lower[0]); i++)
		if (lchown(lower[i], dir.st_uid, dir.st_gid)) {
			perror("the lower files' owner");
			return 1;
		}
	test_init(argc, argv);
	if (!test_in_container()) {
		fail("not in a container: run in the ns modes (skip-host)");
		return 1;
	}
	if (unlink("lower-gone") || put("lower-changed", "changed inside\n") ||
	    put("upper-new", "new inside\n") || mkdir("newdir", 0710) ||
	    put("newdir/file", "in a new directory\n") || unlink("opaque/lower-only") ||
	    rmdir("opaque") || mkdir("opaque", 0755) || put("opaque/inside", "opaque\n")) {
		fail("changing the files inside: %m");
		return 1;
	}
	if (check("before", NULL) || root_options(opts, sizeof(opts)))
		return 1;
	test_daemon();
	test_waitsig();

	if (check("after the restore", opts))
		return 1;
	pass();
	return 0;
}
