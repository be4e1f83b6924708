// SPDX-License-Identifier: GPL-2.0
/*
 * TCP connections of a restore (ESTABLISHED, FIN_WAIT1/2), rebuilt in repair mode in the
 * controller (the kernel's order, as CRIU found it):
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
 *     not acknowledged: the retransmit timer sends it again);
 *  8. TCP_REPAIR_WINDOW (checked against rcv_nxt: after the receive queue),
 *     then IP_OPTIONS to make the MSS in use follow the clamp and windows;
 *  9. FIN_WAIT1/2: our FIN queued as sent (shutdown() in TCP_SEND_QUEUE mode).
 *
 * rst_inet_repair_off(), every task waiting at the final barrier: repair
 * off (with a window probe), then the never-sent part of the send queue
 * sent like a program's write (and the FIN after it, if there was one),
 * then the saved send buffer size and SO_REUSEADDR (leaving repair mode
 * clears it).
 */
#define LOG_PREFIX "restore-files: "

#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "inet-int.h"
#include "log.h"
#include "net-lock.h"
#include "restore-files-int.h"
#include "util.h"

#define ENDS_LEN (2 * INET_ADDR_STRLEN + 8)
#define TCP_CHUNK (256u << 10)
#define TCP_USER_MSS_MAX 32767 /* MAX_TCP_WINDOW: the largest TCP_MAXSEG */
/* loopback answers at once; a loaded machine may take a moment */
#define TCP_CONNECT_WAIT_MS 10000

static int set_queue_seq(int sk, int q, uint32_t seq)
{
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    setsockopt(sk, SOL_TCP, TCP_QUEUE_SEQ, &seq, sizeof(seq)))
		return neg_errno();
	return 0;
}

static int set_repair_opts(int sk, const TcpStreamEntry *t)
{
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
	if (t->has_timestamp &&
	    setsockopt(sk, SOL_TCP, TCP_TIMESTAMP, &t->timestamp, sizeof(t->timestamp)))
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
	err = tcp_sendq_split(t, &sent, &unsent);
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
	 * FIN_WAIT1/2 with all data sent: the FIN queued as sent and not yet
	 * acknowledged. The retransmit timer sends it again; a peer that had
	 * acknowledged it (FIN_WAIT2) acknowledges the duplicate at once.
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
	char ends[ENDS_LEN];
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
	} else if (bind(sk, (struct sockaddr *)&sa, len)) {
		what = "bind()";
		err = neg_errno();
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
	char ends[ENDS_LEN];
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
static int set_int(int sk, int opt, int val)
{
	return setsockopt(sk, SOL_SOCKET, opt, &val, sizeof(val)) ? neg_errno() : 0;
}

int tcp_go_live(int sk, const InetSkEntry *e)
{
	const TcpStreamEntry *t = e->tcp;
	size_t sent, unsent;
	int off = TCP_REPAIR_OFF, err;

	err = tcp_sendq_split(t, &sent, &unsent);
	if (err)
		return err;
	/* TCP_REPAIR_OFF sends a window probe: the peer learns our window at once. */
	if (setsockopt(sk, SOL_TCP, TCP_REPAIR, &off, sizeof(off)))
		return neg_errno();
	err = send_all(sk, t->out_queue.data + sent, unsent);
	/* a FIN that followed data never sent follows it again */
	if (!err && t->fin && unsent && shutdown(sk, SHUT_WR))
		err = neg_errno();
	/* the kernel doubles what it is given */
	if (!err && e->has_sndbuf)
		err = set_int(sk, SO_SNDBUFFORCE, (int)(e->sndbuf / 2));
	if (!err)
		err = set_int(sk, SO_REUSEADDR, e->has_reuseaddr && e->reuseaddr);
	return err;
}

/* A connection that waited in a backlog, connected again at open: the handshake done. */
static int tcp_check_connected(int sk, const InetSkEntry *e, uint32_t id)
{
	char ends[ENDS_LEN];
	struct pollfd p = { .fd = sk, .events = POLLOUT };
	int soerr = 0;
	socklen_t len = sizeof(soerr);

	if (poll(&p, 1, TCP_CONNECT_WAIT_MS) == 1 &&
	    !getsockopt(sk, SOL_SOCKET, SO_ERROR, &soerr, &len) && !soerr)
		return 0;
	pr_err("file %u: the connection %s to a listening socket of the tree was not made again: "
	       "%s\n",
	       id, inet_entry_ends(e, ends, sizeof(ends)), soerr ? strerror(soerr) : "no answer");
	return soerr ? -soerr : -ETIMEDOUT;
}

int rst_inet_repair_off(struct restore_ctx *ctx)
{
	const struct rst_files *f = ctx->files;
	char ends[ENDS_LEN];
	size_t i;
	int err;

	for (i = 0; f && i < f->idx.n; i++) {
		const FileEntry *fe = f->idx.by_id[i];

		if (fe->type != FILE_TYPE__FILE_INETSK || !fe->inetsk)
			continue;
		if (fe->inetsk->connect_backlog) {
			err = tcp_check_connected(f->fds[i], fe->inetsk, fe->id);
			if (err)
				return err;
		}
		if (!fe->inetsk->tcp)
			continue;
		err = tcp_go_live(f->fds[i], fe->inetsk);
		if (err) {
			pr_errno(err, "file %u: cannot take TCP connection %s out of repair mode",
				 fe->id, inet_entry_ends(fe->inetsk, ends, sizeof(ends)));
			return err;
		}
	}
	return 0;
}

int rst_tcp_lock_all(struct restore_ctx *ctx)
{
	const struct rst_files *f = ctx->files;
	_cleanup_free_ struct inet_tuple *t = calloc(f->idx.n ?: 1, sizeof(*t));
	size_t i, n = 0;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < f->idx.n; i++) {
		const FileEntry *fe = f->idx.by_id[i];

		if (fe->type != FILE_TYPE__FILE_INETSK || !fe->inetsk || !fe->inetsk->tcp)
			continue;
		if (inet_entry_tuple(fe->inetsk, &t[n])) {
			pr_err("files.img: file %u: bad addresses of a TCP connection\n", fe->id);
			return -EINVAL;
		}
		n++;
	}
	return netlock_restore_conns(ctx, t, n);
}
