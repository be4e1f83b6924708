// SPDX-License-Identifier: GPL-2.0
/*
 * Lowered resource limits: RLIMIT_NOFILE 200/1000, RLIMIT_CORE 0/0,
 * RLIMIT_FSIZE 1 MiB soft, RLIMIT_STACK 4 MiB soft, RLIMIT_NPROC, RLIMIT_CPU,
 * RLIMIT_MSGQUEUE, RLIMIT_MEMLOCK, RLIMIT_NICE, RLIMIT_SIGPENDING lowered
 * too. After SIGTERM getrlimit() must give the same pairs for all of them
 * (and /proc/self/limits the same text), and the limits must act: no fd at
 * or above 200, and a write past 1 MiB stops at 1 MiB (SIGXFSZ ignored).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "zdtmtst.h"

struct lim {
	int res;
	struct rlimit set;
};

static struct lim lims[] = {
	{ RLIMIT_NOFILE, { 200, 1000 } },
	{ RLIMIT_CORE, { 0, 0 } },
	{ RLIMIT_FSIZE, { 1 << 20, RLIM_INFINITY } },
	{ RLIMIT_STACK, { 4 << 20, RLIM_INFINITY } },
	{ RLIMIT_NPROC, { 5000, 6000 } },
	{ RLIMIT_CPU, { 3600, 7200 } },
	{ RLIMIT_MSGQUEUE, { 100000, 200000 } },
	{ RLIMIT_MEMLOCK, { 1 << 16, 1 << 17 } },
	{ RLIMIT_NICE, { 5, 10 } },
	{ RLIMIT_SIGPENDING, { 1000, 2000 } },
};

#define NLIMS (sizeof(lims) / sizeof(lims[0]))

static int acts(void)
{
	static char buf[64 << 10];
	int fd;
	off_t end;

	if (dup2(0, 200) != -1 || errno != EBADF || (fd = fcntl(0, F_DUPFD, 199)) != 199 ||
	    close(fd)) {
		fail("RLIMIT_NOFILE does not act: dup2 to fd 200 allowed or fd 199 refused");
		return 1;
	}
	fd = open("rlimits.data", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || lseek(fd, (1 << 20) - sizeof(buf) / 2, SEEK_SET) < 0) {
		fail("open: %m");
		return 1;
	}
	/* Cut at the limit, the next write fails with EFBIG. */
	if (write(fd, buf, sizeof(buf)) != sizeof(buf) / 2 || write(fd, buf, 1) != -1 ||
	    errno != EFBIG || (end = lseek(fd, 0, SEEK_END)) != 1 << 20) {
		fail("RLIMIT_FSIZE does not act");
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static char limits0[4096], limits[4096];

	test_init(argc, argv);
	signal(SIGXFSZ, SIG_IGN);
	for (size_t i = 0; i < NLIMS; i++) {
		struct rlimit *l = &lims[i].set, cur;

		/* Only lower: raising a hard limit needs CAP_SYS_RESOURCE (not in containers). */
		if (getrlimit(lims[i].res, &cur)) {
			fail("getrlimit: %m");
			return 1;
		}
		if (l->rlim_max > cur.rlim_max)
			l->rlim_max = cur.rlim_max;
		if (l->rlim_cur > l->rlim_max)
			l->rlim_cur = l->rlim_max;
		if (setrlimit(lims[i].res, l)) {
			fail("setrlimit %d: %m", lims[i].res);
			return 1;
		}
	}
	if (test_read_file("/proc/self/limits", limits0, sizeof(limits0)) < 0 || acts())
		return 1;
	test_daemon();
	test_waitsig();

	for (size_t i = 0; i < NLIMS; i++) {
		struct rlimit cur;

		if (getrlimit(lims[i].res, &cur) || cur.rlim_cur != lims[i].set.rlim_cur ||
		    cur.rlim_max != lims[i].set.rlim_max) {
			fail("limit %d: %lu/%lu, expected %lu/%lu", lims[i].res,
			     (unsigned long)cur.rlim_cur, (unsigned long)cur.rlim_max,
			     (unsigned long)lims[i].set.rlim_cur,
			     (unsigned long)lims[i].set.rlim_max);
			return 1;
		}
	}
	if (test_read_file("/proc/self/limits", limits, sizeof(limits)) < 0 ||
	    strcmp(limits, limits0)) {
		fail("/proc/self/limits changed");
		return 1;
	}
	if (acts())
		return 1;
	pass();
	return 0;
}
