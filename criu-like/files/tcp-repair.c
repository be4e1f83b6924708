// SPDX-License-Identifier: GPL-2.0
/*
 * TCP connections in repair mode (TCP_REPAIR, 3.5; Documentation/network.md),
 * read at dump and rebuilt at restore: ESTABLISHED, SYN_SENT, and shut down
 * either way (FIN_WAIT1/2, CLOSE_WAIT, LAST_ACK, CLOSING), with
 * --tcp-established. tcp.c decides which, and holds the network lock.
 *
 * Dump: once the connection is locked (tcp.c), the socket is put in repair
 * mode, where the kernel neither sends nor times out anything and lets its
 * state be read: the sequence numbers of both queues (TCP_QUEUE_SEQ), their
 * contents (MSG_PEEK of the queue chosen with TCP_REPAIR_QUEUE), the options
 * negotiated at the handshake (TCP_INFO, TCP_MAXSEG), the windows
 * (TCP_REPAIR_WINDOW, 4.8) and the timestamp clock (TCP_TIMESTAMP). It stays
 * in repair mode until the end of the dump: a socket closed in repair mode
 * sends neither FIN nor RST (tcp_disconnect()), so killing the tree leaves
 * the peer waiting for the restore; inet_dump_fini() takes it out again
 * (tcp_repair_undo()) when the tree goes on.
 *
 * Restore, in the controller (the kernel's order, as CRIU found it):
 *
 *  1. the network lock holds the packets of every connection of the images
 *     (netlock_restore_conns() once, before the first: rst_tcp_lock_all());
 *  2. TCP_REPAIR on: bind() and connect() send nothing, and bind() takes the
 *     port whatever holds it (SK_FORCE_REUSE);
 *  3. bind() to the local address and port;
 *  4. TCP_QUEUE_SEQ of both queues, set to where their saved data starts;
 *  5. connect(): no SYN, the socket is ESTABLISHED at once (with TCP_MAXSEG
 *     around it, so that the MSS it computes is not 536's);
 *  6. TCP_REPAIR_OPTIONS (only allowed before any byte is sent): MSS, window
 *     scales, SACK, timestamps; then TCP_TIMESTAMP;
 *  7. the receive queue, sent in TCP_RECV_QUEUE mode; the part of the send
 *     queue that had been sent, in TCP_SEND_QUEUE mode (queued as sent and
 *     not acknowledged: the retransmit timer sends it again), unless it is
 *     small (tcp_sendq_restore_split()): then it is written after repair;
 *  8. TCP_REPAIR_WINDOW (checked against rcv_nxt: after the receive queue),
 *     then IP_OPTIONS to make the MSS in use follow the clamp and windows;
 *  9. FIN_WAIT1/2: our FIN queued as sent (shutdown() in TCP_SEND_QUEUE mode).
 *
 * rst_inet_repair_off() (tcp.c), every task waiting at the final barrier: repair
 * off (with a window probe), then the rest of the send queue sent like a
 * program's write (and the FIN after it, if there was one).
 * then the saved send buffer size and SO_REUSEADDR (leaving repair mode
 * clears it).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "files-int.h"
#include "inet.h"
#include "log.h"
#include "net-lock.h"
#include "util.h"

#ifndef SIOCOUTQNSD
#define SIOCOUTQNSD 0x894B /* 2.6.38 */
#endif

#define TCP_CHUNK (256u << 10)
#define TCP_USER_MSS_MAX 32767 /* MAX_TCP_WINDOW: the largest TCP_MAXSEG */

static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The peer drops a segment whose timestamp is older than the newest it saw
 * (PAWS, RFC 7323): a dumped socket may still send (a delayed ACK) after its
 * clock was read, and the network lock may hold that packet and give it to
 * the peer after the restore. Moving the clock on by the time since the read
 * keeps every restored segment newer. Never backwards (a clock set back),
 * never by half the timestamp space or more (the peer would take it for old).
 * Bit 0 of TCP_TIMESTAMP is not the clock's: set, the connection uses
 * microsecond timestamps (getsockopt() sets it, setsockopt() takes it).
 */
