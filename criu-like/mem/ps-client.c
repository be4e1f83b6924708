// SPDX-License-Identifier: GPL-2.0
/*
 * The dumping side of the page server (Documentation/page-server.md): the
 * connection, and the messages mem.c and mem-xfer.c send instead of writing
 * pagemap and pages images into -D.
 */
#define LOG_PREFIX "page-server: "

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "page-server.h"
#include "util.h"

int ps_send_hdr(struct ps_conn *c, uint16_t cmd, uint16_t flags, uint32_t id, uint32_t len,
		uint64_t arg, const char *what)
{
	struct ps_hdr h = {
		.magic = PS_MAGIC, .cmd = cmd, .flags = flags, .id = id, .len = len, .arg = arg
	};

	ps_hdr_pack(&h);
	return ps_send(c, &h, sizeof(h), what);
}

static int send_hdr(struct ps_conn *c, uint16_t cmd, uint32_t id, uint32_t len, uint64_t arg,
		    const char *what)
{
	return ps_send_hdr(c, cmd, 0, id, len, arg, what);
}

/* A failed reply: the server's message, logged. */
static int reply_error(struct ps_conn *c, const struct ps_hdr *h, const char *what)
{
	char msg[PS_MSG_MAX + 1] = "";
	size_t n = min((size_t)h->len, (size_t)PS_MSG_MAX);
	int err = (int)(int64_t)h->arg;

	if (err >= 0 || err < -4095)
		err = -EPROTO;
	if (n && !ps_recv(c, msg, n, what))
		msg[n] = '\0';
	pr_err("%s: the page server refused %s: %s (%s)\n", c->peer, what,
	       msg[0] ? msg : "no reason given", strerror(-err));
	c->broken = true;
	return err;
}

/* The reply to @cmd: 0 with its header in @h (payload still to read), or the error. */
int ps_get_reply(struct ps_conn *c, uint16_t cmd, struct ps_hdr *h, const char *what)
{
	char why[160];
	int err;

	err = ps_recv(c, h, sizeof(*h), what);
	if (err)
		return err;
	ps_hdr_unpack(h);
	err = ps_check_reply(h, cmd, why, sizeof(why));
	if (err) {
		pr_err("%s: bad reply while %s: %s\n", c->peer, what, why);
		c->broken = true;
		return err;
	}
	if ((int64_t)h->arg < 0)
		return reply_error(c, h, what);
	return 0;
}

void ps_read_error(struct ps_conn *c)
{
	struct ps_hdr h;
	ssize_t n;

	/* An error reply the server sent before it closed, already here, or nothing. */
	if (c->tls)
		return;
	n = recv(c->fd, &h, sizeof(h), MSG_DONTWAIT | MSG_PEEK);
	if (n != (ssize_t)sizeof(h))
		return;
	n = recv(c->fd, &h, sizeof(h), MSG_DONTWAIT);
	ps_hdr_unpack(&h);
	if (h.magic == PS_MAGIC && h.cmd == PS_REPLY && (int64_t)h.arg < 0) {
		c->broken = false;
		reply_error(c, &h, "the transfer");
	}
}

static int tcp_connect(const char *host, int port, char *peer, size_t peer_len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL, *ai;
	char ports[16];
	int fd = -1, err = -ECONNREFUSED, one = 1;

	snprintf(ports, sizeof(ports), "%d", port);
	snprintf(peer, peer_len, "page server %s:%d", host, port);
	err = getaddrinfo(host, ports, &hints, &res);
	if (err) {
		pr_err("%s: cannot resolve the address: %s\n", peer, gai_strerror(err));
		return -EINVAL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = neg_errno();
			continue;
		}
		/* before connect(): a SYN unanswered is given up after the same time */
		tcp_set_liveness(fd, PS_LINK_TIMEOUT_S);
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		err = neg_errno();
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		pr_err("%s: cannot connect: %s\n", peer, strerror(-err));
		return err;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

struct ps_conn *ps_connect(const struct cr_options *o)
{
	struct ps_conn *c;
	struct ps_hdr h;
	int err;

	if (o->ps_sock_fd < 0 && (!o->address || !o->port)) {
		pr_err("--page-server needs --address and --port of the page server\n");
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pipe[0] = c->pipe[1] = -1;
	if (!sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN }, &c->old_sigpipe))
		c->sigpipe_saved = true;
	if (o->ps_sock_fd >= 0) {
		/* RPC ps.fd: a connection the client made to the page server */
		c->fd = fcntl(o->ps_sock_fd, F_DUPFD_CLOEXEC, 0);
		if (c->fd < 0)
			pr_perror("cannot use the page server's connection, fd %d", o->ps_sock_fd);
		else
			snprintf(c->peer, sizeof(c->peer), "page server on fd %d", o->ps_sock_fd);
	} else {
		c->fd = tcp_connect(o->address, o->port, c->peer, sizeof(c->peer));
	}
	err = c->fd < 0 ? c->fd : 0;
	if (!err && o->tls)
		err = ps_tls_client(c, o, o->address ? o->address : "localhost");
	if (!err)
		err = send_hdr(c, PS_HELLO, 0, 0, PS_VERSION, "saying hello");
	if (!err)
		err = ps_get_reply(c, PS_HELLO, &h, "saying hello");
	if (err && c->tls && (err == -ECONNRESET || err == -EPIPE))
		pr_err("%s: the connection ended after the TLS handshake: the page server "
		       "refused this end's certificate (see its log)\n",
		       c->peer);
	if (err) {
		if (c->fd >= 0)
			ps_read_error(c);
		ps_conn_close(c);
		errno = -err;
		return NULL;
	}
	pr_info("connected to %s%s\n", c->peer, c->tls ? " (TLS)" : "");
	return c;
}

