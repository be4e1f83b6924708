// SPDX-License-Identifier: GPL-2.0
/*
 * The packet holder (include/nfq-hold.h): a process of its own on an NFQUEUE
 * of one network namespace, through libnetfilter_queue. What the lock's rules
 * queue there waits without a verdict; "release" accepts it all in one batch
 * verdict (the queue's order) and everything after it; "drop" or its death
 * drops (the kernel flushes a queue whose listener goes). A controller talks
 * to it over an abstract unix socket of the namespace, one byte a command:
 *
 *   r  release: accept what is held and whatever comes; answers the count
 *   s  sync: the controller removed our rules; verdict what is still queued
 *      (released: accepted), then answer, so that the lock's tables can go
 *      (deleting a base chain drops whatever a queue of the namespace holds)
 *   i, n  its pid, its queue number
 *   k  keep: stay when this controller goes (a kill-mode dump: the restore
 *      of its images finds the holder by name); without it a controller
 *      that goes away (crashed) makes the holder drop and exit
 *   g  give: each packet held that came in from outside (PREROUTING) and
 *      fits in what is kept (HOLD_KEEP_MAX), as a message of its own (a
 *      struct hold_pkt, then the packet from its network header on), then a
 *      lone struct hold_pkt with proto 0; then drop them all (a migration's
 *      source forwards them to the destination: Documentation/migration.md)
 *   d  drop what is held and exit
 *   q  exit (what is still held is dropped by the kernel)
 *
 * It is a grandchild of criu-like (reparented, never waited for by the
 * dumper or the restorer), with no fd of criu-like's but its own: it must
 * hold no namespace, image or terminal alive.
 *
 * libnetfilter_queue is loaded by the first holder's start (include/dl-lib.h),
 * in criu-like before its fork, not linked: with it, the two libraries it
 * brings (libnfnetlink, libmnl) were mapped in every restored task.
 */
#define LOG_PREFIX "nfq-hold: "

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <libnfnetlink/libnfnetlink.h>

#include "dl-lib.h"
#include "log.h"
#include "net-lock-int.h"
#include "net-lock.h"
#include "nfq-hold.h"

/* linux/netfilter.h's verdicts: that header clashes with netinet/in.h */
#ifndef NF_DROP
#define NF_DROP 0
#define NF_ACCEPT 1
#endif
#define HOLD_HOOK_PRE_ROUTING 0 /* NF_INET_PRE_ROUTING */
#include "util.h"

/* What the holder calls of libnetfilter_queue (nfnl_rcvbufsiz: of libnfnetlink, which it needs). */
#define NFQ_FUNCS(X)              \
	X(nfq_close)              \
	X(nfq_create_queue)       \
	X(nfq_destroy_queue)      \
	X(nfq_fd)                 \
	X(nfq_get_indev)          \
	X(nfq_get_msg_packet_hdr) \
	X(nfq_get_payload)        \
	X(nfq_handle_packet)      \
	X(nfq_nfnlh)              \
	X(nfq_open)               \
	X(nfq_set_mode)           \
	X(nfq_set_queue_maxlen)   \
	X(nfq_set_verdict)        \
	X(nfq_set_verdict_batch)  \
	X(nfnl_rcvbufsiz)

static struct dl_lib dl_lib = DL_LIB_INIT("libnetfilter_queue.so.1", "the packet holder");
DL_LIB_TABLE(NFQ_FUNCS);

static void nfq_load(void)
{
	if (!dl_lib_open(&dl_lib)) {
		NFQ_FUNCS(DL_LIB_SYM)
	}
}

/* Every call below goes through the table: the names stand for its entries. */
#define nfq_close (*dl_fn.nfq_close)
#define nfq_create_queue (*dl_fn.nfq_create_queue)
#define nfq_destroy_queue (*dl_fn.nfq_destroy_queue)
#define nfq_fd (*dl_fn.nfq_fd)
#define nfq_get_indev (*dl_fn.nfq_get_indev)
#define nfq_get_msg_packet_hdr (*dl_fn.nfq_get_msg_packet_hdr)
#define nfq_get_payload (*dl_fn.nfq_get_payload)
#define nfq_handle_packet (*dl_fn.nfq_handle_packet)
#define nfq_nfnlh (*dl_fn.nfq_nfnlh)
#define nfq_open (*dl_fn.nfq_open)
#define nfq_set_mode (*dl_fn.nfq_set_mode)
#define nfq_set_queue_maxlen (*dl_fn.nfq_set_queue_maxlen)
#define nfq_set_verdict (*dl_fn.nfq_set_verdict)
#define nfq_set_verdict_batch (*dl_fn.nfq_set_verdict_batch)
#define nfnl_rcvbufsiz (*dl_fn.nfnl_rcvbufsiz)

