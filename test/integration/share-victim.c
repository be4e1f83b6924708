// SPDX-License-Identifier: GPL-2.0
/*
 * Victim of share-refused.sh: a process tree sharing an fs context or an fd
 * table in a way criu-like refuses. argv[1] names the shape:
 *   fs-sibling    two children share one fs context (CLONE_FS), their parent
 *                 has its own since (unshare(CLONE_FS))
 *   fs-thread     a thread with an fs context of its own (unshare(CLONE_FS))
 *   files-thread  a thread with an fd table of its own (unshare(CLONE_FILES))
 *   files-sibling two children share one fd table (CLONE_FILES), their parent
 *                 has its own since (unshare(CLONE_FILES))
 *   files-outside a child shares its parent's fd table: share-refused.sh
 *                 dumps the child alone
 *   fs-chroot     a child shares its parent's fs context, whose root is a chroot
 *   fs-outside    a child shares its parent's fs context: share-refused.sh
 *                 dumps the child alone
 *   files-child   a child shares its parent's fd table; both wait in pause()
 *                 (pidns-init-watch.sh: the parent is the init of a pid
 *                 namespace)
 * It prints "ready PID" (the pid to dump) and echoes stdin to stdout (files-child:
 * reads nothing).
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char stack1[65536] __attribute__((aligned(16)));
static char stack2[65536] __attribute__((aligned(16)));
static pthread_barrier_t barrier;

static int sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static void *unsharer(void *arg)
{
	if (unshare((int)(long)arg))
		perror("unshare");
	pthread_barrier_wait(&barrier);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	pid_t dump = getpid(), c;
	pthread_t th;
	char ch;

	if (!strcmp(how, "fs-sibling") || !strcmp(how, "files-sibling")) {
		int flag = how[1] == 's' ? CLONE_FS : CLONE_FILES;

		if (clone(sleeper, stack1 + sizeof(stack1), flag | SIGCHLD, NULL) < 0 ||
		    clone(sleeper, stack2 + sizeof(stack2), flag | SIGCHLD, NULL) < 0 ||
		    unshare(flag))
			return 1;
	} else if (!strcmp(how, "files-child")) {
		if (clone(sleeper, stack1 + sizeof(stack1), CLONE_FILES | SIGCHLD, NULL) < 0)
			return 1;
		printf("ready %d\n", dump);
		fflush(stdout);
		return sleeper(NULL);
	} else if (!strcmp(how, "files-outside")) {
		dump = clone(sleeper, stack1 + sizeof(stack1), CLONE_FILES | SIGCHLD, NULL);
		if (dump < 0)
			return 1;
	} else if (!strcmp(how, "fs-thread") || !strcmp(how, "files-thread")) {
		pthread_barrier_init(&barrier, NULL, 2);
		if (pthread_create(&th, NULL, unsharer,
				   (void *)(long)(how[1] == 's' ? CLONE_FS : CLONE_FILES)))
			return 1;
		pthread_barrier_wait(&barrier);
	} else if (!strcmp(how, "fs-chroot") || !strcmp(how, "fs-outside")) {
		if (how[3] == 'c' && (argc < 3 || chroot(argv[2]) || chdir("/")))
			return 1;
		c = clone(sleeper, stack1 + sizeof(stack1), CLONE_FS | SIGCHLD, NULL);
		if (c < 0)
			return 1;
		if (how[3] == 'o')
			dump = c;
	} else {
		return 2;
	}
	printf("ready %d\n", dump);
	fflush(stdout);
	while (read(0, &ch, 1) == 1)
		if (write(1, &ch, 1) != 1)
			return 1;
	return 0;
}
