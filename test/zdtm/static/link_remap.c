// SPDX-License-Identifier: GPL-2.0
/*
 * --link-remap (Documentation/files.md): a file opened under one name, given
 * a second hard link, then its first name removed: st_nlink 1, the fd link
 * "NAME (deleted)". The dump (with --link-remap) gives the inode a hidden
 * link next to the removed name; after the restore the fd must be the same
 * inode as the remaining link, at its position, with its data, writable
 * (what it writes is seen through the other link), and the hidden link must
 * be gone: the directory holds one name of the inode again.
 *
 * Without a restore (dump -R) the hidden link stays for a later restore:
 * then the test removes it itself at the end (its fd still shows the first
 * name, which tells it was not restored).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define FIRST "link_remap.first"
#define OTHER "link_remap.other"
#define SIZE (64 * 1024)
#define POS 4321

/* Names in the current directory that lead to @st's inode, but OTHER; -1 on error. */
static int hidden_names(const struct stat *st, bool remove)
{
	DIR *d = opendir(".");
	struct dirent *e;
	struct stat s;
	int n = 0;

	if (!d)
		return neg_errno();
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, OTHER) || lstat(e->d_name, &s) || s.st_ino != st->st_ino ||
		    s.st_dev != st->st_dev)
			continue;
		n++;
		if (remove)
			unlink(e->d_name);
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	static unsigned char buf[SIZE];
	struct stat st0, st, other;
	char path[64], fdlink[4096];
	uint32_t v = 0x5eed1e55, got = 0;
	ssize_t n;
	int fd, ofd;

	test_init(argc, argv);
	datagen(buf, SIZE, 33);
	unlink(FIRST);
	unlink(OTHER);
	fd = open(FIRST, O_RDWR | O_CREAT | O_EXCL, 0640);
	if (fd < 0 || write(fd, buf, SIZE) != SIZE || lseek(fd, POS, SEEK_SET) != POS ||
	    link(FIRST, OTHER) || unlink(FIRST) || fstat(fd, &st0)) {
		fail("setup: %m");
		return 1;
	}
	if (st0.st_nlink != 1) {
		fail("setup: nlink %lu", (unsigned long)st0.st_nlink);
		return 1;
	}

	test_daemon();
	test_waitsig();

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, fdlink, sizeof(fdlink) - 1);
	fdlink[n > 0 ? n : 0] = '\0';
	if (fstat(fd, &st) || stat(OTHER, &other)) {
		fail("stat after the restore: %m");
		return 1;
	}
	if (st.st_dev != other.st_dev || st.st_ino != other.st_ino || st.st_size != SIZE) {
		fail("the fd is not the file of %s any more (size %ld)", OTHER, (long)st.st_size);
		return 1;
	}
	if (lseek(fd, 0, SEEK_CUR) != POS || pread(fd, buf, SIZE, 0) != SIZE ||
	    datachk(buf, SIZE, 33, NULL)) {
		fail("position %ld or contents differ", (long)lseek(fd, 0, SEEK_CUR));
		return 1;
	}
	ofd = open(OTHER, O_RDONLY);
	if (pwrite(fd, &v, sizeof(v), 100) != sizeof(v) || ofd < 0 ||
	    pread(ofd, &got, sizeof(got), 100) != sizeof(got) || got != v) {
		fail("a write through the fd is not seen through %s", OTHER);
		return 1;
	}
	close(ofd);
	if (strstr(fdlink, "/" FIRST " (deleted)")) {
		/* not restored (dump -R): the hidden link waits for a restore; ours to clean */
		test_msg("not restored (fd %s): removing the hidden link\n", fdlink);
		hidden_names(&st, true);
	} else if (hidden_names(&st, false) != 0 || st.st_nlink != 1) {
		fail("a hidden link is left after the restore (nlink %lu, fd %s)",
		     (unsigned long)st.st_nlink, fdlink);
		hidden_names(&st, true);
		return 1;
	}
	unlink(OTHER);
	pass();
	return 0;
}
