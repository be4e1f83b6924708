// SPDX-License-Identifier: GPL-2.0
/*
 * IPC namespaces nested in the tree's (systemd's PrivateIPC=, a sandbox):
 * the root stays in the tree's; child A made one of its own, with a message
 * queue and a SysV segment it attached, and forked A1 in it (which inherits
 * the attach); A's child B made another below it, with a queue and a
 * segment under the same key, and forked B1 in it; D, another child of the
 * root, stays in the root's. After the restore each task finds its own
 * namespace's objects (A and B their queue's message, A1 and B1 the
 * segment's contents at the same address), D finds no queue under that key,
 * and the namespaces are related as before: A and A1 share one, B and B1
 * another, neither the root's, and D shares the root's.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define KEY 0x1bc7e5

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
	int ok; /* 1: its objects were the expected ones after the restore */
};

struct msg {
	long type;
	char text[32];
};

static struct slot *slots;
static int go[2];

static ino_t ipc_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/ipc", &st) ? 0 : st.st_ino;
}

/* A namespace of its own with a queue holding @text and an attached segment holding it. */
static char *make_ns(const char *text)
{
	struct msg m = { .type = 1 };
	int q, s;
	char *p;

	if (unshare(CLONE_NEWIPC))
		return NULL;
	q = msgget(KEY, IPC_CREAT | 0600);
	s = shmget(KEY, 4096, IPC_CREAT | 0600);
	if (q < 0 || s < 0)
		return NULL;
	snprintf(m.text, sizeof(m.text), "%s", text);
	if (msgsnd(q, &m, sizeof(m.text), 0))
		return NULL;
	p = shmat(s, NULL, 0);
	if (p == (void *)-1)
		return NULL;
	snprintf(p, 32, "%s", text);
	return p;
}

/* After the restore (the root closes its end of the pipe): check, record the namespace. */
static void wait_and_check(int idx, const char *text, const char *seg, int read_queue)
{
	struct msg m;
	char c;
	int q;

	close(go[1]);
	while (read(go[0], &c, 1) < 0 && errno == EINTR)
		;
	slots[idx].ino = ipc_ino();
	q = msgget(KEY, 0);
	if (!text) { /* the root's namespace: nothing under the key */
		slots[idx].ok = q < 0 && errno == ENOENT;
		return;
	}
	slots[idx].ok = q >= 0 && (!seg || !strcmp(seg, text));
	if (slots[idx].ok && read_queue)
		slots[idx].ok = msgrcv(q, &m, sizeof(m.text), 0, IPC_NOWAIT) > 0 &&
				!strcmp(m.text, text);
	if (!slots[idx].ok)
		fprintf(stderr, "task %d: queue %d, segment \"%s\", expected \"%s\"\n", idx, q,
			seg ? seg : "-", text);
}

static pid_t spawn(int idx, const char *text, const char *seg)
{
	pid_t p = fork();

	if (p == 0) {
		wait_and_check(idx, text, seg, 0);
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
	char *seg = make_ns("ipc-b");
	pid_t b1;
	int ok;

	if (!seg)
		_exit(3);
	b1 = spawn(T_B1, "ipc-b", seg);
	wait_and_check(T_B, "ipc-b", NULL, 1);
	ok = b1 > 0 && reap(b1);
	_exit(ok ? 0 : 4);
}

/* A: a namespace of its own, A1 and B forked in it. */
static void task_a(void)
{
	char *seg = make_ns("ipc-a");
	pid_t a1, b;
	int ok;

	if (!seg)
		_exit(3);
	a1 = spawn(T_A1, "ipc-a", seg);
	b = fork();
	if (b == 0)
		task_b();
	wait_and_check(T_A, "ipc-a", NULL, 1);
	ok = a1 > 0 && b > 0 && reap(a1) && reap(b);
	_exit(ok ? 0 : 4);
}

int main(int argc, char **argv)
{
	pid_t a, d;
	int i, ok;

	test_init(argc, argv);
	slots = mmap(NULL, sizeof(*slots) * T_NR, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED || pipe(go)) {
		fail("setup: %m");
		return 1;
	}
	a = fork();
	if (a == 0)
		task_a();
	d = spawn(T_D, NULL, NULL);
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
			fail("task %d: wrong objects or no namespace", i);
			return 1;
		}
	if (slots[T_A].ino != slots[T_A1].ino || slots[T_B].ino != slots[T_B1].ino ||
	    slots[T_A].ino == slots[T_B].ino || slots[T_A].ino == ipc_ino() ||
	    slots[T_B].ino == ipc_ino() || slots[T_D].ino != ipc_ino()) {
		fail("the namespaces are not related as before: a %lu a1 %lu b %lu b1 %lu d %lu "
		     "root %lu",
		     (unsigned long)slots[T_A].ino, (unsigned long)slots[T_A1].ino,
		     (unsigned long)slots[T_B].ino, (unsigned long)slots[T_B1].ino,
		     (unsigned long)slots[T_D].ino, (unsigned long)ipc_ino());
		return 1;
	}
	pass();
	return 0;
}