uint32_t tcp_ts_restored(uint32_t ts, uint64_t read_ms, uint64_t now_ms)
{
	uint64_t d = now_ms > read_ms ? now_ms - read_ms : 0;

	/* bit 0 says the clock counts microseconds (6.7): kept, the step in its unit */
	if (ts & 1)
		d *= 1000;
	if (d >= 1U << 30)
		d = (1U << 30) - 1;
	return ts + ((uint32_t)d & ~1U);
}

void tcp_stream_free(TcpStreamEntry *t)
{
	free(t);
}

int tcp_sendq_split(const TcpStreamEntry *t, size_t *sent, size_t *unsent)
{
	if (t->unsent > t->out_queue.len)
		return -EINVAL;
	*unsent = t->unsent;
	*sent = t->out_queue.len - t->unsent;
	return 0;
}

/*
 * What is queued as sent in repair mode, and what is written after it like a
 * program's write. Queued as sent, data waits for the retransmission timer
 * (200 ms at least), and the peer may never have had it: a segment the
 * pacing timer sends in repair mode is counted as sent and never transmitted.
 * Written again, it goes at once, and a peer that has it acknowledges the
 * duplicate. Only when it is small: the peer's acknowledgement of data we
 * have not sent again yet is ignored (after snd_nxt), so a sent part larger
 * than the first flight (10 segments) would stall the connection.
 */
int tcp_sendq_restore_split(const TcpStreamEntry *t, size_t *as_sent, size_t *written)
{
	size_t sent, unsent;
	int err = tcp_sendq_split(t, &sent, &unsent);

	if (err)
		return err;
	if (sent <= TCP_RESEND_MAX)
		sent = 0;
	*as_sent = sent;
	*written = t->out_queue.len - sent;
	return 0;
}

/* ---- the dump -------------------------------------------------------------------------- */

/* Keep a duplicate of @f's socket, to take it out of repair mode or close it at the end. */
static int repaired_add(struct inet_dump *in, const struct fd_info *f, int *ret_fd)
{
	int fd;

	if (in->nr_rep == in->cap_rep) {
		size_t cap = in->cap_rep ? in->cap_rep * 2 : 16;
		struct inet_repaired *n = realloc(in->rep, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		in->rep = n;
		in->cap_rep = cap;
	}
	fd = fcntl(f->dfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return neg_errno();
	in->rep[in->nr_rep].fd = fd;
	in->rep[in->nr_rep].pid = f->pid;
	in->rep[in->nr_rep].task_fd = f->fd;
	in->rep[in->nr_rep].reuseaddr = -1;
	in->nr_rep++;
	*ret_fd = fd;
	return 0;
}

struct tcp_sizes {
	int inq, outq, unsent;
};

static int tcp_queue_sizes(int sk, struct tcp_sizes *s)
{
	if (ioctl(sk, SIOCINQ, &s->inq) || ioctl(sk, SIOCOUTQ, &s->outq) ||
	    ioctl(sk, SIOCOUTQNSD, &s->unsent))
		return neg_errno();
	if (s->inq < 0 || s->outq < 0 || s->unsent < 0 || s->unsent > s->outq)
		return -EINVAL;
	return 0;
}

/*
 * The sequence number and the @len bytes of queue @q into @buf. One byte more
 * is asked for: getting it would mean the queue grew, which it cannot in
 * repair mode.
 */
static int tcp_read_queue(int sk, int q, uint32_t *seq, uint8_t *buf, size_t len)
{
	socklen_t sl = sizeof(*seq);
	ssize_t n;

	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, seq, &sl))
		return neg_errno();
	if (!len)
		return 0;
	n = recv(sk, buf, len + 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)
		return neg_errno();
	return (size_t)n == len ? 0 : -EAGAIN;
}

