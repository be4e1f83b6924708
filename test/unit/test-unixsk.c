// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets at dump time (files/unix.c) on real children: what is not
 * supported must be refused naming the pid, the fd and the reason, and the
 * child's sockets must be left exactly as they were (fds in flight still
 * there, data still queued), also when dumped (an fd in flight, credentials
 * queued with SO_PASSCRED); a datagram socket connected outside the tree
 * is dumped with --ext-unix-sk, with the name it is connected to; other
 * socket families, and unix sockets of another network namespace, stay
 * refused. Run as root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <sys/capability.h>

#include "dump.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "options.h"
#include "seize.h"
#include "util.h"
#include "../../criu-like/files/unix.h"

#include "lib/dumper.h"
#include "lib/logcap.h"
#include "lib/victim.h"

#include "files.pb-c.h"

#define MSG "in flight"
#define REPORT_FD 10 /* the test's fd at 11, the victim's own from 3 on */

enum victim_kind {
	V_RIGHTS, /* a stream pair with an fd in flight */
	V_OUTSIDE, /* one end of a pair whose other end the test holds */
	V_PASSCRED, /* SO_PASSCRED with data queued */
	V_EXT_DGRAM, /* a datagram socket connected to a bound socket of the test */
	V_PACKET, /* a vsock socket (UDP, netlink and packet sockets are dumped now) */
	V_NETNS, /* a socketpair in a network namespace of its own */
	V_FROM_OUTSIDE, /* a bound datagram socket holding a datagram from a bound socket of the test */
};

static pid_t victim, last_victim;
static char dir[] = "/tmp/test-unixsk.XXXXXX";
static char imgdir[64];
static struct sockaddr_un ext_sa, rcv_sa;
static socklen_t ext_len, rcv_len;

/* The socket to dump in the child, set up as @kind; -errno on failure. */
static int victim_setup(enum victim_kind kind, int test_fd, int *other)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = MSG, .iov_len = sizeof(MSG) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int sk[2], one = 1, fd;

	switch (kind) {
	case V_RIGHTS:
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sk))
			return -errno;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &sk[1], sizeof(int));
		if (sendmsg(sk[1], &mh, 0) != sizeof(MSG))
			return -errno;
		*other = sk[1];
		return sk[0];
	case V_OUTSIDE:
		return test_fd;
	case V_PASSCRED:
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sk) ||
		    setsockopt(sk[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) ||
		    send(sk[1], MSG, sizeof(MSG), 0) != sizeof(MSG))
			return -errno;
		*other = sk[1];
		return sk[0];
	case V_EXT_DGRAM:
		fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&ext_sa, ext_len))
			return -errno;
		return fd;
	case V_PACKET:
		fd = socket(AF_VSOCK, SOCK_SEQPACKET, 0);
		return fd < 0 ? -errno : fd;
	case V_FROM_OUTSIDE:
		/* ext_sa is the test's sender; this socket is bound next to it */
		fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&rcv_sa, rcv_len) ||
		    write_all(test_fd, "b", 1))
			return -errno;
		close(test_fd);
		/* wait until the test has sent its datagram */
		if (recv(fd, &(char){ 0 }, 0, MSG_PEEK) < 0)
			return -errno;
		return fd;
	case V_NETNS:
		if (unshare(CLONE_NEWNET) || socketpair(AF_UNIX, SOCK_STREAM, 0, sk))
			return -errno;
		*other = sk[1];
		return sk[0];
	}
	return -EINVAL;
}

/* After the dump: 0 when the socket (its fd in the int @report) is as it was. */
static int victim_check(void *arg, const void *report)
{
	enum victim_kind kind = *(enum victim_kind *)arg;
	int fd = *(const int *)report;
	char cbuf[CMSG_SPACE(sizeof(int))], buf[64];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	switch (kind) {
	case V_FROM_OUTSIDE:
		return recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == 4 ? 0 : 6;
	case V_RIGHTS:
	case V_PASSCRED:
		if (recvmsg(fd, &mh, MSG_DONTWAIT) != sizeof(MSG) || memcmp(buf, MSG, sizeof(MSG)))
			return 2;
		c = CMSG_FIRSTHDR(&mh);
		if (kind == V_RIGHTS && (!c || c->cmsg_type != SCM_RIGHTS))
			return 3; /* the fd in flight was lost */
		if (kind == V_PASSCRED && (!c || c->cmsg_type != SCM_CREDENTIALS))
			return 4;
		return 0;
	case V_OUTSIDE:
		return send(fd, "x", 1, 0) == 1 ? 0 : 5;
	default:
		return 0;
	}
}

