// SPDX-License-Identifier: GPL-2.0
/*
 * dump_task_files() and dump_files_finish() on real children, what they
 * refuse and what is in flight. Unsupported kinds (userfaultfd, a netlink
 * socket with a message queued) and shared fd tables must fail with a message naming the pid and
 * fd, the child intact. Fds in flight in a unix socket's queue are named by
 * the ids of their descriptions, one held by no task dumped on its own, a
 * kind that cannot be (epoll) refused. A file of /proc/PID of a process outside
 * the tree is refused naming the pid, fd and path, a description owned for
 * signal-driven I/O by a process outside the tree naming both. Run as root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/userfaultfd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32c.h"
#include "dump.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "options.h"
#include "proc-parse.h"
#include "seize.h"
#include "util.h"

#include "lib/dumper.h"
#include "lib/logcap.h"
#include "lib/victim.h"

#include "files.pb-c.h"

#define IN_FLIGHT_COUNT 5

enum victim_kind {
	V_UFFD,
	V_NETLINK_SOCKET,
	V_SHARED_TABLE,
	V_IN_FLIGHT, /* a stream pair with its pipe read end and a closed eventfd in flight */
	V_IN_FLIGHT_EPOLL, /* the same with a closed epoll instance in flight */
	V_PROC_OUTSIDE, /* /proc/PPID/stat of its parent, outside the tree */
	V_FOWN_OUTSIDE, /* a pipe owned for signal-driven I/O by its parent, outside the tree */
	V_NSFS_ORPHAN, /* a uts namespace file whose namespace no task is in any more */
};

/* What the child tells the test once it is set up. */
struct report {
	int bad; /* the unsupported fd, or the socket with fds in flight */
	int app, p0, p1; /* V_IN_FLIGHT*: the socket's peer, the pipe */
	pid_t pid; /* the child */
	pid_t second; /* the CLONE_FILES children (V_SHARED_TABLE): this one and app */
};

#define REPORT_FD 200

static pid_t victim, second, third;
static char dir[] = "/tmp/test-dump-refusals.XXXXXX";
static char imgdir[64];

static int sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/*
 * V_SHARED_TABLE's children: once their parent has a table of its own, the
 * report pipe closed in theirs, or the test would wait for its end forever.
 */
static int sibling(void *arg)
{
	(void)arg;
	while (syscall(SYS_kcmp, getppid(), getpid(), 2 /* KCMP_FILES */, 0, 0) == 0)
		usleep(1000);
	close(REPORT_FD);
	return sleeper(NULL);
}

/* r->bad: a stream socket holding "x" with the pipe's read end and a closed eventfd or epoll. */
static int victim_in_flight(enum victim_kind kind, struct report *r)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} c = { 0 };
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	int sk[2], p[2], fds[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sk) || pipe(p))
		return -errno;
	fds[0] = p[0];
	fds[1] = kind == V_IN_FLIGHT ? eventfd(IN_FLIGHT_COUNT, 0) : epoll_create1(0);
	CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
	CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, sizeof(fds));
	if (fds[1] < 0 || sendmsg(sk[1], &mh, 0) != 1 || close(fds[1]))
		return -errno;
	r->bad = sk[0];
	r->app = sk[1];
	r->p0 = p[0];
	r->p1 = p[1];
	return 0;
}

/* The message is still queued, with both fds: the pipe's read end and the eventfd or epoll. */
static int check_in_flight(enum victim_kind kind, const struct report *r)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} c;
	char x = 0;
	struct iovec iov = { .iov_base = &x, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c.buf) };
	uint64_t v = 0;
	int fds[2];

	if (recvmsg(r->bad, &mh, MSG_DONTWAIT) != 1 || x != 'x' || !CMSG_FIRSTHDR(&mh) ||
	    CMSG_FIRSTHDR(&mh)->cmsg_len != CMSG_LEN(sizeof(fds)))
		return 3;
	memcpy(fds, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(fds));
	if (write(r->p1, "y", 1) != 1 || read(fds[0], &x, 1) != 1 || x != 'y')
		return 4;
	if (kind == V_IN_FLIGHT &&
	    (read(fds[1], &v, sizeof(v)) != sizeof(v) || v != IN_FLIGHT_COUNT))
		return 5;
	return 0;
}