static int tcp_read_opts(int sk, unsigned int state, TcpStreamEntry *t)
{
	struct tcp_repair_window w;
	struct tcp_info ti;
	socklen_t len = sizeof(ti), wl = sizeof(w), ml = sizeof(int), tl = sizeof(uint32_t);
	int mss;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len) ||
	    getsockopt(sk, SOL_TCP, TCP_MAXSEG, &mss, &ml))
		return neg_errno();
	if (ti.tcpi_state != state)
		return -EAGAIN;
	t->opt_mask = ti.tcpi_options & (TCPI_OPT_SACK | TCPI_OPT_TIMESTAMPS | TCPI_OPT_WSCALE);
	if (ti.tcpi_options & TCPI_OPT_WSCALE) {
		t->snd_wscale = ti.tcpi_snd_wscale;
		t->rcv_wscale = ti.tcpi_rcv_wscale;
	}
	t->mss_clamp = (uint32_t)mss;
	if (ti.tcpi_options & TCPI_OPT_TIMESTAMPS) {
		if (getsockopt(sk, SOL_TCP, TCP_TIMESTAMP, &t->timestamp, &tl))
			return neg_errno();
		t->has_timestamp = true;
		t->timestamp_read_ms = realtime_ms();
		t->has_timestamp_read_ms = true;
	}
	if (getsockopt(sk, SOL_TCP, TCP_REPAIR_WINDOW, &w, &wl))
		return neg_errno();
	t->has_snd_wl1 = t->has_snd_wnd = t->has_max_window = t->has_rcv_wnd = t->has_rcv_wup =
		true;
	t->snd_wl1 = w.snd_wl1;
	t->snd_wnd = w.snd_wnd;
	t->max_window = w.max_window;
	t->rcv_wnd = w.rcv_wnd;
	t->rcv_wup = w.rcv_wup;
	return 0;
}

/*
 * Whether the connection still is what was read: a packet that passed the
 * lock's hooks just before it was installed is still processed, and may have
 * moved a window or a sequence number after it was read (the window and the
 * sequence numbers must agree at restore: TCP_REPAIR_WINDOW checks them).
 * -EAGAIN if anything moved.
 */
static int tcp_unchanged(int sk, unsigned int state, const TcpStreamEntry *t)
{
	struct tcp_repair_window w;
	struct tcp_info ti;
	socklen_t wl = sizeof(w), tl = sizeof(ti), sl = sizeof(uint32_t);
	uint32_t rseq, sseq;
	int rq = TCP_RECV_QUEUE, sq = TCP_SEND_QUEUE;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &tl) ||
	    getsockopt(sk, SOL_TCP, TCP_REPAIR_WINDOW, &w, &wl) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &rq, sizeof(rq)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &rseq, &sl) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &sq, sizeof(sq)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &sseq, &sl))
		return neg_errno();
	if (ti.tcpi_state != state || rseq != t->inq_seq || sseq != t->outq_seq ||
	    w.snd_wl1 != t->snd_wl1 || w.snd_wnd != t->snd_wnd || w.max_window != t->max_window ||
	    w.rcv_wnd != t->rcv_wnd || w.rcv_wup != t->rcv_wup)
		return -EAGAIN;
	return 0;
}

/*
 * Everything of the connection on @sk (in @state), in repair mode, into one
 * block: the entry, then the queues. After shutdown(SHUT_WR) our FIN holds a
 * sequence number at the end of the send queue: counted by SIOCOUTQ until
 * it is acknowledged (FIN_WAIT2: everything is), by SIOCOUTQNSD until sent.
 */