int ps_pages_open(struct ps_conn *c, uint32_t id, const uint32_t *pages, uint32_t nr,
		  uint64_t total)
{
	char what[64];
	int err;

	snprintf(what, sizeof(what), "opening pages-%u.img", id);
	if (nr > PS_RUNS_MAX) {
		pr_err("%s: pages-%u.img has %u runs, more than the protocol's %u\n", c->peer, id,
		       nr, PS_RUNS_MAX);
		return -E2BIG;
	}
	err = send_hdr(c, PS_OPEN, id, nr * (uint32_t)sizeof(*pages), total, what);
	if (!err && nr)
		err = ps_send(c, pages, nr * sizeof(*pages), what);
	return err;
}

int ps_data_hdr(struct ps_conn *c, size_t len)
{
	return send_hdr(c, PS_DATA, 0, (uint32_t)len, 0, "sending pages");
}

int ps_pages_close(struct ps_conn *c, uint32_t id, uint64_t total, uint32_t *crcs, uint32_t nr,
		   uint64_t *file_size)
{
	struct ps_hdr h;
	char what[64];
	uint32_t i;
	int err;

	snprintf(what, sizeof(what), "completing pages-%u.img", id);
	err = send_hdr(c, PS_CLOSE, id, 0, total, what);
	if (!err)
		err = ps_get_reply(c, PS_CLOSE, &h, what);
	if (err)
		return err;
	if (h.len != nr * sizeof(*crcs)) {
		pr_err("%s: %u bytes of checksums for the %u runs of pages-%u.img\n", c->peer,
		       h.len, nr, id);
		c->broken = true;
		return -EPROTO;
	}
	err = nr ? ps_recv(c, crcs, nr * sizeof(*crcs), what) : 0;
	for (i = 0; !err && i < nr; i++)
		crcs[i] = le32toh(crcs[i]);
	*file_size = h.arg;
	return err;
}

int ps_send_image(struct ps_conn *c, int dirfd, const char *name)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	size_t nlen = strlen(name);
	struct ps_hdr h;
	struct stat st;
	char what[96];
	off_t pos = 0;
	int err;

	snprintf(what, sizeof(what), "sending %s", name);
	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("cannot read %s to send it", name);
		return neg_errno();
	}
	if ((uint64_t)st.st_size > PS_FILE_MAX || nlen > PS_NAME_MAX) {
		pr_err("%s: %s is too large to send (%lld bytes)\n", c->peer, name,
		       (long long)st.st_size);
		return -EFBIG;
	}
	err = send_hdr(c, PS_FILE, (uint32_t)nlen, (uint32_t)(nlen + (size_t)st.st_size),
		       (uint64_t)st.st_size, what);
	if (!err)
		err = ps_send(c, name, nlen, what);
	if (!err)
		err = ps_send_file(c, fd, &pos, (size_t)st.st_size, what);
	if (!err)
		err = ps_get_reply(c, PS_FILE, &h, what);
	return err;
}

int ps_finish(struct ps_conn *c)
{
	struct ps_hdr h;
	int err;

	err = send_hdr(c, PS_END, 0, 0, 0, "ending the session");
	if (!err)
		err = ps_get_reply(c, PS_END, &h, "ending the session");
	if (!err)
		pr_info("%s: every image received and flushed\n", c->peer);
	return err;
}