/* In the child: 0-2 on /dev/null, the socket of the victim_kind *@arg, its fd in *@report. */
static int victim_report(void *arg, void *report)
{
	int null = victim_null_stdio(), other = -1;
	int *fd = report;

	if (null < 0 || close(null))
		return -errno;
	/* the test's fd, if any, is the one after the report's */
	*fd = victim_setup(*(enum victim_kind *)arg, REPORT_FD + 1, &other);
	return *fd < 0 ? *fd : 0;
}

static const struct victim_ops victim_ops = {
	.setup = victim_report,
	.check = victim_check,
	.report_fd = REPORT_FD,
};

/* Dump a child of @kind; the result, the log in @log, and the child's check. */
static int dump_victim(enum victim_kind kind, int test_fd, const struct cr_options *opts, char *log,
		       size_t size, int *ret_fd)
{
	int imgfd, err;

	victim = victim_start(&victim_ops, &kind, test_fd, ret_fd, sizeof(*ret_fd));
	assert_true(victim > 0);
	imgfd = img_dir_open(imgdir, false);
	assert_true(imgfd >= 0);
	logcap_start(-1);
	err = dump_tree_files(victim, imgfd, opts);
	snprintf(log, size, "%s", logcap_stop());
	close(imgfd);
	/* The child's socket is as it was. */
	last_victim = victim;
	victim_finish(&victim);
	return err;
}

static void expect_refused(enum victim_kind kind, int test_fd, const char *reason)
{
	struct cr_options opts = { 0 };
	char log[4096], expect[64];
	int fd;

	assert_int_equal(dump_victim(kind, test_fd, &opts, log, sizeof(log), &fd), -EOPNOTSUPP);
	snprintf(expect, sizeof(expect), "pid %d fd %d: socket:[", last_victim, fd);
	assert_in_log(log, expect);
	assert_in_log(log, reason);
}

/* Dumped; the victim checks after that its fd is still in flight and its data there. */
static void expect_dumped(enum victim_kind kind)
{
	struct cr_options opts = { 0 };
	char log[4096];
	int fd;

	assert_int_equal(dump_victim(kind, -1, &opts, log, sizeof(log), &fd), 0);
}

static void test_rights_dumped(void **state)
{
	(void)state;
	expect_dumped(V_RIGHTS);
}

static void test_outside_refused(void **state)
{
	int sk[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sk), 0);
	expect_refused(V_OUTSIDE, sk[1], "outside the dumped tree");
	assert_int_equal(recv(sk[0], &(char){ 0 }, 1, MSG_DONTWAIT), 1);
	close(sk[0]);
	close(sk[1]);
}

static void test_passcred_dumped(void **state)
{
	(void)state;
	expect_dumped(V_PASSCRED);
}

static void test_packet_refused(void **state)
{
	(void)state;
	expect_refused(V_PACKET, -1, "(vsock socket) is not supported yet");
}