static int tcp_read(int sk, unsigned int state, TcpStreamEntry **ret)
{
	bool fin = (1u << state) & TCPF_OUR_FIN;
	struct tcp_sizes s;
	TcpStreamEntry *t;
	int err, none = TCP_NO_QUEUE;

	err = tcp_queue_sizes(sk, &s);
	if (err)
		return err;
	if (fin && s.outq) {
		s.outq--;
		s.unsent -= s.unsent > 0;
	}
	t = malloc(sizeof(*t) + (size_t)s.inq + (size_t)s.outq + 1);
	if (!t)
		return -ENOMEM;
	tcp_stream_entry__init(t);
	t->in_queue.data = (uint8_t *)(t + 1);
	t->in_queue.len = (size_t)s.inq;
	t->out_queue.data = t->in_queue.data + s.inq;
	t->out_queue.len = (size_t)s.outq;
	t->unsent = (uint32_t)s.unsent;
	t->has_fin = t->fin = fin;
	/* SIOCINQ leaves the peer's FIN out; TCP_QUEUE_SEQ (rcv_nxt) counts it */
	t->has_peer_fin = t->peer_fin = ((1u << state) & TCPF_PEER_FIN) != 0;
	err = tcp_read_opts(sk, state, t);
	if (!err)
		err = tcp_read_queue(sk, TCP_RECV_QUEUE, &t->inq_seq, t->in_queue.data,
				     t->in_queue.len);
	if (!err)
		err = tcp_read_queue(sk, TCP_SEND_QUEUE, &t->outq_seq, t->out_queue.data,
				     t->out_queue.len);
	if (!err)
		err = tcp_unchanged(sk, state, t);
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &none, sizeof(none)) && !err)
		err = neg_errno();
	if (err) {
		free(t);
		return err;
	}
	*ret = t;
	return 0;
}

/*
 * A connect() in flight (SYN_SENT): its initial sequence number, which the
 * restore sends again. Only the SYN may be queued (no TCP Fast Open data).
 */
static int tcp_read_syn_sent(int sk, InetSkEntry *e)
{
	int q = TCP_SEND_QUEUE, none = TCP_NO_QUEUE, outq = 0;
	struct tcp_info ti;
	socklen_t len = sizeof(ti), sl = sizeof(e->syn_seq);

	memset(&ti, 0, sizeof(ti));
	if (ioctl(sk, SIOCOUTQ, &outq) || getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    getsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &e->syn_seq, &sl) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &none, sizeof(none)))
		return neg_errno();
	if (ti.tcpi_state != TCP_SYN_SENT)
		return -EAGAIN;
	if (outq > 1)
		return -EOPNOTSUPP; /* data sent with the SYN */
	e->syn_seq -= 1; /* the SYN took one: write_seq is one past it */
	e->has_syn_seq = true;
	return 0;
}

/*
 * The connection on @sk, in repair mode, read in the state TCP_INFO gives
 * now: sock_diag was read before the lock held its packets, and one already
 * on its way may have moved it since (an ACK of our FIN: FIN_WAIT1 to
 * FIN_WAIT2; the peer's FIN: ESTABLISHED to CLOSE_WAIT). Read again if it
 * moved while it was read (-EAGAIN after three tries).
 */
static int tcp_read_any(int sk, const struct fd_info *f, InetSkEntry *e)
{
	char ends[INET_ENDS_STRLEN];
	struct tcp_info ti;
	unsigned int i;
	int err = -EAGAIN;

	for (i = 0; i < 3 && err == -EAGAIN; i++) {
		socklen_t len = sizeof(ti);

		memset(&ti, 0, sizeof(ti));
		if (getsockopt(sk, SOL_TCP, TCP_INFO, &ti, &len))
			return neg_errno();
		if (ti.tcpi_state >= 32 || !((1u << ti.tcpi_state) & TCPF_REPAIRED)) {
			pr_err("pid %d fd %d: TCP connection %s went to state %s while it was "
			       "dumped: not supported\n",
			       f->pid, f->fd, inet_entry_ends(e, ends, sizeof(ends)),
			       tcp_state_name(ti.tcpi_state));
			return -EOPNOTSUPP;
		}
		e->state = ti.tcpi_state;
		if (ti.tcpi_state == TCP_SYN_SENT)
			err = tcp_read_syn_sent(sk, e);
		else
			err = tcp_read(sk, ti.tcpi_state, &e->tcp);
	}
	if (err == -EOPNOTSUPP)
		pr_err("pid %d fd %d: TCP connection %s sent data with its SYN (TCP Fast Open) and "
		       "is not answered yet: not supported\n",
		       f->pid, f->fd, inet_entry_ends(e, ends, sizeof(ends)));
	return err;
}

static bool has_urgent(int sk)
{
	char c;

	return recv(sk, &c, 1, MSG_OOB | MSG_PEEK | MSG_DONTWAIT) >= 0 || errno == EAGAIN;
}

