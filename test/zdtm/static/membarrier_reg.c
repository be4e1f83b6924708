// SPDX-License-Identifier: GPL-2.0
/*
 * membarrier(2) registrations: the process registers PRIVATE_EXPEDITED and
 * PRIVATE_EXPEDITED_RSEQ (and SYNC_CORE where the kernel has it) after it
 * forked a child, which registers nothing (a fork inherits them). After SIGTERM the registered commands work in
 * the process (0, not EPERM) and still fail with EPERM in the child.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int mb(int cmd)
{
	return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

int main(int argc, char **argv)
{
	int supported, sync_core, p[2], q[2], st;
	char c;
	pid_t child;

	test_init(argc, argv);
	supported = mb(MEMBARRIER_CMD_QUERY);
	sync_core = supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE);
	if (supported < 0 || pipe(p) || pipe(q)) {
		fail("setup: %m");
		return 1;
	}
	child = fork();
	if (child == 0) {
		/* forked before the registrations (a fork inherits them) */
		if (read(q[0], &c, 1) != 1)
			_exit(1);
		_exit(mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == -1 && errno == EPERM ? 0 : 2);
	}
	if (child < 0 || mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) ||
	    mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ) ||
	    (sync_core && mb(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE))) {
		fail("setup: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED) || mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) ||
	    (sync_core && mb(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE))) {
		fail("a registered membarrier command fails after the restore: %m");
		return 1;
	}
	if (write(q[1], "c", 1) != 1 || waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fail("the child, which registered nothing, is registered (status %x)", st);
		return 1;
	}
	pass();
	return 0;
}