#define HOLD_SOCK_PREFIX "criu-like-hold:"
/* queue numbers tried, from a base that is unlikely to be a firewall's own */
#define HOLD_QUEUE_BASE 0x4c00
#define HOLD_QUEUE_TRIES 256
/* what the kernel keeps for us before it drops (fail-closed) */
#define HOLD_QUEUE_MAXLEN 65536
#define HOLD_RCVBUF (8 << 20)
/* the most the packets kept for g may take */
#define HOLD_KEEP_MAX (16 << 20)

struct nfq_hold {
	int fd; /* connected to the holder */
	int queue;
	pid_t pid; /* the holder: its rules are chains CRLH_<pid>_I and _O of table raw */
	bool chains[2]; /* created, for IPv4 [0] and IPv6 [1] */
	bool found; /* started by another criu-like: its chains are not known */
	struct tool_run *primed[2]; /* ip(6)tables-restore started ahead (nfq_hold_prime()) */
	/*
	 * Table raw of the family (an nftables table under iptables-nft) was
	 * made by our first rules: removed again once it holds nothing else.
	 * raw_known: looked at (before the freeze when primed).
	 */
	bool raw_made[2], raw_known[2];
	char name[96];
};

#define HOLD_CHAIN_FMT "CRLH_%d"

bool nfq_hold_raw_theirs[2];

/* ---- the holder process --------------------------------------------------------------------- */

struct holder {
	struct nfq_q_handle *qh;
	uint32_t last_id; /* the newest packet held */
	int queue;
	unsigned int held;
	bool passing; /* released: accept at once */
	bool rules_gone; /* the controller removed our rules (s) */
	/*
	 * Bit i: table raw of family i (ip, ip6) was made for our rules (x, y),
	 * told by a dump that leaves us to its restore (m asks): one restore
	 * process made it, another removes it
	 */
	int raw_made;
	/* a copy of each packet held that came in from outside, for g */
	struct kept_pkt {
		struct hold_pkt hdr;
		uint8_t *data;
	} * kept;
	size_t n_kept, kept_size, kept_bytes;
};

/* The length an IPv4 or IPv6 packet says it has, or 0. */
static size_t ip_length(uint16_t proto, const uint8_t *p, size_t len)
{
	if (proto == 0x0800 && len >= 20 && (p[0] >> 4) == 4)
		return (size_t)p[2] << 8 | p[3];
	if (proto == 0x86dd && len >= 40 && (p[0] >> 4) == 6)
		return 40 + ((size_t)p[4] << 8 | p[5]);
	return 0;
}

/* A held packet that came from outside, as an external copy; false: not kept. */
static bool keep_packet(struct holder *st, struct nfq_data *nfa,
			const struct nfqnl_msg_packet_hdr *ph)
{
	unsigned char *data;
	int len = nfq_get_payload(nfa, &data);
	struct kept_pkt *k;

	if (ph->hook != HOLD_HOOK_PRE_ROUTING || len <= 0 ||
	    st->kept_bytes + (size_t)len > HOLD_KEEP_MAX ||
	    ip_length(ntohs(ph->hw_protocol), data, (size_t)len) != (size_t)len)
		return false; /* not from outside, no room, or cut short (a large GRO packet) */
	if (st->n_kept == st->kept_size) {
		size_t size = st->kept_size ? 2 * st->kept_size : 64;

		k = realloc(st->kept, size * sizeof(*k));
		if (!k)
			return false;
		st->kept = k;
		st->kept_size = size;
	}
	k = &st->kept[st->n_kept];
	k->data = malloc((size_t)len);
	if (!k->data)
		return false;
	memcpy(k->data, data, (size_t)len);
	k->hdr = (struct hold_pkt){ .proto = ntohs(ph->hw_protocol),
				    .len = (uint16_t)len,
				    .indev = nfq_get_indev(nfa) };
	st->n_kept++;
	st->kept_bytes += (size_t)len;
	return true;
}

