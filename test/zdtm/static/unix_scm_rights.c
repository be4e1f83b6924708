// SPDX-License-Identifier: GPL-2.0
/*
 * A unix stream pair with 1 MiB of checksummed data queued one way and 10
 * fds in flight the other way (SCM_RIGHTS), in 8 messages with plain
 * messages between them: pipe ends, a file at a position, an unlinked file,
 * an eventfd, a memfd, /dev/null, one end of another pair with data queued
 * in it, and a socket and a pipe end the sender still holds. Most were closed by the
 * sender once sent: only the queue holds them. After SIGTERM each message
 * must come with exactly its fds, each fd must be the same object (data
 * through the pipes and the pair, file position and contents, the eventfd's
 * counter, the same inode as the held socket), and the 1 MiB intact.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "zdtmtst.h"

#define BIG (1u << 20)
#define NR_MSGS 9
#define FPOS 1234

static unsigned char big[BIG], got[BIG];

/* A message: text, and how many fds come with it (0: a plain message). */
static const struct {
	const char *text;
	int nr_fds;
} msgs[] = {
	{ "pipe-read-end", 1 }, { "plain one", 0 },  { "pipe-write-end", 1 },
	{ "file", 1 },		{ "ghost", 1 },	     { "plain two, longer", 0 },
	{ "eventfd", 1 },	{ "memfd+null", 2 }, { "pair-end", 1 },
	{ "held", 2 },		{ "last plain", 0 },
};

static int send_fds(int sk, const char *text, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} c = { 0 };
	struct iovec iov = { .iov_base = (void *)text, .iov_len = strlen(text) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n) {
		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, sizeof(int) * n);
	}
	return sendmsg(sk, &mh, 0) == (ssize_t)iov.iov_len ? 0 : neg_errno();
}

/* Message @i, exactly its bytes; its fds into @fds. */
static int recv_msg(int sk, int i, int *fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} c;
	char buf[64];
	size_t len = strlen(msgs[i].text);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm;
	int n = 0;
	ssize_t r = recvmsg(sk, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (r != (ssize_t)len || memcmp(buf, msgs[i].text, len)) {
		fail("message %d: got %zd bytes \"%.*s\", expected \"%s\"", i, r,
		     (int)(r > 0 ? r : 0), buf, msgs[i].text);
		return -EINVAL;
	}
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(cm), n * sizeof(int));
		}
	if (n != msgs[i].nr_fds) {
		fail("message %d (%s): %d fds, expected %d", i, msgs[i].text, n, msgs[i].nr_fds);
		return -EINVAL;
	}
	return 0;
}

static bool same_inode(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int xfer(int w, int r, const char *what, const char *s)
{
	char buf[64];
	size_t n = strlen(s);

	if (write(w, s, n) != (ssize_t)n || read(r, buf, sizeof(buf)) != (ssize_t)n ||
	    memcmp(buf, s, n)) {
		fail("%s: \"%s\" did not go through: %m", what, s);
		return neg_errno();
	}
	return 0;
}

/* The objects behind the fds in flight, and what the test kept. */
struct objs {
	int pa[2], pb[2], file, ghost, efd, memfd, null, xp[2], held[2];
	char ghost_name[64];
};

static int make_objs(struct objs *o)
{
	if (pipe(o->pa) || pipe(o->pb) || write(o->pa[1], "in pipe a", 9) != 9 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, o->xp) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, o->held) ||
	    send(o->xp[1], "queued in xp0", 13, 0) != 13)
		return neg_errno();
	o->file = open("unix_scm_rights.data", O_RDWR | O_CREAT | O_TRUNC, 0600);
	snprintf(o->ghost_name, sizeof(o->ghost_name), "unix_scm_rights.ghost");
	o->ghost = open(o->ghost_name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	o->efd = eventfd(42, EFD_NONBLOCK);
	o->memfd = memfd_create("scm", 0);
	o->null = open("/dev/null", O_WRONLY);
	if (o->file < 0 || o->ghost < 0 || o->efd < 0 || o->memfd < 0 || o->null < 0)
		return neg_errno();
	datagen(got, 4096, 3);
	if (write(o->file, got, 4096) != 4096 || lseek(o->file, FPOS, SEEK_SET) != FPOS ||
	    write(o->ghost, "ghost data", 10) != 10 || unlink(o->ghost_name) ||
	    write(o->memfd, "memfd data", 10) != 10)
		return neg_errno();
	return 0;
}

