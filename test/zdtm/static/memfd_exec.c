// SPDX-License-Identifier: GPL-2.0
/*
 * Executable memfds: A holds a copy of /bin/true, its memfd_create()
 * descriptor (read-write) kept open and sealed against writes and resizes;
 * B holds a copy too, reached only through a read-only reopen (its
 * read-write descriptor closed); both in mode 0755. After SIGTERM a child
 * execs each (execveat(AT_EMPTY_PATH)) and exits 0: a restore that opened a
 * memfd again for writing would make the exec fail with ETXTBSY.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

static int copy_true(const char *name, int *rw)
{
	int src = open("/bin/true", O_RDONLY);
	struct stat st;

	*rw = memfd_create(name, MFD_ALLOW_SEALING);
	if (src < 0 || *rw < 0 || fstat(src, &st) ||
	    sendfile(*rw, src, NULL, (size_t)st.st_size) != st.st_size || fchmod(*rw, 0755))
		return neg_errno();
	close(src);
	return 0;
}

static int reopen_ro(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDONLY);
}

/* A child execs @fd: its exit status, or 100 + errno of the exec. */
static int run(int fd)
{
	char *const av[] = { "true", NULL }, *const ev[] = { NULL };
	pid_t p = fork();
	int st;

	if (p == 0) {
		syscall(SYS_execveat, fd, "", av, ev, AT_EMPTY_PATH);
		_exit(100 + errno);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return neg_errno();
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	int a, b, bro, r;

	test_init(argc, argv);
	if (copy_true("exec_a", &a) || copy_true("exec_b", &b) ||
	    fcntl(a, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		goto err;
	bro = reopen_ro(b);
	if (bro < 0 || close(b))
		goto err;
	if (run(a) || run(bro)) {
		fail("the memfds do not run before the dump: %d %d", run(a), run(bro));
		return 1;
	}
	test_daemon();
	test_waitsig();

	r = run(a);
	if (r) {
		fail("exec of the sealed memfd with its read-write fd: status %d (100 + errno)", r);
		return 1;
	}
	r = run(bro);
	if (r) {
		fail("exec of the memfd through its read-only fd: status %d (100 + errno)", r);
		return 1;
	}
	if ((fcntl(a, F_GETFL) & O_ACCMODE) != O_RDWR ||
	    (fcntl(bro, F_GETFL) & O_ACCMODE) != O_RDONLY) {
		fail("access modes changed");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