static void kept_free(struct holder *st)
{
	while (st->n_kept)
		free(st->kept[--st->n_kept].data);
	st->kept_bytes = 0;
}

static volatile sig_atomic_t terminated;

static void on_term(int sig __unused)
{
	terminated = 1;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg __unused, struct nfq_data *nfa,
		     void *data)
{
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	struct holder *st = data;

	if (!ph)
		return 0;
	if (st->passing)
		return nfq_set_verdict(qh, ntohl(ph->packet_id), NF_ACCEPT, 0, NULL) < 0 ? -1 : 0;
	st->last_id = ntohl(ph->packet_id);
	st->held++;
	keep_packet(st, nfa, ph);
	return 0;
}

/* One verdict for every packet held, oldest first (ids grow with the queue's order). */
static void verdict_all(struct holder *st, int verdict)
{
	if (st->held)
		nfq_set_verdict_batch(st->qh, st->last_id, verdict);
	st->held = 0;
	kept_free(st);
}

static int sock_addr(const char *name, struct sockaddr_un *a, socklen_t *len)
{
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* abstract: a name of this network namespace, gone with the process */
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, HOLD_SOCK_PREFIX "%s", name);
	if (n < 0 || (size_t)n >= sizeof(a->sun_path) - 1)
		return -ENAMETOOLONG;
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	return 0;
}

/* The queue and the control socket; the queue number, or -errno. */
static int holder_setup(struct nfq_handle *h, struct holder *st, const char *name, int *lsk)
{
	struct sockaddr_un a;
	socklen_t len;
	int q, err;

	for (q = HOLD_QUEUE_BASE + getpid() % HOLD_QUEUE_TRIES;
	     q < HOLD_QUEUE_BASE + 2 * HOLD_QUEUE_TRIES && !st->qh; q++)
		st->qh = nfq_create_queue(h, (uint16_t)q, on_packet, st);
	if (!st->qh)
		return -EBUSY;
	q--;
	/* the packets themselves too, up to 64 KiB each: g gives them */
	if (nfq_set_mode(st->qh, NFQNL_COPY_PACKET, 0xffff) < 0)
		return -EIO;
	/* a full queue drops (no NFQA_CFG_F_FAIL_OPEN): never accept before the restore */
	nfq_set_queue_maxlen(st->qh, HOLD_QUEUE_MAXLEN);
	nfnl_rcvbufsiz(nfq_nfnlh(h), HOLD_RCVBUF);
	err = sock_addr(name, &a, &len);
	if (err)
		return err;
	*lsk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (*lsk < 0 || bind(*lsk, (struct sockaddr *)&a, len) || listen(*lsk, 4))
		return neg_errno();
	return q;
}

static void holder_packets(struct nfq_handle *h, int fd)
{
	char buf[4096] __attribute__((aligned));
	ssize_t n;

	/* ENOBUFS: notifications lost, their packets stay queued until we exit: dropped */
	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		nfq_handle_packet(h, buf, (int)n);
}

/* A command of the controller; false: exit. */
static void holder_packets(struct nfq_handle *h, int fd);

