// SPDX-License-Identifier: GPL-2.0
/*
 * RLIMIT_NOFILE's soft limit lowered under the open descriptors (fds 0-40
 * open, soft limit 8, the hard one kept): the parasite has no descriptor for
 * its socket unless it raises the soft limit while it works. After the
 * restore the limits are the same (soft 8: not the raised value), every
 * descriptor is there, and new opens get descriptors under 8 only, then
 * EMFILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NFDS 64

int main(int argc, char **argv)
{
	struct rlimit before, after;
	struct stat st;
	int fds[NFDS], n, i;

	test_init(argc, argv);
	/* every descriptor under 40 taken (the holes the test's setup left too) */
	for (n = 0; n < NFDS; n++) {
		fds[n] = open("/dev/null", O_RDONLY);
		if (fds[n] < 0) {
			fail("open /dev/null: %m");
			return 1;
		}
		if (fds[n] >= 40)
			break;
	}
	if (getrlimit(RLIMIT_NOFILE, &before)) {
		fail("getrlimit: %m");
		return 1;
	}
	before.rlim_cur = 8;
	if (setrlimit(RLIMIT_NOFILE, &before)) {
		fail("setrlimit: %m");
		return 1;
	}

	test_daemon();
	test_waitsig();

	if (getrlimit(RLIMIT_NOFILE, &after) || after.rlim_cur != before.rlim_cur ||
	    after.rlim_max != before.rlim_max) {
		fail("RLIMIT_NOFILE is %lu/%lu after the restore, was %lu/%lu",
		     (unsigned long)after.rlim_cur, (unsigned long)after.rlim_max,
		     (unsigned long)before.rlim_cur, (unsigned long)before.rlim_max);
		return 1;
	}
	for (i = 0; i <= n && i < NFDS; i++)
		if (fstat(fds[i], &st) || !S_ISCHR(st.st_mode)) {
			fail("fd %d is not /dev/null after the restore", fds[i]);
			return 1;
		}
	/* still enforced: new descriptors only under 8 (where test_daemon() freed some), then EMFILE */
	for (i = 0; i <= 8; i++) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd < 0 && errno == EMFILE)
			break;
		if (fd < 0 || fd >= 8) {
			fail("an open under the lowered limit gave %d (%m)", fd);
			return 1;
		}
	}
	if (i > 8) {
		fail("9 opens under a soft limit of 8");
		return 1;
	}
	pass();
	return 0;
}