/* The sender is bound and outside the tree: its address could not be given back. */
static void test_from_outside_refused(void **state)
{
	int p[2], snd;
	pid_t pid;

	(void)state;
	snd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(snd >= 0);
	assert_int_equal(bind(snd, (struct sockaddr *)&ext_sa, ext_len), 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		char c;

		/* Send once the child is bound. */
		close(p[1]);
		if (read(p[0], &c, 1) != 1 ||
		    sendto(snd, "ping", 4, 0, (struct sockaddr *)&rcv_sa, rcv_len) != 4)
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	expect_refused(V_FROM_OUTSIDE, p[1], "outside the tree: not supported yet");
	close(p[1]);
	assert_int_equal(child_status(pid), 0);
	close(snd);
}

static void test_netns_refused(void **state)
{
	(void)state;
	expect_refused(V_NETNS, -1, "is a unix socket of another network namespace");
}

static void test_ext_dgram(void **state)
{
	struct cr_options opts = { .ext_unix_sk = true };
	ProtobufCMessage **recs = NULL;
	size_t n = 0, i, found = 0;
	struct cr_img *img;
	char log[4096];
	int srv, fd, imgfd;

	(void)state;
	srv = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(srv >= 0);
	assert_int_equal(bind(srv, (struct sockaddr *)&ext_sa, ext_len), 0);
	/* Without the option: refused. */
	opts.ext_unix_sk = false;
	assert_int_equal(dump_victim(V_EXT_DGRAM, -1, &opts, log, sizeof(log), &fd), -EOPNOTSUPP);
	assert_non_null(strstr(log, "--ext-unix-sk"));
	opts.ext_unix_sk = true;
	assert_int_equal(dump_victim(V_EXT_DGRAM, -1, &opts, log, sizeof(log), &fd), 0);
	imgfd = img_dir_open(imgdir, false);
	img = img_open(imgfd, CR_IMG_FILES, 0, IMG_READ);
	assert_non_null(img);
	assert_int_equal(img_read_all(img, &recs, &n), 0);
	img_close(img);
	for (i = 0; i < n; i++) {
		const FileEntry *fe = (const FileEntry *)recs[i];

		if (fe->type != FILE_TYPE__FILE_UNIXSK)
			continue;
		found++;
		assert_true(fe->unixsk->has_ext_peer_name);
		assert_int_equal(fe->unixsk->ext_peer_name.len, strlen(ext_sa.sun_path) + 1);
		assert_memory_equal(fe->unixsk->ext_peer_name.data, ext_sa.sun_path,
				    fe->unixsk->ext_peer_name.len);
		assert_false(fe->unixsk->has_peer);
		assert_int_equal(fe->unixsk->type, SOCK_DGRAM);
	}
	assert_int_equal(found, 1);
	img_free_records(recs, n);
	close(imgfd);
	close(srv);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-unixsk.XXXXXX")));
	snprintf(imgdir, sizeof(imgdir), "%s/img", dir);
	assert_int_equal(mkdir(imgdir, 0700), 0);
	memset(&ext_sa, 0, sizeof(ext_sa));
	ext_sa.sun_family = AF_UNIX;
	snprintf(ext_sa.sun_path, sizeof(ext_sa.sun_path), "%s/ext.sock", dir);
	ext_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(ext_sa.sun_path) + 1);
	rcv_sa = ext_sa;
	snprintf(rcv_sa.sun_path, sizeof(rcv_sa.sun_path), "%s/rcv.sock", dir);
	rcv_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(rcv_sa.sun_path) + 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	victim_kill(&victim);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -EIO;
}

/*
 * Restore, without CAP_NET_ADMIN (a task of a user namespace that does not
 * own its network namespace): a buffer size SO_RCVBUF can give is set, one
 * beyond net.core.rmem_max is refused, never left smaller. In a child that
 * dropped every capability; its exit code says which step failed.
 */
static int bufs_unprivileged(void)
{
	UnixSkEntry e = UNIX_SK_ENTRY__INIT;
	_cleanup_free_ char *max = read_file_at(AT_FDCWD, "/proc/sys/net/core/rmem_max", NULL);
	cap_t none = cap_init();
	int sk[2], got = 0;
	socklen_t len = sizeof(got);

	if (!max || !none || cap_set_proc(none) || socketpair(AF_UNIX, SOCK_STREAM, 0, sk))
		return 10;
	e.has_rcvbuf = e.has_sndbuf = true;
	e.rcvbuf = e.sndbuf = 8192; /* getsockopt() reads twice what was set */
	if (usk_finish_now(sk[0], &e, 1))
		return 11;
	if (getsockopt(sk[0], SOL_SOCKET, SO_RCVBUF, &got, &len) || got != 8192)
		return 12;
	e.rcvbuf = (uint32_t)(2 * atol(max) + 8192);
	if (usk_finish_now(sk[0], &e, 2) != -EPERM)
		return 13;
	return 0;
}

static void test_bufs_unprivileged(void **state)
{
	int status = -1;
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(bufs_unprivileged());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rights_dumped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_passcred_dumped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_packet_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netns_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_outside_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ext_dgram, setup, teardown),
		cmocka_unit_test(test_bufs_unprivileged),
	};

	if (geteuid()) {
		print_message("test-unixsk needs root: skipped\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