static bool holder_command(struct nfq_handle *h, struct holder *st, char c, int csk, bool *keep)
{
	int n;

	switch (c) {
	case 'r':
		n = (int)st->held;
		verdict_all(st, NF_ACCEPT);
		st->passing = true;
		send(csk, &n, sizeof(n), MSG_NOSIGNAL);
		return true;
	case 's':
		/* every packet queued before the rules went is already in our socket */
		holder_packets(h, nfq_fd(h));
		st->rules_gone = true;
		n = (int)st->held;
		send(csk, &n, sizeof(n), MSG_NOSIGNAL);
		return true;
	case 'g': {
		struct hold_pkt end = { 0 };
		size_t i;

		holder_packets(h, nfq_fd(h));
		for (i = 0; i < st->n_kept; i++) {
			struct iovec iov[2] = { { &st->kept[i].hdr, sizeof(st->kept[i].hdr) },
						{ st->kept[i].data, st->kept[i].hdr.len } };
			struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };

			if (sendmsg(csk, &m, MSG_NOSIGNAL) < 0)
				break;
		}
		verdict_all(st, NF_DROP);
		kept_free(st);
		send(csk, &end, sizeof(end), MSG_NOSIGNAL);
		return true;
	}
	case 'k':
		*keep = true;
		n = 0;
		send(csk, &n, sizeof(n), MSG_NOSIGNAL);
		return true;
	case 'i':
		n = getpid();
		send(csk, &n, sizeof(n), MSG_NOSIGNAL);
		return true;
	case 'x':
	case 'y':
		st->raw_made |= c == 'x' ? 1 : 2;
		n = 0;
		send(csk, &n, sizeof(n), MSG_NOSIGNAL);
		return true;
	case 'm':
		n = st->raw_made;
		send(csk, &n, sizeof(n), MSG_NOSIGNAL);
		return true;
	case 'n':
		n = st->queue;
		send(csk, &n, sizeof(n), MSG_NOSIGNAL);
		return true;
	case 'd':
		verdict_all(st, NF_DROP);
		return false;
	default:
		return false;
	}
}

static void raw_drop_bare(int fi);

/* The chains of holder @pid, in both families; quiet: a family may have none. */
static void holder_rules_remove(pid_t pid)
{
	char chain[32];
	_cleanup_free_ char *text = NULL;

	snprintf(chain, sizeof(chain), HOLD_CHAIN_FMT, pid);
	text = netlock_hold_ipt_delete(chain);
	if (!text)
		return;
	ipt_restore(AF_INET, text, true);
	ipt_restore(AF_INET6, text, true);
}

/*
 * @csk: the first controller's end of a socketpair made before the fork, so
 * that a controller killed before it could connect by name (a SIGKILLed
 * restore made ahead, a dump) is seen gone at once, as any other.
 */
static void __attribute__((noreturn)) holder_main(const char *name, int ready, int csk)
{
	struct holder st = { 0 };
	struct nfq_handle *h = nfq_open();
	int lsk = -1, q;
	bool keep = false;
	char c;

	int msg[2];

	q = h ? holder_setup(h, &st, name, &lsk) : -errno;
	st.queue = q;
	msg[0] = q;
	msg[1] = getpid();
	if (write(ready, msg, sizeof(msg)) != sizeof(msg) || q < 0)
		_exit(1);
	close(ready);
	for (;;) {
		struct pollfd p[3] = { { nfq_fd(h), POLLIN, 0 },
				       { lsk, POLLIN, 0 },
				       { csk, POLLIN, 0 } };

		if (terminated) {
			verdict_all(&st, NF_DROP);
			break;
		}
		if (poll(p, 3, -1) < 0)
			continue;
		if (p[0].revents)
			holder_packets(h, nfq_fd(h));
		if (p[1].revents & POLLIN) {
			int s = accept4(lsk, NULL, NULL, SOCK_CLOEXEC);

			/* the newest controller is the one: a restore after a dump that kept us */
			if (s >= 0) {
				if (csk >= 0)
					close(csk);
				csk = s;
				keep = false;
			}
			continue;
		}
		if (csk < 0 || !p[2].revents)
			continue;
		if (recv(csk, &c, 1, 0) == 1) {
			if (!holder_command(h, &st, c, csk, &keep))
				break;
			continue;
		}
		/* the controller is gone: kept, wait for the next; crashed, drop */
		close(csk);
		csk = -1;
		if (!keep) {
			verdict_all(&st, NF_DROP);
			break;
		}
	}
	/*
	 * Our rules go first (no hook is unregistered: nothing queued is lost),
	 * then the queue: the kernel drops whatever it still holds. Packets come
	 * to the lock underneath from now on.
	 */
	if (!st.rules_gone) {
		holder_rules_remove(getpid());
		for (int fi = 0; fi < 2; fi++)
			if (st.raw_made & (1 << fi))
				raw_drop_bare(fi);
	}
	nfq_destroy_queue(st.qh);
	nfq_close(h);
	_exit(0);
}

