// SPDX-License-Identifier: GPL-2.0
/*
 * The test's root in a UTS namespace of its own, with a hostname and a
 * domain name set inside, and a child sharing it: both come back in one
 * new UTS namespace (not the host's) with the same names.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define HOST "zdtm-uts.example"
#define DOMAIN "zdtm-domain"

static int check_names(const char *who)
{
	struct utsname u;

	if (uname(&u)) {
		fail("%s: uname: %m", who);
		return neg_errno();
	}
	if (strcmp(u.nodename, HOST) || strcmp(u.domainname, DOMAIN)) {
		fail("%s: names \"%s\" \"%s\", expected \"%s\" \"%s\"", who, u.nodename,
		     u.domainname, HOST, DOMAIN);
		return -EINVAL;
	}
	return 0;
}

static ino_t uts_ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

int main(int argc, char **argv)
{
	int pfd[2], status;
	ino_t mine;
	pid_t child;
	char c;

	test_init(argc, argv);
	if (unshare(CLONE_NEWUTS) || sethostname(HOST, strlen(HOST)) ||
	    setdomainname(DOMAIN, strlen(DOMAIN))) {
		fail("cannot set up a UTS namespace: %m");
		return 1;
	}
	if (pipe(pfd)) {
		fail("pipe: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		/* waits for the parent's word after the restore, then checks its own view */
		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(2);
		_exit(check_names("child") ? 1 : 0);
	}
	close(pfd[0]);
	test_daemon();
	test_waitsig();

	if (check_names("root"))
		return 1;
	mine = uts_ino("/proc/self/ns/uts");
	if (!mine || mine == uts_ino("/proc/1/ns/uts")) {
		fail("the root is in the UTS namespace of pid 1");
		return 1;
	}
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/ns/uts", child);
		if (uts_ino(path) != mine) {
			fail("the child is in another UTS namespace than the root");
			return 1;
		}
	}
	if (write(pfd[1], "x", 1) != 1 || waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the child's check failed (status %#x)", status);
		return 1;
	}
	pass();
	return 0;
}
