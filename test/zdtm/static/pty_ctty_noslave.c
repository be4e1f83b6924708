// SPDX-License-Identifier: GPL-2.0
/*
 * A pty that is the controlling terminal of a session while no task holds
 * its slave: child C leads a new session, opens the slave (which makes it
 * its terminal) and closes it; the root holds the master. After SIGTERM C
 * still has the pty as its controlling terminal (/proc/self/stat tty_nr,
 * an open of /dev/tty), the session seen through the master is C's, and a
 * line written on the master reaches C through /dev/tty.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "zdtmtst.h"

static int tty_nr(void)
{
	char buf[512], *p;
	int nr = -1;
	FILE *f = fopen("/proc/self/stat", "r");

	if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %d", &nr);
	if (f)
		fclose(f);
	return nr;
}

/* C: its own session, the pty as terminal, no slave fd; then waits for SIGTERM and checks. */
static int session(const char *slave, int index, int ready)
{
	int s, t;
	char buf[16];
	ssize_t n;

	if (setsid() < 0)
		return 10;
	s = open(slave, O_RDWR);
	if (s < 0 || close(s))
		return 11;
	if (tty_nr() != (int)makedev(136, index) || write(ready, "r", 1) != 1)
		return 12;
	test_waitsig();
	if (tty_nr() != (int)makedev(136, index))
		return 13;
	t = open("/dev/tty", O_RDONLY);
	if (t < 0)
		return 14;
	n = read(t, buf, sizeof(buf) - 1);
	if (n < 4 || memcmp(buf, "ping", 4))
		return 15;
	return 0;
}

int main(int argc, char **argv)
{
	int m, index, p[2], st;
	char slave[32], c;
	pid_t child;

	test_init(argc, argv);
	m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) || unlockpt(m) || ioctl(m, TIOCGPTN, &index) || pipe(p))
		goto err;
	snprintf(slave, sizeof(slave), "/dev/pts/%d", index);
	child = fork();
	if (child < 0)
		goto err;
	if (child == 0)
		_exit(session(slave, index, p[1]));
	if (read(p[0], &c, 1) != 1) {
		fail("the session leader did not get its terminal");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (tcgetsid(m) != child) {
		fail("the pty's session is %d, not %d", tcgetsid(m), child);
		return 1;
	}
	kill(child, SIGTERM);
	if (write(m, "ping\n", 5) != 5 || waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fail("the session leader failed its checks (status %x)", st);
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