/* In the grandchild: nothing of criu-like's stays open, no signal of its reaches us. */
static void holder_detach_fds(int *ready, int *csk)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int sig;

	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    dup2(*ready, 3) < 0 || dup2(*csk, 4) < 0)
		_exit(1);
	*ready = 3;
	*csk = 4;
	close_range(5, ~0U, 0);
	setsid();
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	/* SIGTERM, SIGINT, SIGHUP: drop and remove our rules on the way out (holder_main()) */
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGHUP, on_term);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "criu-like-hold");
	prctl(PR_SET_PDEATHSIG, 0);
}

static int hold_ask(struct nfq_hold *h, char c);

static int hold_connect(const char *name, int *ret)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd, err = sock_addr(name, &a, &len);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return neg_errno();
	if (connect(fd, (struct sockaddr *)&a, len)) {
		err = errno == ECONNREFUSED ? -ENOENT : neg_errno();
		close(fd);
		return err;
	}
	*ret = fd;
	return 0;
}

static struct nfq_hold *hold_new(const char *name, int fd, int queue)
{
	struct nfq_hold *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->fd = fd;
	h->queue = queue;
	snprintf(h->name, sizeof(h->name), "%s", name);
	return h;
}

int nfq_hold_start(const char *name, struct nfq_hold **ret)
{
	int pfd[2], sp[2], msg[2] = { -EIO, 0 }, q, fd, err = 0, status;
	struct nfq_hold *h;
	pid_t pid;

	if (strlen(name) >= sizeof(h->name))
		return -ENAMETOOLONG;
	/* the holder, a fork, calls the library: loaded here, before the fork */
	pthread_once(&dl_lib.once, nfq_load);
	if (dl_lib.err) {
		pr_warn("cannot hold packets: they are dropped, peers retransmit\n");
		return dl_lib.err;
	}
	if (pipe2(pfd, O_CLOEXEC))
		return neg_errno();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp)) {
		err = neg_errno();
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		close(sp[0]);
		/* the grandchild holds; this child exits at once so nobody waits for the holder */
		if (fork() == 0) {
			holder_detach_fds(&pfd[1], &sp[1]);
			holder_main(name, pfd[1], sp[1]);
		}
		_exit(0);
	}
	close(pfd[1]);
	close(sp[1]);
	fd = sp[0];
	if (pid < 0) {
		err = neg_errno();
		close(pfd[0]);
		close(fd);
		return err;
	}
	waitpid(pid, &status, 0);
	if (read(pfd[0], msg, sizeof(msg)) != sizeof(msg))
		msg[0] = -EIO;
	close(pfd[0]);
	q = msg[0];
	if (q < 0) {
		close(fd);
		pr_warn("cannot hold packets on an NFQUEUE (%s): they are dropped, peers "
			"retransmit\n",
			strerror(-q));
		return q;
	}
	/* connected from the start: its end of the socketpair */
	h = hold_new(name, fd, q);
	if (h)
		h->pid = msg[1];
	if (!h) {
		if (fd >= 0)
			close(fd);
		pr_warn("cannot reach the packet holder %s: %s\n", name,
			strerror(err ? -err : ENOMEM));
		return err ? err : -ENOMEM;
	}
	pr_debug("packet holder %s listens on queue %d\n", name, q);
	*ret = h;
	return 0;
}

/* A command and its answer (an int); -errno when the holder is gone. */
static int hold_ask(struct nfq_hold *h, char c)
{
	int n;

	if (send(h->fd, &c, 1, MSG_NOSIGNAL) != 1)
		return neg_errno();
	if (recv(h->fd, &n, sizeof(n), 0) != sizeof(n))
		return -EPIPE;
	return n;
}

int nfq_hold_find(const char *name, struct nfq_hold **ret)
{
	struct nfq_hold *h;
	int fd, made, err = hold_connect(name, &fd);

	if (err)
		return err;
	h = hold_new(name, fd, -1);
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->pid = hold_ask(h, 'i');
	h->queue = hold_ask(h, 'n');
	h->found = h->chains[0] = h->chains[1] = true;
	/* the tables raw the dump made for these rules, removed with them (nfq_hold_unhold()) */
	made = hold_ask(h, 'm');
	for (int i = 0; made >= 0 && i < 2; i++) {
		h->raw_made[i] = made & (1 << i);
		h->raw_known[i] = true;
	}
	if (h->pid <= 0 || h->queue < 0) {
		nfq_hold_stop(h, true);
		return -EPIPE;
	}
	*ret = h;
	return 0;
}

