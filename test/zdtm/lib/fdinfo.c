// SPDX-License-Identifier: GPL-2.0
/* What tests read back from /proc/self/fdinfo, and a pidfd's exit status. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "zdtmtst.h"

/* PIDFD_GET_INFO (6.13), not in every glibc's headers yet */
struct pidfd_info_ {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
	uint32_t cmask, csig;
	uint64_t supported;
};
#define PIDFD_GET_INFO_ _IOWR(0xFF, 11, struct pidfd_info_)
#define PIDFD_INFO_EXIT_ (1UL << 3)

int test_pidfd_exit_status(int pfd)
{
	struct pidfd_info_ i = { .mask = PIDFD_INFO_EXIT_ };

	if (ioctl(pfd, PIDFD_GET_INFO_, &i))
		return -errno;
	if (!(i.mask & PIDFD_INFO_EXIT_))
		return -ENODATA;
	return i.exit_code;
}

int test_fdinfo_pid(int fd)
{
	char path[64], buf[512], *p;
	int pid;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return INT_MIN;
	p = strstr(buf, "\nPid:");
	if (!p || sscanf(p, "\nPid: %d", &pid) != 1)
		return INT_MIN;
	return pid;
}

int test_fdinfo_lines(int fd, const char *prefix, char *out, size_t size)
{
	char path[64], buf[8192], *p, *nl;
	size_t len = 0;
	long n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	n = test_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	out[0] = '\0';
	for (p = buf; (p = strstr(p, prefix)); p = nl) {
		nl = strchrnul(p, '\n');
		len += (size_t)snprintf(out + len, size - len, "%.*s;", (int)(nl - p), p);
		if (len >= size)
			return -ENOBUFS;
	}
	return 0;
}