/* In the child: the victim_kind *@arg set up, described in the struct report @report. */
static int victim_setup(void *arg, void *report)
{
	static char stack[65536], stack2[65536];
	enum victim_kind kind = *(enum victim_kind *)arg;
	struct report *r = report;
	int null;

	memset(r, 0xff, sizeof(*r));
	r->pid = getpid();
	/* stdin, stdout and stderr share one description of /dev/null */
	null = victim_null_stdio();
	if (null < 0)
		return null;
	switch (kind) {
	case V_UFFD:
		/* A userfaultfd the application owns: refused (eventfds are dumped now). */
		r->bad = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
		return r->bad < 0 ? -errno : 0;
	case V_NETLINK_SOCKET:
		/* A netlink socket with the answer to a request queued unread. */
		{
			struct {
				struct nlmsghdr h;
				struct rtgenmsg g;
			} req = { .h = { .nlmsg_len = sizeof(req),
					 .nlmsg_type = RTM_GETLINK,
					 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
				  .g = { .rtgen_family = AF_UNSPEC } };

			r->bad = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE);
			if (r->bad < 0 || send(r->bad, &req, sizeof(req), 0) != sizeof(req))
				return -errno;
			/* the kernel answers in send(): queued by now */
			return 0;
		}
	case V_SHARED_TABLE:
		/* two children sharing one table their parent left: siblings (fdtable.c) */
		r->second = clone(sibling, stack + sizeof(stack), CLONE_FILES | SIGCHLD, NULL);
		if (r->second < 0)
			return -errno;
		r->app = clone(sibling, stack2 + sizeof(stack2), CLONE_FILES | SIGCHLD, NULL);
		return r->app < 0 || unshare(CLONE_FILES) ? -errno : 0;
	case V_IN_FLIGHT:
	case V_IN_FLIGHT_EPOLL:
		return victim_in_flight(kind, r);
	case V_PROC_OUTSIDE:
		/* a file of a process outside the tree: restore would open another's */
		{
			char path[64];

			r->app = getppid();
			snprintf(path, sizeof(path), "/proc/%d/stat", r->app);
			r->bad = open(path, O_RDONLY);
			return r->bad < 0 ? -errno : 0;
		}
	case V_FOWN_OUTSIDE:
		/* F_SETOWN to the test: restore could not point the signals at it */
		{
			int p[2];

			r->app = getppid();
			if (pipe(p) || fcntl(p[0], F_SETOWN, r->app))
				return -errno;
			r->bad = p[0];
			return 0;
		}
	case V_NSFS_ORPHAN:
		/* a grandchild in a new uts namespace, gone: only the fd keeps the namespace */
		{
			char path[64];
			int status;
			pid_t gc = fork();

			if (gc == 0) {
				if (unshare(CLONE_NEWUTS))
					_exit(1);
				for (;;)
					pause();
			}
			if (gc < 0)
				return -errno;
			usleep(100000);
			snprintf(path, sizeof(path), "/proc/%d/ns/uts", gc);
			r->bad = open(path, O_RDONLY);
			kill(gc, SIGKILL);
			waitpid(gc, &status, 0);
			return r->bad < 0 ? -errno : 0;
		}
	default:
		return -EINVAL;
	}
}