/*
 * Does table raw of family @fi exist before our first rules? iptables-nft
 * makes it (with its base chains) for them and leaves it behind when they
 * go: a namespace would gain a table it did not have. Without nftables
 * (iptables-legacy, whose tables always exist) there is nothing to undo.
 */
static struct {
	ino_t ino; /* the namespace looked at, 0: none */
	bool has[2];
} raw_seen;

/* Table raw of each family in this thread's namespace, looked at once (nfq_hold_raw_probe()). */
static int raw_tables_here(bool has[2])
{
	_cleanup_free_ char *out = NULL;
	struct stat st;
	int err;

	if (stat("/proc/thread-self/ns/net", &st))
		return neg_errno();
	if (raw_seen.ino != st.st_ino) {
		err = nft_exec(NULL, "list tables\n", &out, true);
		if (err)
			return err; /* no nftables: iptables-legacy, nothing to undo */
		raw_seen.has[0] = netlock_listing_has(out, "table ip raw");
		raw_seen.has[1] = netlock_listing_has(out, "table ip6 raw");
		raw_seen.ino = st.st_ino;
	}
	has[0] = raw_seen.has[0];
	has[1] = raw_seen.has[1];
	return 0;
}

void nfq_hold_raw_probe(void)
{
	bool has[2];

	raw_tables_here(has);
}

/* Before the holder's first rules: which tables raw they would make (both families at once). */
static void raw_look(struct nfq_hold *h, int fi)
{
	bool has[2];
	int i;

	if (h->raw_known[fi] || h->found)
		return;
	if (raw_tables_here(has))
		has[0] = has[1] = true; /* not known: never removed */
	raw_seen.ino = 0; /* what was looked at is used once */
	for (i = 0; i < 2; i++) {
		h->raw_made[i] = !h->chains[i] && !has[i];
		h->raw_known[i] = true;
	}
}

/* Table raw of family @fi removed if it holds only its bare base chains. */
static void raw_drop_bare(int fi)
{
	_cleanup_free_ char *out = NULL;
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "list table %s raw\n", fi ? "ip6" : "ip");
	if (nft_exec(NULL, cmd, &out, true) || !netlock_raw_table_bare(out))
		return;
	snprintf(cmd, sizeof(cmd), "delete table %s raw\n", fi ? "ip6" : "ip");
	if (!nft_exec(NULL, cmd, NULL, true))
		pr_debug("table %s raw, made for the held packets' rules, removed\n",
			 fi ? "ip6" : "ip");
}

/* Table raw of family @fi removed when we made it and it holds only its bare base chains. */
static void raw_unmake(struct nfq_hold *h, int fi)
{
	if (!h->raw_made[fi] || nfq_hold_raw_theirs[fi])
		return;
	h->raw_made[fi] = false;
	raw_drop_bare(fi);
}

void nfq_hold_prime(struct nfq_hold *h)
{
	int fi;

	for (fi = 0; fi < 2; fi++) {
		raw_look(h, fi);
		if (!h->primed[fi])
			h->primed[fi] = ipt_restore_start(fi ? AF_INET6 : AF_INET);
	}
}

void nfq_hold_prime_end(struct nfq_hold *h)
{
	int fi;

	for (fi = 0; h && fi < 2; fi++)
		tool_cancel(h->primed[fi]);
}

/* The tools started ahead: their input ended, waited for. */
static void hold_unprime(struct nfq_hold *h)
{
	int fi;

	for (fi = 0; fi < 2; fi++) {
		tool_abandon(h->primed[fi]);
		h->primed[fi] = NULL;
	}
}

/* @text for the family of index @fi: the tool started ahead if it still waits, else a new one. */
static int hold_ipt_restore(struct nfq_hold *h, int fi, const char *text)
{
	struct tool_run *r = h->primed[fi];
	int family = fi ? AF_INET6 : AF_INET;

	h->primed[fi] = NULL;
	if (r && !tool_finish(r, text, NULL, true))
		return 0;
	/* none, or cancelled (nfq_hold_prime_end()), or it failed: a new one */
	return ipt_restore(family, text, true);
}