int tcp_dump_established(struct dump_ctx *ctx, const struct fd_info *f, InetSkEntry *e)
{
	struct inet_dump *in = inet_dump_get(ctx);
	char ends[INET_ENDS_STRLEN];
	int on = TCP_REPAIR_ON, atmark = 0, sk, err;

	inet_entry_ends(e, ends, sizeof(ends));
	if (!ctx->opts->tcp_established) {
		pr_err("pid %d fd %d: %s is a TCP connection %s (%s): use --tcp-established to "
		       "dump it\n",
		       f->pid, f->fd, f->link, ends, tcp_state_name(e->state));
		return -EOPNOTSUPP;
	}
	/*
	 * Urgent data would be read as normal data after restore: at the read
	 * mark, or announced and not read yet (a MSG_OOB peek gives it, or says
	 * EAGAIN while it has not arrived; EINVAL when there is none, or inline).
	 */
	if ((!ioctl(f->dfd, SIOCATMARK, &atmark) && atmark) || has_urgent(f->dfd)) {
		pr_err("pid %d fd %d: TCP connection %s has urgent data waiting to be read: not "
		       "supported\n",
		       f->pid, f->fd, ends);
		return -EOPNOTSUPP;
	}
	if (!in)
		return -ENOMEM;
	/* The peer must see nothing from here on: neither a reset nor an answer. */
	err = tcp_lock_conn(ctx, f, e);
	if (err)
		return err;
	err = repaired_add(in, f, &sk);
	if (err)
		return err;
	/* TCP_REPAIR overwrites sk_reuse; turning it off clears it: kept to put back. */
	in->rep[in->nr_rep - 1].reuseaddr = e->reuseaddr;
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR, &on, sizeof(on))) {
		pr_perror("pid %d fd %d: cannot put TCP connection %s in repair mode", f->pid,
			  f->fd, ends);
		in->rep[in->nr_rep - 1].reuseaddr = -1; /* never in repair mode */
		return neg_errno();
	}
	err = tcp_read_any(sk, f, e);
	if (err == -EAGAIN)
		pr_err("pid %d fd %d: TCP connection %s changed while it was read in repair mode\n",
		       f->pid, f->fd, ends);
	else if (err && err != -EOPNOTSUPP) /* refusals are logged where they are known */
		pr_errno(err, "pid %d fd %d: cannot read TCP connection %s in repair mode", f->pid,
			 f->fd, ends);
	else if (e->tcp)
		pr_info("pid %d fd %d: TCP %s: %zu bytes to read, %zu in the send queue (%u "
			"unsent)\n",
			f->pid, f->fd, ends, e->tcp->in_queue.len, e->tcp->out_queue.len,
			e->tcp->unsent);
	return err;
}

void tcp_repair_undo(struct inet_dump *in, bool resume)
{
	size_t i;

	for (i = 0; i < in->nr_rep; i++) {
		struct inet_repaired *r = &in->rep[i];
		/* No window probe: nothing changed while the connection was paused. */
		int off = TCP_REPAIR_OFF_NO_WP;

		if (resume && r->reuseaddr >= 0) {
			if (setsockopt(r->fd, SOL_TCP, TCP_REPAIR, &off, sizeof(off)) ||
			    setsockopt(r->fd, SOL_SOCKET, SO_REUSEADDR, &r->reuseaddr,
				       sizeof(r->reuseaddr)))
				pr_perror("pid %d fd %d: cannot take the TCP connection out of "
					  "repair mode",
					  r->pid, r->task_fd);
		}
		/* Closing our duplicate does nothing to the connection: the task holds it. */
		close(r->fd);
	}
	free(in->rep);
	in->rep = NULL;
	in->nr_rep = in->cap_rep = 0;
}

/* ---- the restore (its messages keep their own prefix) ------------------------------------ */

static int set_queue_seq(int sk, int q, uint32_t seq)
{
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    setsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &seq, sizeof(seq)))
		return neg_errno();
	return 0;
}

