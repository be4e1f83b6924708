// SPDX-License-Identifier: GPL-2.0
/*
 * A pty as the controlling terminal of a session inside the tree. The root
 * holds the master; child C leads a new session and acquires the slave as
 * its controlling terminal by opening it; grandchild G leads its own group
 * and is made the foreground group; grandchild D stays in C's group (in the
 * background). After SIGTERM: every one of C, G, D still has the pty as
 * /dev/tty and in /proc/self/stat, the session is C's and the foreground
 * group G's (seen by them through /dev/tty and by the root through the
 * master), C's fd of /dev/tty is still one of /dev/tty, and a line the root writes on the master is echoed (canonical
 * mode with echo, the defaults) and read by G.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "zdtmtst.h"

enum {
	C,
	G,
	D,
	NPROC
};

static char slave_path[32];

/* The tty_nr field (7th) of /proc/self/stat. */
static long stat_tty_nr(void)
{
	char buf[1024], *p;
	long tty = -1;

	if (test_read_file("/proc/self/stat", buf, sizeof(buf)) <= 0)
		return neg_errno();
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %ld", &tty) != 1)
		return -EBADMSG;
	return tty;
}

/* /dev/tty of this process is the pty, of session @sid, with @fg (if >= 0) in the foreground. */
static int check_ctty(int who, pid_t sid, pid_t fg, dev_t rdev)
{
	/* an fd of /dev/tty has the inode of /dev/tty: the terminal is told by tty_nr */
	int fd = open("/dev/tty", O_RDWR);

	if (fd < 0) {
		test_msg("process %d: no controlling terminal: %m\n", who);
		return 1;
	}
	if (stat_tty_nr() != (long)rdev || tcgetsid(fd) != sid ||
	    (fg >= 0 && tcgetpgrp(fd) != fg)) {
		test_msg("process %d: tty_nr %ld sid %d fg %d, expected %ld %d %d\n", who,
			 stat_tty_nr(), tcgetsid(fd), tcgetpgrp(fd), (long)rdev, sid, fg);
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}

static int grandchild(int who, int ready, dev_t rdev)
{
	pid_t ids[2] = { getsid(0), 0 };
	char line[16];
	int fd;

	if (who == G)
		setpgid(0, 0);
	ids[1] = getpgrp();
	if (write(ready, ids, sizeof(ids)) != sizeof(ids))
		return 2;
	test_waitsig();
	/* D is in the background: its foreground group is not its own, not checked */
	if (check_ctty(who, ids[0], who == G ? getpgrp() : -1, rdev))
		return 1;
	if (who == D)
		return 0;
	fd = open("/dev/tty", O_RDONLY);
	if (fd < 0 || read(fd, line, sizeof(line)) != 5 || memcmp(line, "ping\n", 5)) {
		test_msg("G: the line from the master did not arrive: %m\n");
		return 1;
	}
	return 0;
}

static int leader(int ready)
{
	pid_t kids[2], ids[2];
	struct stat st;
	int fd, tty, bad, k[2];
	char link[32] = "", k_path[64];

	if (setsid() < 0)
		return 2;
	/* without O_NOCTTY: a session leader without a terminal acquires it */
	fd = open(slave_path, O_RDWR);
	if (fd < 0 || fstat(fd, &st) || pipe(k))
		return 2;
	/* an fd of /dev/tty itself, kept across the dump */
	tty = open("/dev/tty", O_RDWR);
	if (tty < 0)
		return 2;
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(grandchild(i == 0 ? G : D, k[1], st.st_rdev));
	}
	/* both in the session before G gets the terminal */
	for (int i = 0; i < 2; i++)
		if (read(k[0], ids, sizeof(ids)) != sizeof(ids) || ids[0] != getpid())
			return 2;
	close(k[0]);
	close(k[1]);
	/* G leads its group (set here too, so it is there before tcsetpgrp) */
	if (setpgid(kids[0], kids[0]) || tcsetpgrp(fd, kids[0]))
		return 2;
	if (write(ready, &kids[0], sizeof(kids[0])) != sizeof(kids[0]))
		return 2;
	test_waitsig();
	bad = check_ctty(C, getpid(), kids[0], st.st_rdev);
	snprintf(k_path, sizeof(k_path), "/proc/self/fd/%d", tty);
	if (readlink(k_path, link, sizeof(link) - 1) < 0 || strcmp(link, "/dev/tty") ||
	    tcgetsid(tty) != getpid()) {
		test_msg("C: its fd of /dev/tty is %s, of session %d\n", link, tcgetsid(tty));
		bad = 1;
	}
	return bad | (test_reap_children(kids, 2) ? 1 : 0);
}

int main(int argc, char **argv)
{
	int master, n, unlock = 0, fromc[2];
	pid_t c, g, sid = 0, fg = 0;
	char echo[16];

	test_init(argc, argv);
	master = open("/dev/ptmx", O_RDWR | O_NOCTTY);
	if (master < 0 || ioctl(master, TIOCSPTLCK, &unlock) || ioctl(master, TIOCGPTN, &n) ||
	    pipe(fromc)) {
		fail("cannot open a pty: %m");
		return 1;
	}
	snprintf(slave_path, sizeof(slave_path), "/dev/pts/%d", n);
	c = fork();
	if (c == 0) {
		close(master);
		close(fromc[0]);
		_exit(leader(fromc[1]));
	}
	close(fromc[1]);
	/* G's pid once the session is built and G in the foreground */
	if (read(fromc[0], &g, sizeof(g)) != sizeof(g) || getsid(g) != c) {
		fail("C did not give G the terminal");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (ioctl(master, TIOCGSID, &sid) || ioctl(master, TIOCGPGRP, &fg) || sid != c || fg != g) {
		fail("the master sees session %d foreground %d, expected %d %d", sid, fg, c, g);
		return 1;
	}
	if (write(master, "ping\n", 5) != 5 || read(master, echo, sizeof(echo)) != 6 ||
	    memcmp(echo, "ping\r\n", 6)) {
		fail("no echo of the line written on the master: %m");
		return 1;
	}
	if (test_reap_children(&c, 1)) {
		fail("a process of the session saw another terminal (see the messages)");
		return 1;
	}
	pass();
	return 0;
}