/* One iptables-restore per family that has something to hold. */
static int hold_add(struct nfq_hold *h, const struct inet_tuple *t, size_t n, bool netns)
{
	char chain[32], what[2 * 46 + 32] = "every packet not on lo";
	size_t i;
	int fi, err = 0;

	snprintf(chain, sizeof(chain), HOLD_CHAIN_FMT, h->pid);
	for (fi = 0; fi < 2 && !err; fi++) {
		int family = fi ? AF_INET6 : AF_INET;
		_cleanup_free_ char *text = NULL;

		for (i = 0; i < n && t[i].family != family; i++)
			;
		if (i == n && !netns)
			continue;
		raw_look(h, fi);
		text = netlock_hold_ipt_add(chain, !h->chains[fi], family, t, n, netns, h->queue);
		err = text ? hold_ipt_restore(h, fi, text) : neg_errno();
		if (!err)
			h->chains[fi] = true;
	}
	if (!netns && n)
		netlock_nft_elem(t, what, sizeof(what));
	if (err)
		pr_warn("cannot hold %s%s on queue %d (%s): dropped instead, peers retransmit\n",
			n > 1 ? "the packets from " : "", what, h->queue, strerror(-err));
	return err;
}

int nfq_hold_add(struct nfq_hold *h, const struct inet_tuple *t, size_t n)
{
	return n ? hold_add(h, t, n, false) : 0;
}

int nfq_hold_add_netns(struct nfq_hold *h)
{
	return hold_add(h, NULL, 0, true);
}

int nfq_hold_queue(const struct nfq_hold *h)
{
	return h->queue;
}

const char *nfq_hold_name(const struct nfq_hold *h)
{
	return h->name;
}

int nfq_hold_unhold(struct nfq_hold *h)
{
	char chain[32];
	_cleanup_free_ char *text = NULL;
	int fi, err = 0;

	snprintf(chain, sizeof(chain), HOLD_CHAIN_FMT, h->pid);
	text = netlock_hold_ipt_delete(chain);
	if (!text)
		return -ENOMEM;
	for (fi = 0; fi < 2; fi++)
		if (h->chains[fi] && !ipt_restore(fi ? AF_INET6 : AF_INET, text, h->found))
			h->chains[fi] = false;
	/* what was queued meanwhile is let through before anyone deletes a base chain */
	err = hold_ask(h, 's');
	for (fi = 0; err >= 0 && fi < 2; fi++)
		if (!h->chains[fi])
			raw_unmake(h, fi);
	return err < 0 ? err : 0;
}

int nfq_hold_give(struct nfq_hold *h, nfq_hold_give_fn fn, void *priv)
{
	static uint8_t buf[sizeof(struct hold_pkt) + 0x10000];
	const struct hold_pkt *p = (const struct hold_pkt *)buf;
	char c = 'g';
	ssize_t len;
	int n = 0;

	if (send(h->fd, &c, 1, MSG_NOSIGNAL) != 1)
		return neg_errno();
	for (;;) {
		len = recv(h->fd, buf, sizeof(buf), 0);
		if (len < (ssize_t)sizeof(*p) || (size_t)len != sizeof(*p) + p->len)
			return -EPIPE;
		if (!p->proto)
			break;
		/* what cannot go is dropped: the peer retransmits it, as before */
		if (!fn(priv, p, buf + sizeof(*p)))
			n++;
	}
	return n;
}

int nfq_hold_release(struct nfq_hold *h)
{
	int n = hold_ask(h, 'r');

	if (n < 0)
		pr_warn("packet holder %s is gone: what it held was dropped, peers retransmit\n",
			h->name);
	else
		pr_info("packet holder %s: %d held packet%s let go\n", h->name, n,
			n == 1 ? "" : "s");
	return n;
}

/* Until the holder has exited (it closes its end): its queue is gone after this. */
static void hold_wait_gone(int fd)
{
	char c;
	struct pollfd p = { fd, POLLIN, 0 };

	if (poll(&p, 1, 2000) > 0)
		(void)!recv(fd, &c, 1, 0);
}

void nfq_hold_stop(struct nfq_hold *h, bool drop)
{
	char c = drop ? 'd' : 'q';

	if (!h)
		return;
	hold_unprime(h);
	if (send(h->fd, &c, 1, MSG_NOSIGNAL) == 1)
		hold_wait_gone(h->fd);
	pr_debug("packet holder %s stopped%s\n", h->name, drop ? ", what it held dropped" : "");
	close(h->fd);
	free(h);
}