static int set_repair_opts(int sk, const TcpStreamEntry *t)
{
	uint32_t ts;
	struct tcp_repair_opt opts[4];
	unsigned int n = 0;

	if (t->opt_mask & TCPI_OPT_SACK)
		opts[n++] = (struct tcp_repair_opt){ TCPOPT_SACK_PERMITTED, 0 };
	if (t->opt_mask & TCPI_OPT_WSCALE)
		opts[n++] = (struct tcp_repair_opt){ TCPOPT_WINDOW,
						     t->snd_wscale | (t->rcv_wscale << 16) };
	if (t->opt_mask & TCPI_OPT_TIMESTAMPS)
		opts[n++] = (struct tcp_repair_opt){ TCPOPT_TIMESTAMP, 0 };
	opts[n++] = (struct tcp_repair_opt){ TCPOPT_MAXSEG, t->mss_clamp };
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_OPTIONS, opts, n * sizeof(opts[0])))
		return neg_errno();
	ts = t->has_timestamp_read_ms
		     ? tcp_ts_restored(t->timestamp, t->timestamp_read_ms, realtime_ms())
		     : t->timestamp;
	if (t->has_timestamp && setsockopt(sk, SOL_TCP, TCP_TIMESTAMP, &ts, sizeof(ts)))
		return neg_errno();
	return 0;
}

/*
 * @len bytes of @buf sent on @sk, in chunks: in TCP_RECV_QUEUE mode the
 * kernel allocates one skb per call, which may fail with ENOMEM for a large
 * one: the chunk is halved then.
 */
static int send_all(int sk, const uint8_t *buf, size_t len)
{
	size_t chunk = TCP_CHUNK;

	while (len) {
		ssize_t n = send(sk, buf, min(len, chunk), MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n <= 0) {
			if (n < 0 && errno == ENOMEM && chunk > 4096) {
				chunk /= 2;
				continue;
			}
			return n < 0 ? neg_errno() : -EIO;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fill_queue(int sk, int q, const uint8_t *buf, size_t len)
{
	if (!len)
		return 0;
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)))
		return neg_errno();
	return send_all(sk, buf, len);
}

static int set_buf(int sk, int opt, size_t val)
{
	int v = (int)min(val, (size_t)INT32_MAX / 4);

	return setsockopt(sk, SOL_SOCKET, opt, &v, sizeof(v)) ? neg_errno() : 0;
}

/*
 * The buffers: the send buffer large enough for the whole send queue until
 * rst_inet_repair_off() has written the part never sent; the receive buffer
 * as it was (it sizes the window connect() computes and the one announced
 * on leaving repair mode: a larger one would make the peer's maximum window
 * and so its MSS grow), except while the receive queue is put back. The
 * kernel doubles what it is given.
 */
static int grow_sndbuf(int sk, const InetSkEntry *e)
{
	int err = set_buf(sk, SO_SNDBUFFORCE, e->tcp->out_queue.len + (256u << 10));

	if (!err && e->has_rcvbuf)
		err = set_buf(sk, SO_RCVBUFFORCE, e->rcvbuf / 2);
	return err;
}

static int fill_rcvq(int sk, const InetSkEntry *e)
{
	const TcpStreamEntry *t = e->tcp;
	int err;

	if (!t->in_queue.len)
		return 0;
	err = set_buf(sk, SO_RCVBUFFORCE, t->in_queue.len + (256u << 10));
	if (!err)
		err = fill_queue(sk, TCP_RECV_QUEUE, t->in_queue.data, t->in_queue.len);
	if (!err && e->has_rcvbuf)
		err = set_buf(sk, SO_RCVBUFFORCE, e->rcvbuf / 2);
	return err;
}

static int set_window(int sk, const TcpStreamEntry *t)
{
	struct tcp_repair_window w = {
		.snd_wl1 = t->snd_wl1,
		.snd_wnd = t->snd_wnd,
		.max_window = t->max_window,
		.rcv_wnd = t->rcv_wnd,
		.rcv_wup = t->rcv_wup,
	};

	if (!t->has_snd_wl1)
		return 0;
	return setsockopt(sk, SOL_TCP, TCP_REPAIR_WINDOW, &w, sizeof(w)) ? neg_errno() : 0;
}

