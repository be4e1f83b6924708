// SPDX-License-Identifier: GPL-2.0
/*
 * Victim of refused.sh: a process holding an object criu-like refuses by
 * name. argv[1] names it:
 *   aio       an AIO context (io_setup()): its ring is mapped in the task
 *   io_uring  an io_uring instance (io_uring_setup())
 * It prints "ready PID" and echoes stdin to stdout.
 */
#include <linux/aio_abi.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	char c;

	if (!strcmp(what, "aio")) {
		aio_context_t ctx = 0;

		if (syscall(SYS_io_setup, 16, &ctx))
			return 1;
	} else if (!strcmp(what, "io_uring")) {
		unsigned long params[15] = { 0 }; /* struct io_uring_params: 120 bytes */

		if (syscall(SYS_io_uring_setup, 8, params) < 0)
			return 1;
	} else {
		return 2;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (read(0, &c, 1) == 1)
		if (write(1, &c, 1) != 1)
			return 1;
	return 0;
}
