// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets with names a restore cannot simply bind() again: one bound
 * to a relative path (getsockname() gives the relative name), one whose
 * directory was removed since, one whose socket file was replaced by a FIFO
 * of the same name, and a datagram socket of a pair whose peer is closed
 * with two datagrams still queued (peeked at dump), and one whose socket file
 * was given to 1000:1001 with mode 0640. After SIGTERM each must
 * have its name as bound, the FIFO must still be the FIFO, the relative one
 * must still accept connections through its file, and the datagrams must be
 * there with their boundaries.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "zdtmtst.h"

static socklen_t mkname(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

static int bound(int type, const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = mkname(&sa, path);
	int sk = socket(AF_UNIX, type, 0);

	if (sk < 0 || bind(sk, (struct sockaddr *)&sa, len))
		return neg_errno();
	return sk;
}

static int name_is(int sk, const char *path)
{
	struct sockaddr_un sa = {};
	socklen_t len = sizeof(sa);

	if (getsockname(sk, (struct sockaddr *)&sa, &len) || strcmp(sa.sun_path, path)) {
		fail("socket %d: name \"%s\", expected \"%s\"", sk, sa.sun_path, path);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct stat st, fifo_st;
	int rel, gone, fifo, owned, pair[2], c, a;
	char buf[16];

	test_init(argc, argv);
	/* relative to the cwd, listening */
	rel = bound(SOCK_STREAM, "rel.sock");
	/* in a directory removed since */
	if (mkdir("gone.dir", 0700))
		goto err;
	gone = bound(SOCK_DGRAM, "gone.dir/s");
	if (unlink("gone.dir/s") || rmdir("gone.dir"))
		goto err;
	/* its file replaced by a FIFO */
	fifo = bound(SOCK_DGRAM, "fifo.sock");
	if (unlink("fifo.sock") || mkfifo("fifo.sock", 0600) || stat("fifo.sock", &fifo_st))
		goto err;
	/* a datagram pair whose peer is closed, two datagrams queued */
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) || send(pair[0], "one", 3, 0) != 3 ||
	    send(pair[0], "second", 6, 0) != 6 || close(pair[0]))
		goto err;
	owned = bound(SOCK_DGRAM, "owned.sock");
	if (owned < 0 || chown("owned.sock", 1000, 1001) || chmod("owned.sock", 0640))
		goto err;
	if (rel < 0 || gone < 0 || fifo < 0 || listen(rel, 4))
		goto err;
	test_daemon();
	test_waitsig();

	if (name_is(rel, "rel.sock") || name_is(gone, "gone.dir/s") || name_is(fifo, "fifo.sock"))
		return 1;
	if (name_is(owned, "owned.sock") || stat("owned.sock", &st) || st.st_uid != 1000 ||
	    st.st_gid != 1001 || (st.st_mode & 07777) != 0640) {
		fail("owned.sock: %u:%u mode %o, expected 1000:1001 640", st.st_uid, st.st_gid,
		     st.st_mode & 07777);
		return 1;
	}
	if (stat("fifo.sock", &st) || !S_ISFIFO(st.st_mode) || access("gone.dir", F_OK) == 0) {
		fail("fifo.sock is no longer a FIFO, or gone.dir came back");
		return 1;
	}
	len = mkname(&sa, "rel.sock");
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sa, len) || (a = accept(rel, NULL, NULL)) < 0 ||
	    write(c, "x", 1) != 1 || read(a, buf, 1) != 1) {
		fail("the relative listener does not accept through its file: %m");
		return 1;
	}
	if (recv(pair[1], buf, sizeof(buf), MSG_DONTWAIT) != 3 || memcmp(buf, "one", 3) ||
	    recv(pair[1], buf, sizeof(buf), MSG_DONTWAIT) != 6 || memcmp(buf, "second", 6)) {
		fail("the datagrams of the closed pair are not there");
		return 1;
	}
	pass();
	return 0;
err:
	fail("setup: %m");
	return 1;
}
