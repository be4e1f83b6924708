// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-terminal pairs inside the tree. Pty A: master and slave open, the
 * slave's termios changed (no echo, no canonical mode, other control
 * characters, 38400 baud), a 33x97 window, packet mode on the master, the
 * slave dup()ed and its master non-blocking. Pty B: only the master, locked
 * again after its slave was opened and closed. After SIGTERM: the same pty
 * indexes, the same termios, window size, packet mode and lock, the same
 * flags, and data still flows both ways through A. A's slave was given the
 * owner 1000:5 and mode 0600, B's 1001:1002 and mode 0640 (as grantpt() and
 * chown give a user's terminal its ids): they come back too.
 */
#include <asm/termbits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtmtst.h"

struct pty_state {
	int master, slave, index, mflags;
	struct termios2 tio;
	struct winsize ws;
	int pkt, lck;
};

static int open_master(int flags)
{
	int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | flags), unlock = 0;

	if (fd >= 0 && ioctl(fd, TIOCSPTLCK, &unlock)) {
		int err = neg_errno();

		close(fd);
		return err;
	}
	return fd;
}

static int open_slave(int master)
{
	char path[32];
	int n;

	if (ioctl(master, TIOCGPTN, &n))
		return neg_errno();
	snprintf(path, sizeof(path), "/dev/pts/%d", n);
	return open(path, O_RDWR | O_NOCTTY);
}

static int record(struct pty_state *s)
{
	if (ioctl(s->master, TIOCGPTN, &s->index) || ioctl(s->master, TCGETS2, &s->tio) ||
	    ioctl(s->master, TIOCGWINSZ, &s->ws) || ioctl(s->master, TIOCGPKT, &s->pkt) ||
	    ioctl(s->master, TIOCGPTLCK, &s->lck))
		return neg_errno();
	s->mflags = fcntl(s->master, F_GETFL);
	return s->mflags < 0 ? neg_errno() : 0;
}

static int setup_a(struct pty_state *a)
{
	struct winsize ws = { .ws_row = 33, .ws_col = 97, .ws_xpixel = 970, .ws_ypixel = 660 };
	struct termios2 t;
	int one = 1;

	a->master = open_master(O_NONBLOCK);
	if (a->master < 0)
		return neg_errno();
	a->slave = open_slave(a->master);
	if (a->slave < 0 || ioctl(a->slave, TCGETS2, &t))
		return neg_errno();
	t.c_lflag &= ~(tcflag_t)(ECHO | ICANON);
	t.c_oflag &= ~(tcflag_t)ONLCR;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	t.c_cc[VINTR] = 0x02;
	t.c_cflag = (t.c_cflag & ~(tcflag_t)CBAUD) | B38400;
	if (ioctl(a->slave, TCSETS2, &t) || ioctl(a->slave, TIOCSWINSZ, &ws) ||
	    ioctl(a->master, TIOCPKT, &one))
		return neg_errno();
	/* a second fd of the slave description */
	return dup2(a->slave, a->slave + 10) < 0 ? neg_errno() : record(a);
}

static int setup_b(struct pty_state *b)
{
	int lock = 1;

	b->master = open_master(0);
	if (b->master < 0)
		return neg_errno();
	b->slave = open_slave(b->master);
	if (b->slave < 0 || close(b->slave) || ioctl(b->master, TIOCSPTLCK, &lock))
		return neg_errno();
	b->slave = -1;
	return record(b);
}

static int same_state(const struct pty_state *s, const char *name)
{
	struct pty_state now = *s;

	if (record(&now)) {
		fail("%s: cannot read its state: %m", name);
		return 1;
	}
	if (now.index != s->index || now.pkt != s->pkt || now.lck != s->lck ||
	    now.mflags != s->mflags) {
		fail("%s: index/packet/lock/flags %d/%d/%d/%o, expected %d/%d/%d/%o", name,
		     now.index, now.pkt, now.lck, now.mflags, s->index, s->pkt, s->lck, s->mflags);
		return 1;
	}
	if (memcmp(&now.tio, &s->tio, sizeof(now.tio)) || memcmp(&now.ws, &s->ws, sizeof(now.ws))) {
		fail("%s: termios or window size changed", name);
		return 1;
	}
	return 0;
}

/* Bytes both ways through A: the master reads a packet-mode 0 byte first. */
static int flows(const struct pty_state *a)
{
	char buf[64];
	ssize_t n;

	if (write(a->master, "to-slave", 8) != 8 || read(a->slave, buf, sizeof(buf)) != 8 ||
	    memcmp(buf, "to-slave", 8)) {
		fail("pty A: master to slave broken: %m");
		return 1;
	}
	if (write(a->slave + 10, "to-master\n", 10) != 10) {
		fail("pty A: write on the slave's dup: %m");
		return 1;
	}
	test_sleep_ms(50);
	n = read(a->master, buf, sizeof(buf));
	if (n != 11 || buf[0] != 0 || memcmp(buf + 1, "to-master\n", 10)) {
		fail("pty A: slave to master gave %zd bytes (no ONLCR, packet mode expected)", n);
		return 1;
	}
	return 0;
}

static int set_owner(int index, uid_t uid, gid_t gid, mode_t mode)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/pts/%d", index);
	return chown(path, uid, gid) || chmod(path, mode);
}

static int same_owner(int index, uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st;
	char path[32];

	snprintf(path, sizeof(path), "/dev/pts/%d", index);
	if (stat(path, &st) || st.st_uid != uid || st.st_gid != gid ||
	    (st.st_mode & 07777) != mode) {
		fail("%s: owner %u:%u mode %o, expected %u:%u %o", path, st.st_uid, st.st_gid,
		     st.st_mode & 07777, uid, gid, mode);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pty_state a, b;
	struct stat st;
	char path[32];

	test_init(argc, argv);
	if (setup_a(&a) || setup_b(&b) || set_owner(a.index, 1000, 5, 0600) ||
	    set_owner(b.index, 1001, 1002, 0640)) {
		fail("cannot set up the ptys: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (same_state(&a, "pty A") || same_state(&b, "pty B") || flows(&a) ||
	    same_owner(a.index, 1000, 5, 0600) || same_owner(b.index, 1001, 1002, 0640))
		return 1;
	snprintf(path, sizeof(path), "/dev/pts/%d", b.index);
	if (stat(path, &st) || open(path, O_RDWR | O_NOCTTY) >= 0) {
		fail("pty B: %s should exist and refuse opens while locked", path);
		return 1;
	}
	pass();
	return 0;
}