/* Steps 4-8 on the bound socket in repair mode; the name of the failed step in *@what. */
static int tcp_rebuild(int sk, const InetSkEntry *e, const char **what)
{
	const TcpStreamEntry *t = e->tcp;
	struct sockaddr_storage sa;
	size_t sent, unsent;
	socklen_t len;
	int err, mss, none = TCP_NO_QUEUE;

	*what = "the send queue";
	err = tcp_sendq_restore_split(t, &sent, &unsent);
	if (!err)
		err = inet_sockaddr(e, true, &sa, &len);
	if (err)
		return err;
	*what = "the buffer sizes";
	err = grow_sndbuf(sk, e);
	if (err)
		return err;
	*what = "TCP_QUEUE_SEQ";
	err = set_queue_seq(sk, TCP_RECV_QUEUE, t->inq_seq - (uint32_t)t->in_queue.len);
	/* our FIN, if sent, has the last sequence number: it is queued after the data */
	if (!err)
		err = set_queue_seq(sk, TCP_SEND_QUEUE,
				    t->outq_seq - (uint32_t)t->out_queue.len - (t->fin ? 1 : 0));
	if (err)
		return err;
	/*
	 * connect() computes the MSS in use (mss_cache) from the clamp, which a
	 * new socket has at 536, and TCP_REPAIR_OPTIONS after it sets the clamp
	 * but computes nothing: the connection would go on with segments of 524
	 * bytes. A user MSS (TCP_MAXSEG) set before connect() is taken as the
	 * clamp instead, up to 32767 (MAX_TCP_WINDOW): every real link's MSS,
	 * not loopback's 65483, which IP_OPTIONS gives back below where it can.
	 * It is cleared again after (the program's own, if it set one, cannot be
	 * read back from an established socket).
	 */
	*what = "TCP_MAXSEG before connect()";
	mss = (int)min(t->mss_clamp, (uint32_t)TCP_USER_MSS_MAX);
	if (setsockopt(sk, SOL_TCP, TCP_MAXSEG, &mss, sizeof(mss)))
		return neg_errno();
	*what = "connect() in repair mode";
	mss = 0;
	if (connect(sk, (struct sockaddr *)&sa, len) ||
	    setsockopt(sk, SOL_TCP, TCP_MAXSEG, &mss, sizeof(mss)))
		return neg_errno();
	*what = "TCP_REPAIR_OPTIONS";
	err = set_repair_opts(sk, t);
	if (err)
		return err;
	*what = "the receive queue";
	err = fill_rcvq(sk, e);
	if (err)
		return err;
	*what = "the sent part of the send queue";
	err = fill_queue(sk, TCP_SEND_QUEUE, t->out_queue.data, sent);
	if (err)
		return err;
	*what = "TCP_REPAIR_WINDOW";
	err = set_window(sk, t);
	if (err)
		return err;
	/*
	 * The MSS in use is bounded by the clamp and by half the largest window
	 * the peer offered (max_window): computed again now that both are back.
	 * Setting IP_OPTIONS (to none, as they were: they are not saved) makes
	 * an IPv4 connection do it (icsk_sync_mss()); an IPv6 one only when it
	 * talks IPv4 (v4-mapped), the kernel skips the others.
	 */
	*what = "IP_OPTIONS";
	if (setsockopt(sk, SOL_IP, IP_OPTIONS, "", 0))
		return neg_errno();
	/*
	 * FIN_WAIT1/2 with all data queued as sent: the FIN queued as sent and
	 * not yet acknowledged. The retransmit timer sends it again; a peer that
	 * had acknowledged it (FIN_WAIT2) acknowledges the duplicate at once.
	 */
	*what = "shutdown(SHUT_WR) in repair mode";
	if (t->fin && !unsent &&
	    (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &(int){ TCP_SEND_QUEUE }, sizeof(int)) ||
	     shutdown(sk, SHUT_WR)))
		return neg_errno();
	*what = "TCP_REPAIR_QUEUE";
	if (!err && setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &none, sizeof(none)))
		err = neg_errno();
	return err;
}

