/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ZDTM_TST_H
#define ZDTM_TST_H

/*
 * The library of zdtm test programs. The life of a test:
 *
 *	test_init(argc, argv);          parse --pidfile/--outfile, daemonize
 *	... set up the state ...
 *	test_daemon();                  ready: the pidfile appears, the launcher exits
 *	test_waitsig();                 (or: while (test_go()) work();)
 *	... check the state ...
 *	pass(); or fail("reason");      the verdict, into the outfile
 *
 * Everything the test writes to stdout/stderr and through test_msg() lands in
 * the outfile. The runner reads the verdict from there (README.md).
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * -errno after a failed call; -EIO where errno says nothing (a short read or
 * write sets none), so that a failure never reads as 0.
 */
static inline int neg_errno(void)
{
	int e = errno;

	return e > 0 ? -e : -EIO;
}

/*
 * Parse --pidfile=F and --outfile=F (both required) and --NAME=VALUE test
 * options, open the outfile, and fork: the caller continues in the daemon
 * (a new session, stdout/stderr on the outfile) while the original process
 * waits until test_daemon() is called and exits 0, or exits 1 if the daemon
 * dies first. Exits with status 2 on bad usage. Installs the SIGTERM handler.
 */
void test_init(int argc, char **argv);
/*
 * test_init() with the daemon created in new namespaces (@flags: CLONE_NEW*):
 * with CLONE_NEWPID it is the init (pid 1) of its own pid namespace, the root
 * of a container, and the launcher writes its pidfile (its pid on the host).
 */
void test_init_ns(int argc, char **argv, int flags);
/*
 * Before test_init_ns(..., CLONE_NEWUSER | ...): the uid and gid map the
 * launcher writes for the new user namespace ("0 100000 65536" if not
 * called), and whether it denies setgroups there first. The test starts as
 * uid and gid 0 inside, with no supplementary groups.
 */
void test_userns(const char *map, bool deny_setgroups);
/*
 * Before test_init(): the test in a time namespace of its own whose
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME offsets are @mono and @boot seconds
 * (unshare(CLONE_NEWTIME) now, for the daemon, the first task born in it);
 * in the runner's mode userns the whole container, made in it inside the
 * container's user namespace (which owns it). 0, or -errno (a message on stderr).
 */
int test_timens(long mono, long boot);
/*
 * The CLOCK_MONOTONIC and CLOCK_BOOTTIME offsets (seconds) that
 * /proc/self/timens_offsets shows, those of the namespace of the caller's
 * children (-1 where a line is missing); 0 or -errno.
 */
int test_timens_offsets(long long *mono, long long *boot);
/*
 * Is the caller's namespace of @kind ("ipc", "uts"...) another than its
 * parent's? 1 apart, 0 the same, -errno when one cannot be read.
 */
int test_ns_apart_from_parent(const char *kind);

/*
 * After test_init(): whether the test runs in the runner's container (the
 * ns and userns modes: under an init of new pid, mount, UTS, IPC and network
 * namespaces, and a user namespace in userns). A test of a namespace of its
 * own of one of those kinds may use the container's instead.
 */
bool test_in_container(void);
/*
 * False in the container's init exec'ed again inside an overlay root
 * (.desc "ns-root: overlay"), where main() runs from the start once more:
 * what a test does before test_init() on the host is done when true only.
 */
bool test_launching(void);

/* The value of a test option --NAME=VALUE, or @def when it was not given. */
const char *test_arg(const char *name, const char *def);

/* The state is set up: write the pidfile (atomically) and release the launcher. */
void test_daemon(void);

/* True until SIGTERM arrives. */
bool test_go(void);

/* Sleep until SIGTERM arrives; the signal mask is exactly the same afterwards. */
void test_waitsig(void);

/* A log line ("HH:MM:SS.mmm PID: message") into the outfile, in one write; errno kept. */
void test_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The verdict lines the runner looks for: "PASS" and "FAIL: reason (file:line)".
 * fail() keeps errno: `fail("open: %m"); return -errno;` returns open()'s error.
 */
