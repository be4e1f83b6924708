// SPDX-License-Identifier: GPL-2.0
/*
 * The packet holder process (nfq-hold.c describes it and its commands): its
 * start (a grandchild of criu-like), its queue and control socket, the
 * packets it holds and keeps, its answers. The only user of
 * libnetfilter_queue, loaded before the fork.
 */
#define LOG_PREFIX "nfq-hold: "

#include <arpa/inet.h>
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
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "dl-lib.h"
#include "log.h"
#include "net-lock-int.h"
#include "nfq-hold-int.h"
#include "util.h"

/* linux/netfilter.h's verdicts: that header clashes with netinet/in.h */
#ifndef NF_DROP
#define NF_DROP 0
#define NF_ACCEPT 1
#endif
#define HOLD_HOOK_PRE_ROUTING 0 /* NF_INET_PRE_ROUTING */

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

DL_LIB("libnetfilter_queue.so.1", "the packet holder", NFQ_FUNCS);

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

int sock_addr(const char *name, struct sockaddr_un *a, socklen_t *len)
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

int nfq_hold_start(const char *name, struct nfq_hold **ret)
{
	int pfd[2], sp[2], msg[2] = { -EIO, 0 }, q, fd, err = 0, status;
	struct nfq_hold *h;
	pid_t pid;

	if (strlen(name) >= sizeof(h->name))
		return -ENAMETOOLONG;
	/* the holder, a fork, calls the library: loaded here, before the fork */
	err = dl_lib_load();
	if (err) {
		pr_warn("cannot hold packets: they are dropped, peers retransmit\n");
		return err;
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