void nfq_hold_detach(struct nfq_hold *h)
{
	if (!h)
		return;
	hold_unprime(h);
	/* the tables raw made for its rules: for the restore to remove with them */
	for (int i = 0; i < 2; i++)
		if (h->raw_made[i] && !nfq_hold_raw_theirs[i])
			hold_ask(h, i ? 'y' : 'x');
	if (hold_ask(h, 'k') < 0)
		pr_warn("packet holder %s is gone: the packets of the killed tree are dropped\n",
			h->name);
	else
		pr_info("packet holder %s keeps the packets until these images are restored\n",
			h->name);
	close(h->fd);
	free(h);
}

void nfq_hold_stop_name(const char *name)
{
	struct nfq_hold *h;

	if (!nfq_hold_find(name, &h))
		nfq_hold_stop(h, true);
}

/* Is @pid a holder (not a pid reused by something else)? */
static bool holder_alive(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strcmp(comm, "criu-like-hold\n");
}

int nfq_hold_cleanup(void)
{
	pid_t pids[64];
	size_t n, i;
	int fi, removed = 0;

	for (fi = 0; fi < 2; fi++) {
		const char *const argv[] = {
			fi ? "ip6tables" : "iptables", "-w", "-t", "raw", "-S", NULL
		};
		_cleanup_free_ char *listing = NULL;

		/* no tool, no rules of a holder */
		if (run_tool(argv, NULL, &listing, true))
			continue;
		n = netlock_hold_chain_pids(listing, pids, ARRAY_SIZE(pids));
		for (i = 0; i < n; i++) {
			char chain[32];
			_cleanup_free_ char *text = NULL;

			if (holder_alive(pids[i]))
				continue;
			snprintf(chain, sizeof(chain), HOLD_CHAIN_FMT, pids[i]);
			pr_warn("removing the rules %s_I and %s_O of a packet holder that is "
				"gone\n",
				chain, chain);
			text = netlock_hold_ipt_delete(chain);
			if (text && !ipt_restore(fi ? AF_INET6 : AF_INET, text, false))
				removed++;
		}
	}
	return removed;
}

/* ---- one holder per network namespace ----------------------------------------------------- */

static struct {
	dev_t dev;
	ino_t ino;
	struct nfq_hold *h;
	bool failed; /* tried: no NFQUEUE here */
} holders[8];
static bool hold_off;

void nfq_hold_disable(bool off)
{
	hold_off = off;
}

/* The slot of this thread's network namespace (a free one when @add), or -ENOENT, -errno. */
static int here_slot(bool add)
{
	struct stat st;
	size_t i;

	if (stat("/proc/thread-self/ns/net", &st))
		return neg_errno();
	for (i = 0; i < ARRAY_SIZE(holders); i++)
		if ((holders[i].h || holders[i].failed) && holders[i].ino == st.st_ino &&
		    holders[i].dev == st.st_dev)
			return (int)i;
	for (i = 0; add && i < ARRAY_SIZE(holders); i++)
		if (!holders[i].h && !holders[i].failed) {
			holders[i].ino = st.st_ino;
			holders[i].dev = st.st_dev;
			return (int)i;
		}
	return -ENOENT;
}

struct nfq_hold *nfq_hold_here(const char *name, bool start)
{
	char gen[64];
	int i;

	if (hold_off)
		return NULL;
	i = here_slot(start);
	if (i < 0)
		return NULL;
	if (holders[i].h || holders[i].failed || !start)
		return holders[i].h;
	if (!name) {
		snprintf(gen, sizeof(gen), "p%d-%lu", getpid(), (unsigned long)holders[i].ino);
		name = gen;
	}
	if (nfq_hold_start(name, &holders[i].h))
		holders[i].failed = true;
	return holders[i].h;
}

struct nfq_hold *nfq_hold_take_here(void)
{
	struct nfq_hold *h;
	int i = here_slot(false);

	if (i < 0)
		return NULL;
	h = holders[i].h;
	holders[i].h = NULL;
	holders[i].failed = false;
	return h;
}