/* After SIGUSR1: exit 0 when the child's state is intact. */
static int victim_check(void *arg, const void *report)
{
	enum victim_kind kind = *(enum victim_kind *)arg;
	const struct report *r = report;

	switch (kind) {
	case V_UFFD:
		/* Still a userfaultfd: the API handshake works on it. */
		{
			struct uffdio_api api = { .api = UFFD_API };

			return ioctl(r->bad, UFFDIO_API, &api) ? 2 : 0;
		}
	case V_NETLINK_SOCKET:
		/* Still the same datagram socket, its answer still queued: nothing consumed. */
		{
			static char buf[32768];
			struct nlmsghdr *h = (struct nlmsghdr *)buf;
			int type = 0;
			socklen_t len = sizeof(type);

			if (getsockopt(r->bad, SOL_SOCKET, SO_TYPE, &type, &len) ||
			    type != SOCK_DGRAM)
				return 2;
			return recv(r->bad, buf, sizeof(buf), MSG_DONTWAIT) < (ssize_t)sizeof(*h) ||
					       h->nlmsg_type != RTM_NEWLINK
				       ? 2
				       : 0;
		}
	case V_IN_FLIGHT:
	case V_IN_FLIGHT_EPOLL:
		return check_in_flight(kind, r);
	case V_NSFS_ORPHAN:
		/* still a namespace file */
		{
			char path[64], link[64] = "";

			snprintf(path, sizeof(path), "/proc/self/fd/%d", r->bad);
			return readlink(path, link, sizeof(link) - 1) > 0 &&
					       !strncmp(link, "uts:[", 5)
				       ? 0
				       : 2;
		}
	case V_FOWN_OUTSIDE:
		/* still owned by the test */
		return fcntl(r->bad, F_GETOWN) == r->app ? 0 : 2;
	case V_PROC_OUTSIDE:
		/* still the parent's stat, read from the start */
		{
			char buf[64];
			int pid = 0;

			return pread(r->bad, buf, sizeof(buf) - 1, 0) <= 0 ||
					       sscanf(buf, "%d ", &pid) != 1 || pid != r->app
				       ? 2
				       : 0;
		}
	default:
		return 0;
	}
}

static const struct victim_ops victim_ops = {
	.setup = victim_setup,
	.check = victim_check,
	.report_fd = REPORT_FD,
};

static int start_victim(enum victim_kind kind, struct report *r)
{
	victim = victim_start(&victim_ops, &kind, -1, r, sizeof(*r));
	second = victim > 0 ? r->second : 0;
	third = victim > 0 && kind == V_SHARED_TABLE ? r->app : 0;
	return victim < 0 ? victim : 0;
}

static int teardown(void **state)
{
	(void)state;
	victim_kill(&second);
	victim_kill(&third);
	victim_kill(&victim);
	return rm_rf(dir);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-dump-refusals.XXXXXX")));
	/* Images in a subdirectory: the directory fd dumped must not change under the test. */
	snprintf(imgdir, sizeof(imgdir), "%s/img", dir);
	assert_int_equal(mkdir(imgdir, 0700), 0);
	return 0;
}

/* Dump a child expected to be refused; its log. */
static const char *dump_refused(enum victim_kind kind, struct report *r)
{
	struct cr_options opts = { 0 };
	const char *log;
	int imgfd;

	assert_int_equal(start_victim(kind, r), 0);
	imgfd = img_dir_open(imgdir, false);
	assert_true(imgfd >= 0);
	logcap_start(-1);
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), -EOPNOTSUPP);
	log = logcap_stop();
	assert_true(log[0] != '\0');
	close(imgfd);
	/* The child works on, its fds untouched. */
	victim_finish(&victim);
	return log;
}

static void test_userfaultfd_refused(void **state)
{
	char expect[128];
	const char *log;
	struct report r;

	(void)state;
	log = dump_refused(V_UFFD, &r);
	snprintf(expect, sizeof(expect),
		 "pid %d fd %d: anon_inode:[userfaultfd] (userfaultfd) is not supported yet", r.pid,
		 r.bad);
	assert_in_log(log, expect);
}

static void test_netlink_socket_refused(void **state)
{
	char expect[128];
	const char *log;
	struct report r;

	(void)state;
	log = dump_refused(V_NETLINK_SOCKET, &r);
	snprintf(expect, sizeof(expect), "pid %d fd %d: socket:[", r.pid, r.bad);
	assert_in_log(log, expect);
	assert_in_log(log, "], a netlink socket of protocol 0, has a message of ");
	assert_in_log(log, "bytes queued unread: netlink queues are not supported");
}

static void test_shared_fd_table_refused(void **state)
{
	char expect[128];
	const char *log;
	struct report r;

	(void)state;
	log = dump_refused(V_SHARED_TABLE, &r);
	snprintf(expect, sizeof(expect),
		 "pid %d shares its fd table with pid %d, which is not its "
		 "parent",
		 r.app, r.second);
	assert_in_log(log, expect);
}

/*
 * The fds in flight are ids of files.img: the pipe's read end the child holds
 * too, and the eventfd no task holds, dumped on its own; the child still
 * finds its message with both fds after.
 */