void pass(void);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define fail(fmt, ...) test_fail(__FILE__, __LINE__, fmt, ##__VA_ARGS__)

/*
 * Tell the runner where a memory area lies ("zdtm-area: ADDR LEN" in the
 * outfile), for tests with the "tamper" flag. Call before test_daemon().
 */
void test_publish_area(const void *addr, size_t len);

/* A fast 64-bit checksum of a memory area (not cryptographic). */
uint64_t test_csum(const void *buf, size_t len);

/* Fill @buf with a pseudo-random stream that depends only on @seed and the offset. */
void datagen(void *buf, size_t len, uint64_t seed);
/* 0 if @buf holds what datagen(@seed) wrote, else -EILSEQ and the first bad offset. */
int datachk(const void *buf, size_t len, uint64_t seed, size_t *ret_off);
/* The same stream from byte @off on: a socket stream is generated and checked piece by piece. */
void datagen_at(void *buf, size_t len, uint64_t seed, uint64_t off);
int datachk_at(const void *buf, size_t len, uint64_t seed, uint64_t off, size_t *ret_off);

/* ---- helpers shared by several tests (util.c) ---- */

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t test_now_ms(void);
/* Sleep @ms of monotonic time, whatever signals interrupt it. */
void test_sleep_ms(long ms);
/* A whole small file into @buf, NUL-terminated; its length or -errno. */
long test_read_file(const char *path, char *buf, size_t size);
/* The state letter of @pid in /proc/PID/stat (R, S, T, Z...), '?' when unreadable. */
char test_proc_state(pid_t pid);
/*
 * This process's start time (field 22 of /proc/self/stat): a restored process
 * starts anew, so a test can tell a restore from a dump --leave-running.
 */
unsigned long long test_start_time(void);
/* The /proc/self/maps entry holding @addr: bounds and "rwxp" perms; 0 or -ENOENT. */
int test_vma_find(const void *addr, unsigned long *start, unsigned long *end, char perms[5]);
/* The VmFlags line (" rd wr mr ...") of the mapping holding @addr; 0 or -errno. */
int test_vma_flags(const void *addr, char *flags, size_t size);
/* Whether a VmFlags string from test_vma_flags() holds the two-letter @flag. */
bool test_vma_has_flag(const char *flags, const char *flag);
/* Read @n readiness bytes from @fd (one per child); 0 or -EIO. */
int test_wait_ready(int fd, int n);
/* SIGTERM each child and reap it; 0 when all exited 0, else -ECHILD (logged). */
int test_reap_children(const int *pids, int n);
/*
 * Whether reading (or writing) one byte at @addr faults (SIGSEGV or SIGBUS).
 * It replaces those handlers for the time of the access: one thread at a time.
 */
bool test_faults(void *addr, bool write);
/*
 * The PFN of the page at @addr in process @pid (/proc/PID/pagemap), 0 when
 * it is not present or the PFN is hidden (not CAP_SYS_ADMIN of the host).
 */
uint64_t test_page_pfn(pid_t pid, const void *addr);

/* ---- TCP and UDP over loopback (inet.c) ---- */
/* 127.0.0.1; ::1; 127.0.0.1 as ::ffff:127.0.0.1 on a dual-stack IPv6 socket. */
enum inet_kind {
	INET_V4,
	INET_V6,
	INET_MAPPED,
};

/* AF_INET for INET_V4, AF_INET6 for the others. */
int inet_kind_family(enum inet_kind kind);
/* The loopback address of @kind with @port (host order) in @ss; its length. */
unsigned int inet_loopback(enum inet_kind kind, uint16_t port, struct sockaddr_storage *ss);
/* The port of @ss in host order. */
uint16_t inet_port(const struct sockaddr_storage *ss);
/* "a.b.c.d:port" or "[v6]:port" in @buf. */
const char *inet_str(const struct sockaddr_storage *ss, char *buf, size_t size);
/* A socket of @kind and @type, IPV6_V6ONLY set for INET_V6, cleared for INET_MAPPED; or -errno. */
int inet_socket(enum inet_kind kind, int type);
/*
 * A TCP socket of @kind listening on loopback (INET_MAPPED: on ::, both
 * families) at a port the kernel chose; the address to connect to in @ss
 * and @len. The fd or -errno (logged).
 */
int tcp_listen_loopback(enum inet_kind kind, int backlog, struct sockaddr_storage *ss,
			unsigned int *len);
/* A new TCP socket of @ss's family connected to @ss. The fd or -errno (logged). */
int tcp_connect_to(const struct sockaddr_storage *ss, unsigned int len);

/* The local and peer names of a socket (the peer zeroed when it has none). */
struct inet_names {
	struct sockaddr_storage local, peer;
};

/* getsockname() and getpeername() of @sk into @n: 0 or -errno. */
int inet_names_get(int sk, struct inet_names *n);
/* 0 when @sk still has the names in @n, -EINVAL (both logged) or -errno. */
int inet_names_check(int sk, const struct inet_names *n);

/*
 * A checksummed byte stream both ways over one non-blocking socket: the
 * stream of @tx_seed goes out, what comes in must be the stream of @rx_seed
 * in order. An echo pump sends back the stream it receives, no further than
 * it has received. The writer offers more per step than the reader takes, so
 * the queues stay full: data is always in flight.
 */
struct tcp_pump {
	int fd;
	uint64_t tx_seed, rx_seed;
	uint64_t sent, rcvd; /* bytes so far */
	uint64_t tx_limit; /* send no further (UINT64_MAX at first) */
	size_t rx_chunk; /* bytes read per step at most */
	bool echo; /* send back what came in (tx_seed == rx_seed) */
	bool eof; /* the peer shut its side down */
	bool shut; /* we shut ours down */
};

void tcp_pump_init(struct tcp_pump *p, int fd, uint64_t tx_seed, uint64_t rx_seed);
/* One non-blocking send of the stream: 1 sent, 0 would block, -errno. */
int tcp_pump_send(struct tcp_pump *p);
/*
 * Wait up to @timeout_ms, send and receive once: 1 something moved, 0
 * nothing, -errno (-EILSEQ: a wrong byte came in, logged).
 */
int tcp_pump_step(struct tcp_pump *p, int timeout_ms);
/*
 * Pump until @min_rcvd bytes came in: 0, -EPIPE (EOF first), -ETIMEDOUT
 * (@idle_ms without a byte moving) or -errno.
 */
int tcp_pump_run(struct tcp_pump *p, uint64_t min_rcvd, int idle_ms);
/* A line with @p's counts and TCP_INFO (state, queues, MSS, retransmits): why it stalled. */
void tcp_pump_log(const struct tcp_pump *p, const char *why);
/*
 * The end of a stream: send no more than already sent (an echo: all that
 * comes in), shut the write side down, and read until the peer's EOF,
 * checking every byte. 0 or -errno as tcp_pump_run().
 */
int tcp_pump_finish(struct tcp_pump *p, int idle_ms);

/*
 * fdinfo.c: the lines of @fd's fdinfo that hold @prefix ("fanotify "), from
 * it to the end of the line, each followed by ';', into @out; 0 or -errno
 * (-ENOBUFS: @size is too small).
 */
int test_fdinfo_lines(int fd, const char *prefix, char *out, size_t size);
/*
 * The exit status (a wait status) of the process of pidfd @pfd
 * (PIDFD_GET_INFO, 6.13), or -errno (-ENODATA: none yet).
 */
int test_pidfd_exit_status(int pfd);
/*
 * The Pid: line of @fd's fdinfo: -1 once the process is reaped, 0 outside our
 * pid namespace; INT_MIN (a sentinel no pid can be) when there is none.
 */
int test_fdinfo_pid(int fd);

/*
 * mountinfo.c: /proc/self/mountinfo made comparable: the parent as its line
 * number, shared:N/master:N renumbered in order of appearance, "0:N" devices
 * as "0:*". test_mountinfo_read(): 0 or -errno (-EBADMSG: a line it cannot
 * parse). test_mountinfo_same(): 0, or fail() naming the first line that
 * differs and -EINVAL.
 */
#define TEST_MNT_LINES 64
struct test_mountinfo {
	char line[TEST_MNT_LINES][1024];
	int n;
};
int test_mountinfo_read(struct test_mountinfo *m);
int test_mountinfo_same(const struct test_mountinfo *before, const struct test_mountinfo *after);

/*
 * netns.c: the test's own network namespace, the container's in the ns modes
 * (test_netns_own(), before anything is made in it), checked after the
 * restore (test_netns_kept()); 0, or -errno after fail() (-EINVAL: not in its own).
 */
int test_netns_own(void);
int test_netns_kept(void);
/* The standard output of `sh -c @cmd` into @buf; -EIO when it failed and printed nothing. */
int test_sh_output(const char *cmd, char *buf, size_t size);
/* 0 when @before and @after are equal; else fail() naming @what and where, -EINVAL. */
int test_same_text(const char *what, const char *before, const char *after);
/*
 * The whole check of a test that configured its namespace: described by
 * the shell command @describe, then test_daemon() and test_waitsig(), then
 * the test still in its namespace and the description the same; 0, or
 * -errno after fail().
 */
int test_netns_unchanged(const char *describe);

/*
 * Run @fn(@arg) in a process outside the test's tree: an intermediate child
 * forks it and exits, so it is reparented to the runner (a child subreaper)
 * and no dump sees it. It has its own session, no fd of the test, its
 * stdout and stderr on outside.log in the working directory (not the
 * outfile, a file of the dumped tree), and exits with @fn's value.
 * It cannot report a verdict: it tells the test through a file or a socket.
 * Its pid or -errno.
 */
int test_fork_outside(int (*fn)(void *), void *arg);
/* test_read_file() of @path once it exists, waiting up to @timeout_ms; -ENOENT after. */
long test_wait_file(const char *path, char *buf, size_t size, int timeout_ms);
/* Write @text to @path atomically (a temporary file renamed). 0 or -errno. */
int test_write_file(const char *path, const char *text);

#endif