/* Send every message from @sk; close what only the queue is to hold. */
static int send_all(int sk, struct objs *o)
{
	int fds[NR_MSGS + 2][2] = {
		{ o->pa[0] }, { -1 },
		{ o->pb[1] }, { o->file },
		{ o->ghost }, { -1 },
		{ o->efd },   { o->memfd, o->null },
		{ o->xp[0] }, { o->held[0], o->pa[1] },
		{ -1 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (send_fds(sk, msgs[i].text, fds[i], msgs[i].nr_fds))
			return neg_errno();
	/* In flight only: the queue holds the last reference. */
	close(o->pa[0]);
	close(o->pb[1]);
	close(o->file);
	close(o->ghost);
	close(o->efd);
	close(o->memfd);
	close(o->null);
	close(o->xp[0]);
	return 0;
}

static int check_file(int fd, const char *what)
{
	char buf[64];

	if (lseek(fd, 0, SEEK_CUR) != FPOS || read(fd, buf, 16) != 16 ||
	    datachk_at(buf, 16, 3, FPOS, NULL)) {
		fail("%s: not at %d with the same contents", what, FPOS);
		return -EINVAL;
	}
	return 0;
}

static int check_objs(int sk, struct objs *o)
{
	int f[NR_MSGS + 2][4];
	char buf[64];
	uint64_t v = 0;
	unsigned int i;
	struct stat st;

	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (recv_msg(sk, (int)i, f[i]))
			return neg_errno();
	if (read(f[0][0], buf, 9) != 9 || memcmp(buf, "in pipe a", 9) ||
	    xfer(o->pa[1], f[0][0], "pipe a", "after") || xfer(f[2][0], o->pb[0], "pipe b", "b!"))
		return neg_errno();
	if (check_file(f[3][0], "the file"))
		return neg_errno();
	if (pread(f[4][0], buf, 10, 0) != 10 || memcmp(buf, "ghost data", 10) ||
	    fstat(f[4][0], &st) || st.st_nlink != 0) {
		fail("the unlinked file: not as it was");
		return -EINVAL;
	}
	if (read(f[6][0], &v, sizeof(v)) != sizeof(v) || v != 42) {
		fail("eventfd: counter %llu, expected 42", (unsigned long long)v);
		return -EINVAL;
	}
	if (pread(f[7][0], buf, 10, 0) != 10 || memcmp(buf, "memfd data", 10) ||
	    fstat(f[7][1], &st) || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
		fail("memfd or /dev/null: not as they were");
		return -EINVAL;
	}
	if (recv(f[8][0], buf, sizeof(buf), MSG_DONTWAIT) != 13 ||
	    memcmp(buf, "queued in xp0", 13) || xfer(f[8][0], o->xp[1], "pair x", "to xp1") ||
	    xfer(o->xp[1], f[8][0], "pair x", "to xp0"))
		return neg_errno();
	if (!same_inode(f[9][0], o->held[0]) || xfer(f[9][0], o->held[1], "held pair", "held")) {
		fail("the held socket: another socket came");
		return -EINVAL;
	}
	if (!same_inode(f[9][1], o->pa[1]) || (fcntl(f[9][1], F_GETFL) & O_ACCMODE) != O_WRONLY ||
	    xfer(f[9][1], f[0][0], "pipe a, held write end", "again")) {
		fail("the held pipe end: another file came");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int sk[2], size = 4 * BIG;
	struct objs o;
	char c;

	test_init(argc, argv);
	datagen(big, BIG, 7);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sk) || make_objs(&o) || send_all(sk[1], &o)) {
		fail("cannot set up the fds in flight: %m");
		return 1;
	}
	if (setsockopt(sk[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) ||
	    setsockopt(sk[1], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) ||
	    send(sk[0], big, BIG, MSG_DONTWAIT) != BIG) {
		fail("cannot queue 1 MiB: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check_objs(sk[0], &o))
		return 1;
	if (recv(sk[0], &c, 1, MSG_DONTWAIT) >= 0 || errno != EAGAIN) {
		fail("more than the queued messages");
		return 1;
	}
	memset(got, 0, BIG);
	for (size_t off = 0; off < BIG;) {
		ssize_t n = recv(sk[1], got + off, BIG - off, MSG_DONTWAIT);

		if (n <= 0) {
			fail("1 MiB: only %zu bytes: %m", off);
			return 1;
		}
		off += (size_t)n;
	}
	if (memcmp(got, big, BIG) || recv(sk[1], &c, 1, MSG_DONTWAIT) >= 0) {
		fail("1 MiB: the data differs or more came");
		return 1;
	}
	pass();
	return 0;
}
