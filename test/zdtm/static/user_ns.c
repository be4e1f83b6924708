// SPDX-License-Identifier: GPL-2.0
/*
 * The test in a user namespace of its own (uid and gid map 0 100000 65536,
 * setgroups allowed), the init of pid, UTS and IPC namespaces made with it
 * (so owned by it): root inside, a hostname, a file it created and gave to
 * uid 1000 and gid 2000 inside, and a child with uids 1000/1001/1002, gids
 * 1000/1001/1002, groups 1000 and 2000 and no capabilities. After the
 * restore, both see the same ids, maps, setgroups, capabilities and
 * hostname from inside, the pids inside are kept, the file is still owned
 * by 1000:2000 inside (101000:102000 on the host), and the user namespace
 * is not the host's and owns the pid, UTS and IPC namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "zdtmtst.h"

#define HOST "zdtm-userns"
#define MAP "0 100000 65536"

static char file[64];

static int read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return neg_errno();
	buf[n] = '\0';
	return 0;
}

/* "0 100000 65536" whatever the kernel's padding. */
static int check_map(const char *who, const char *name)
{
	char path[64], buf[128], got[128];
	unsigned int a, b, c;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	if (read_text(path, buf, sizeof(buf)) || sscanf(buf, "%u %u %u", &a, &b, &c) != 3) {
		fail("%s: cannot read %s", who, path);
		return -EINVAL;
	}
	snprintf(got, sizeof(got), "%u %u %u", a, b, c);
	if (strcmp(got, MAP) || strchr(strchr(buf, '\n') ?: "", ' ')) {
		fail("%s: %s is \"%s\", expected one line \"%s\"", who, name, buf, MAP);
		return -EINVAL;
	}
	return 0;
}

static unsigned long long cap_eff(void)
{
	char buf[2048], *p;

	if (read_text("/proc/self/status", buf, sizeof(buf)) || !(p = strstr(buf, "CapEff:")))
		return ~0ULL;
	return strtoull(p + 7, NULL, 16);
}

static int check_ids(const char *who, uid_t u0, uid_t u1, uid_t u2, gid_t g0, gid_t g1, gid_t g2,
		     const gid_t *groups, int ngroups, bool caps)
{
	uid_t r, e, s;
	gid_t gr, ge, gs, g[8];
	int n = getgroups(8, g);
	char buf[64], host[64];

	if (getresuid(&r, &e, &s) || getresgid(&gr, &ge, &gs) || n < 0) {
		fail("%s: cannot read its ids: %m", who);
		return neg_errno();
	}
	if (r != u0 || e != u1 || s != u2 || gr != g0 || ge != g1 || gs != g2) {
		fail("%s: uids %u %u %u gids %u %u %u, expected %u %u %u and %u %u %u", who, r, e,
		     s, gr, ge, gs, u0, u1, u2, g0, g1, g2);
		return -EINVAL;
	}
	if (n != ngroups || (n && memcmp(g, groups, n * sizeof(gid_t)))) {
		fail("%s: %d groups (first %u), expected %d", who, n, n ? g[0] : 0, ngroups);
		return -EINVAL;
	}
	if ((cap_eff() == 0) == caps) {
		fail("%s: effective capabilities %llx", who, cap_eff());
		return -EINVAL;
	}
	if (check_map(who, "uid_map") || check_map(who, "gid_map"))
		return neg_errno();
	if (read_text("/proc/self/setgroups", buf, sizeof(buf)) || strcmp(buf, "allow\n")) {
		fail("%s: setgroups is \"%s\"", who, buf);
		return -EINVAL;
	}
	if (gethostname(host, sizeof(host)) || strcmp(host, HOST)) {
		fail("%s: hostname \"%s\"", who, host);
		return -EINVAL;
	}
	return 0;
}

static uint64_t ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint64_t)st.st_ino;
}

/*
 * Its user namespace (not the host's: its uid_map was checked) owns its pid,
 * uts and ipc namespaces.
 */
static int check_owners(void)
{
	static const char *const kinds[] = { "pid", "uts", "ipc" };
	int u = open("/proc/self/ns/user", O_RDONLY);
	size_t i;

	if (u < 0) {
		fail("cannot open its user namespace: %m");
		return neg_errno();
	}
	for (i = 0; i < 3; i++) {
		char path[64];
		int fd, o;

		snprintf(path, sizeof(path), "/proc/self/ns/%s", kinds[i]);
		fd = open(path, O_RDONLY);
		o = fd < 0 ? -1 : ioctl(fd, NS_GET_USERNS);
		if (o < 0 || ino_of(o) != ino_of(u)) {
			fail("its %s namespace is not owned by its user namespace", kinds[i]);
			return -EINVAL;
		}
		close(o);
		close(fd);
	}
	return 0;
}

static void child_main(int rfd)
{
	static const gid_t groups[] = { 1000, 2000 };
	char c;

	if (setgroups(2, groups) || setresgid(1000, 1001, 1002) || setresuid(1000, 1001, 1002)) {
		fail("child: cannot take its ids: %m");
		_exit(1);
	}
	if (read(rfd, &c, 1) != 1)
		_exit(2);
	_exit(check_ids("child", 1000, 1001, 1002, 1000, 1001, 1002, groups, 2, false) ? 1 : 0);
}

int main(int argc, char **argv)
{
	int pfd[2], status, fd;
	struct stat st;
	pid_t child;

	test_userns(MAP, false);
	test_init_ns(argc, argv, CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC);
	if (getpid() != 1 || sethostname(HOST, strlen(HOST))) {
		fail("not the init of its pid namespace, or no hostname: %m");
		return 1;
	}
	snprintf(file, sizeof(file), "/tmp/zdtm-user_ns.XXXXXX");
	fd = mkstemp(file);
	if (fd < 0 || fchown(fd, 1000, 2000)) {
		fail("cannot create %s owned by 1000:2000 inside: %m", file);
		return 1;
	}
	close(fd);
	if (pipe(pfd)) {
		fail("pipe: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		close(pfd[1]);
		child_main(pfd[0]);
	}
	close(pfd[0]);
	test_daemon();
	test_waitsig();

	if (check_ids("root", 0, 0, 0, 0, 0, 0, NULL, 0, true) || check_owners())
		goto out;
	if (stat(file, &st) || st.st_uid != 1000 || st.st_gid != 2000) {
		fail("%s is not owned by 1000:2000 inside", file);
		goto out;
	}
	if (child != 2) {
		fail("the child is pid %d inside, not 2", child);
		goto out;
	}
	if (write(pfd[1], "x", 1) != 1 || waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the child's check failed (status %#x)", status);
		goto out;
	}
	unlink(file);
	pass();
	return 0;
out:
	unlink(file);
	return 1;
}