int tcp_restore_established(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[INET_ENDS_STRLEN];
	struct inet_tuple tup;
	struct sockaddr_storage sa;
	socklen_t len;
	const char *what = "TCP_REPAIR";
	int on = TCP_REPAIR_ON, err;

	inet_entry_ends(e, ends, sizeof(ends));
	if (inet_entry_tuple(e, &tup) || inet_sockaddr(e, false, &sa, &len)) {
		pr_err("files.img: file %u: bad addresses of TCP connection %s\n", id, ends);
		return -EINVAL;
	}
	/* the network lock holds it already: rst_tcp_lock_all(), before the first one */
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR, &on, sizeof(on))) {
		err = neg_errno();
	} else if ((err = inet_bind_tentative(sk, &sa, len))) {
		what = "bind()";
	} else {
		err = tcp_rebuild(sk, e, &what);
	}
	if (err == -EADDRNOTAVAIL && !strcmp(what, "connect() in repair mode")) {
		pr_err("file %u: TCP connection %s exists already on this machine (the dumped "
		       "process still runs, after dump -R?): it cannot be restored twice\n",
		       id, ends);
		return err;
	}
	if (err) {
		pr_errno(err, "file %u: TCP connection %s: %s failed", id, ends, what);
		return err;
	}
	pr_info("file %u: TCP %s: %zu bytes to read, %zu in the send queue (%u unsent) put back\n",
		id, ends, e->tcp->in_queue.len, e->tcp->out_queue.len, e->tcp->unsent);
	return 0;
}

/*
 * A connect() in flight: bound in repair mode (the port taken whatever holds
 * it), the send sequence set to the saved initial one, repair off, connect():
 * a SYN with the same sequence number, which the peer answers like the
 * first (or the network lock drops until the retransmission after it).
 */
int tcp_restore_syn_sent(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[INET_ENDS_STRLEN];
	struct sockaddr_storage src, dst;
	socklen_t slen, dlen;
	int on = TCP_REPAIR_ON, off = TCP_REPAIR_OFF_NO_WP, err = 0;

	inet_entry_ends(e, ends, sizeof(ends));
	if (inet_sockaddr(e, false, &src, &slen) || inet_sockaddr(e, true, &dst, &dlen)) {
		pr_err("files.img: file %u: bad addresses of TCP connection %s\n", id, ends);
		return -EINVAL;
	}
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR, &on, sizeof(on)) ||
	    bind(sk, (struct sockaddr *)&src, slen) ||
	    set_queue_seq(sk, TCP_SEND_QUEUE, e->syn_seq) ||
	    setsockopt(sk, SOL_TCP, TCP_REPAIR, &off, sizeof(off)))
		err = neg_errno();
	else if (connect(sk, (struct sockaddr *)&dst, dlen) && errno != EINPROGRESS)
		err = neg_errno();
	if (err)
		pr_errno(err, "file %u: cannot connect %s again", id, ends);
	return err;
}

/* Out of repair mode, the unsent data written, the saved buffer sizes and SO_REUSEADDR. */
int tcp_go_live(int sk, const InetSkEntry *e)
{
	const TcpStreamEntry *t = e->tcp;
	size_t sent, unsent;
	int off = TCP_REPAIR_OFF, err;

	err = tcp_sendq_restore_split(t, &sent, &unsent);
	if (err)
		return err;
	/* TCP_REPAIR_OFF sends a window probe: the peer learns our window at once. */
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR, &off, sizeof(off)))
		return neg_errno();
	err = send_all(sk, t->out_queue.data + sent, unsent);
	/* a FIN that followed data written now follows it again */
	if (!err && t->fin && unsent && shutdown(sk, SHUT_WR))
		err = neg_errno();
	/* the kernel doubles what it is given */
	if (!err && e->has_sndbuf)
		err = inet_sk_setint(sk, SOL_SOCKET, SO_SNDBUFFORCE, (int)(e->sndbuf / 2));
	if (!err)
		err = inet_sk_setint(sk, SOL_SOCKET, SO_REUSEADDR,
				     e->has_reuseaddr && e->reuseaddr);
	return err;
}
