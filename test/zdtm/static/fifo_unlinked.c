// SPDX-License-Identifier: GPL-2.0
/*
 * Removed FIFOs: one opened for reading and for writing by two descriptions,
 * given to 1000:1001 with mode 0640, 5 bytes unread, then removed; another
 * opened O_RDWR with data, removed, and a regular file made at its name.
 * After SIGTERM both must still be removed FIFOs (nlink 0) with their data,
 * the two descriptions of the first on one FIFO (a write through one is read
 * through the other), the owner and mode kept, and the regular file untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

int main(int argc, char **argv)
{
	struct stat a, b, c;
	int rd, wr, rw, reg;
	char buf[16];

	test_init(argc, argv);
	if (mkfifo("fu1.fifo", 0600) || mkfifo("fu2.fifo", 0600) || chown("fu1.fifo", 1000, 1001) ||
	    chmod("fu1.fifo", 0640))
		goto err;
	rd = open("fu1.fifo", O_RDONLY | O_NONBLOCK);
	wr = open("fu1.fifo", O_WRONLY);
	rw = open("fu2.fifo", O_RDWR);
	if (rd < 0 || wr < 0 || rw < 0 || write(wr, "hello", 5) != 5 || write(rw, "two", 3) != 3 ||
	    unlink("fu1.fifo") || unlink("fu2.fifo"))
		goto err;
	reg = open("fu2.fifo", O_RDWR | O_CREAT | O_EXCL, 0600);
	if (reg < 0 || write(reg, "regular", 7) != 7)
		goto err;
	test_daemon();
	test_waitsig();

	if (fstat(rd, &a) || fstat(wr, &b) || fstat(rw, &c) || !S_ISFIFO(a.st_mode) ||
	    a.st_ino != b.st_ino || a.st_nlink || c.st_nlink || !S_ISFIFO(c.st_mode) ||
	    a.st_uid != 1000 || a.st_gid != 1001 || (a.st_mode & 07777) != 0640) {
		fail("fu1: ino %lu/%lu nlink %lu %u:%u mode %o; fu2 nlink %lu mode %o",
		     (unsigned long)a.st_ino, (unsigned long)b.st_ino, (unsigned long)a.st_nlink,
		     a.st_uid, a.st_gid, a.st_mode, (unsigned long)c.st_nlink, c.st_mode);
		return 1;
	}
	if (read(rd, buf, sizeof(buf)) != 5 || memcmp(buf, "hello", 5) ||
	    write(wr, "again", 5) != 5 || read(rd, buf, sizeof(buf)) != 5 ||
	    memcmp(buf, "again", 5)) {
		fail("fu1: the data or the link between its two ends changed");
		return 1;
	}
	if (read(rw, buf, sizeof(buf)) != 3 || memcmp(buf, "two", 3) ||
	    pread(reg, buf, 7, 0) != 7 || memcmp(buf, "regular", 7)) {
		fail("fu2's data or the regular file at its name changed");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
