// SPDX-License-Identifier: GPL-2.0
/*
 * UTS namespaces nested in the tree's (systemd's ProtectHostname=, a
 * sandbox): the root stays in the tree's; child A made one of its own with
 * its names and forked A1 in it; A's child B made another below it and
 * forked B1 in it; D, another child of the root, stays in the root's. After
 * the restore each task sees the names of its namespace, and the namespaces
 * are related as before: A and A1 share one, B and B1 another, neither the
 * root's, and D shares the root's.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

enum {
	T_A,
	T_A1,
	T_B,
	T_B1,
	T_D,
	T_NR
};

struct slot {
	ino_t ino;
	int ok; /* 1: its names were the expected ones after the restore */
};

static struct slot *slots;
static int go[2];
static char root_host[65], root_dom[65];

static ino_t uts_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/uts", &st) ? 0 : st.st_ino;
}

static int set_names(const char *host, const char *dom)
{
	return unshare(CLONE_NEWUTS) || sethostname(host, strlen(host)) ||
	       setdomainname(dom, strlen(dom));
}

/* After the restore (the root closes its end of the pipe): check the names, record the ns. */
static void wait_and_check(int idx, const char *host, const char *dom)
{
	struct utsname u;
	char c;

	close(go[1]);
	while (read(go[0], &c, 1) < 0 && errno == EINTR)
		;
	slots[idx].ino = uts_ino();
	slots[idx].ok = !uname(&u) && !strcmp(u.nodename, host) && !strcmp(u.domainname, dom);
	if (!slots[idx].ok)
		fprintf(stderr, "task %d: names \"%s\" \"%s\", expected \"%s\" \"%s\"\n", idx,
			u.nodename, u.domainname, host, dom);
}

static pid_t spawn(int idx, const char *host, const char *dom)
{
	pid_t p = fork();

	if (p == 0) {
		wait_and_check(idx, host, dom);
		_exit(0);
	}
	return p;
}

static int reap(pid_t p)
{
	int status;

	return waitpid(p, &status, 0) == p && WIFEXITED(status) && !WEXITSTATUS(status);
}

/* B: a namespace of its own below A's, and B1 in it. */
static void task_b(void)
{
	pid_t b1;
	int ok;

	if (set_names("zdtm-uts-b", "dom-b"))
		_exit(3);
	b1 = spawn(T_B1, "zdtm-uts-b", "dom-b");
	wait_and_check(T_B, "zdtm-uts-b", "dom-b");
	ok = b1 > 0 && reap(b1);
	_exit(ok ? 0 : 4);
}

/* A: a namespace of its own, A1 and B forked in it. */
static void task_a(void)
{
	pid_t a1, b;
	int ok;

	if (set_names("zdtm-uts-a", "dom-a"))
		_exit(3);
	a1 = spawn(T_A1, "zdtm-uts-a", "dom-a");
	b = fork();
	if (b == 0)
		task_b();
	wait_and_check(T_A, "zdtm-uts-a", "dom-a");
	ok = a1 > 0 && b > 0 && reap(a1) && reap(b);
	_exit(ok ? 0 : 4);
}

int main(int argc, char **argv)
{
	struct utsname u;
	pid_t a, d;
	int i, ok;

	test_init(argc, argv);
	slots = mmap(NULL, sizeof(*slots) * T_NR, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED || pipe(go) || uname(&u)) {
		fail("setup: %m");
		return 1;
	}
	snprintf(root_host, sizeof(root_host), "%s", u.nodename);
	snprintf(root_dom, sizeof(root_dom), "%s", u.domainname);
	a = fork();
	if (a == 0)
		task_a();
	d = spawn(T_D, root_host, root_dom);
	close(go[0]);
	test_daemon();
	test_waitsig();

	close(go[1]); /* every task checks its view now */
	ok = a > 0 && d > 0 && reap(a) && reap(d);
	if (!ok) {
		fail("a task failed or could not make its namespace");
		return 1;
	}
	for (i = 0; i < T_NR; i++)
		if (!slots[i].ok || !slots[i].ino) {
			fail("task %d: wrong names or no namespace", i);
			return 1;
		}
	if (slots[T_A].ino != slots[T_A1].ino || slots[T_B].ino != slots[T_B1].ino ||
	    slots[T_A].ino == slots[T_B].ino || slots[T_A].ino == uts_ino() ||
	    slots[T_B].ino == uts_ino() || slots[T_D].ino != uts_ino()) {
		fail("the namespaces are not related as before: a %lu a1 %lu b %lu b1 %lu d %lu "
		     "root %lu",
		     (unsigned long)slots[T_A].ino, (unsigned long)slots[T_A1].ino,
		     (unsigned long)slots[T_B].ino, (unsigned long)slots[T_B1].ino,
		     (unsigned long)slots[T_D].ino, (unsigned long)uts_ino());
		return 1;
	}
	uname(&u);
	if (strcmp(u.nodename, root_host) || strcmp(u.domainname, root_dom)) {
		fail("the root's names changed: \"%s\" \"%s\"", u.nodename, u.domainname);
		return 1;
	}
	pass();
	return 0;
}