static void test_in_flight(void **state)
{
	struct cr_options opts = { 0 };
	ProtobufCMessage **files, **fdi;
	size_t n_files, n_fdi;
	const UnixSkEntry *u;
	const FileEntry *ev;
	struct report r;
	size_t i;
	int imgfd;

	(void)state;
	assert_int_equal(start_victim(V_IN_FLIGHT, &r), 0);
	imgfd = img_dir_open(imgdir, false);
	assert_true(imgfd >= 0);
	assert_int_equal(dump_tree_files(victim, imgfd, &opts), 0);
	read_records(imgfd, CR_IMG_FILES, 0, &files, &n_files);
	read_records(imgfd, CR_IMG_FDINFO, (uint32_t)victim, &fdi, &n_fdi);
	u = find_file(files, n_files, find_fd(fdi, n_fdi, r.bad)->id)->unixsk;
	assert_non_null(u);
	assert_int_equal(u->n_queue, 1);
	assert_int_equal(u->n_queue_scm, 1);
	assert_int_equal(u->queue_scm[0]->elem, 0);
	assert_false(u->queue_scm[0]->has_pid);
	assert_int_equal(u->queue_scm[0]->n_fd_ids, 2);
	assert_int_equal(u->queue_scm[0]->fd_ids[0], find_fd(fdi, n_fdi, r.p0)->id);
	ev = find_file(files, n_files, u->queue_scm[0]->fd_ids[1]);
	assert_int_equal(ev->type, FILE_TYPE__FILE_EVENTFD);
	assert_int_equal(ev->eventfd->counter, IN_FLIGHT_COUNT);
	for (i = 0; i < n_fdi; i++)
		assert_int_not_equal(((FdEntry *)fdi[i])->id, ev->id);
	img_free_records(files, n_files);
	img_free_records(fdi, n_fdi);
	close(imgfd);
	victim_finish(&victim);
}

/* An epoll instance only in flight cannot be dumped without a task holding it. */
static void test_in_flight_epoll_refused(void **state)
{
	char expect[160];
	const char *log;
	struct report r;

	(void)state;
	log = dump_refused(V_IN_FLIGHT_EPOLL, &r);
	snprintf(expect, sizeof(expect),
		 "pid %d fd %d: anon_inode:[eventpoll] in flight in its queue is held by no task",
		 r.pid, r.bad);
	assert_in_log(log, expect);
}

/* A file of /proc/PID of a process outside the tree: refused, naming pid, fd and path. */
static void test_proc_outside_refused(void **state)
{
	char expect[192];
	const char *log;
	struct report r;

	(void)state;
	log = dump_refused(V_PROC_OUTSIDE, &r);
	snprintf(expect, sizeof(expect),
		 "pid %d fd %d: /proc/%d/stat: a file of pid %d, which is not a task of the "
		 "dumped tree",
		 r.pid, r.bad, r.app, r.app);
	assert_in_log(log, expect);
}

/* A description owned (F_SETOWN) by a process outside the tree: refused naming both. */
static void test_fown_outside_refused(void **state)
{
	char expect[192];
	const char *log;
	struct report r;

	(void)state;
	log = dump_refused(V_FOWN_OUTSIDE, &r);
	snprintf(expect, sizeof(expect), "pid %d fd %d: pipe:[", r.pid, r.bad);
	assert_in_log(log, expect);
	snprintf(expect, sizeof(expect),
		 "] is owned for signal-driven I/O (F_SETOWN) by pid %d, outside the dumped tree",
		 r.app);
	assert_in_log(log, expect);
}

/* A namespace file of a namespace no task of the tree is in: refused naming it. */
static void test_nsfs_orphan_refused(void **state)
{
	char expect[192];
	const char *log;
	struct report r;

	(void)state;
	log = dump_refused(V_NSFS_ORPHAN, &r);
	snprintf(expect, sizeof(expect), "pid %d fd %d: uts:[", r.pid, r.bad);
	assert_in_log(log, expect);
	assert_in_log(log, "] is a namespace no task of the dumped tree is in");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_userfaultfd_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netlink_socket_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_fd_table_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_flight_epoll_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_outside_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fown_outside_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nsfs_orphan_refused, setup, teardown),
	};

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	alarm(300); /* a hung child or dump fails the run instead of blocking it */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
