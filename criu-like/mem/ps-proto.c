// SPDX-License-Identifier: GPL-2.0
/*
 * The page server's messages (include/page-server.h): the checks every
 * message from the peer goes through before anything is done with it, and
 * the transport both ends share (TCP with splice/sendfile, or TLS).
 */
#define LOG_PREFIX "page-server: "

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "page-server.h"
#include "util.h"

_Static_assert(sizeof(struct ps_hdr) == PS_HDR_SIZE, "the header is 24 bytes on the wire");

void ps_hdr_pack(struct ps_hdr *h)
{
	h->magic = htole32(h->magic);
	h->cmd = htole16(h->cmd);
	h->flags = htole16(h->flags);
	h->id = htole32(h->id);
	h->len = htole32(h->len);
	h->arg = htole64(h->arg);
}

void ps_hdr_unpack(struct ps_hdr *h)
{
	h->magic = le32toh(h->magic);
	h->cmd = le16toh(h->cmd);
	h->flags = le16toh(h->flags);
	h->id = le32toh(h->id);
	h->len = le32toh(h->len);
	h->arg = le64toh(h->arg);
}

__attribute__((format(printf, 4, 5))) static int why_set(int err, char *why, size_t n,
							 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return err;
}

int ps_session_check(struct ps_session *s, const struct ps_hdr *h, char *why, size_t n)
{
	if (h->magic != PS_MAGIC)
		return why_set(-EPROTO, why, n, "bad magic %#x (not a criu-like page client)",
			       h->magic);
	if (h->flags)
		return why_set(-EPROTO, why, n, "unknown flags %#x in command %u", h->flags,
			       h->cmd);
	if (s->ended)
		return why_set(-EPROTO, why, n, "command %u after the end of the session", h->cmd);
	if (!s->hello && h->cmd != PS_HELLO)
		return why_set(-EPROTO, why, n, "command %u before HELLO", h->cmd);
	switch (h->cmd) {
	case PS_HELLO:
		if (s->hello)
			return why_set(-EPROTO, why, n, "a second HELLO");
		if (h->arg != PS_VERSION || h->len || h->id)
			return why_set(-EPROTO, why, n, "protocol version %llu, not %d",
				       (unsigned long long)h->arg, PS_VERSION);
		s->hello = true;
		return 0;
	case PS_OPEN:
		if (s->open)
			return why_set(-EPROTO, why, n, "OPEN of pages %u while pages %u is open",
				       h->id, s->id);
		if (h->arg > PS_IMAGE_MAX)
			return why_set(-EINVAL, why, n, "pages %u of %llu bytes: too large", h->id,
				       (unsigned long long)h->arg);
		if (h->len % sizeof(uint32_t) || h->len / sizeof(uint32_t) > PS_RUNS_MAX)
			return why_set(-EMSGSIZE, why, n,
				       "OPEN of pages %u with a run list of %u bytes", h->id,
				       h->len);
		s->open = true;
		s->id = h->id;
		s->total = h->arg;
		s->got = 0;
		s->nr_runs = h->len / sizeof(uint32_t);
		return 0;
	case PS_DATA:
		if (!s->open)
			return why_set(-EPROTO, why, n, "DATA with no pages image open");
		if (!h->len || h->len > PS_DATA_MAX || h->id || h->arg)
			return why_set(-EMSGSIZE, why, n, "DATA of %u bytes", h->len);
		if (h->len > s->total - s->got)
			return why_set(
				-EMSGSIZE, why, n,
				"DATA of %u bytes at offset %llu of pages %u, which has %llu",
				h->len, (unsigned long long)s->got, s->id,
				(unsigned long long)s->total);
		s->got += h->len;
		return 0;
	case PS_CLOSE:
		if (!s->open || h->id != s->id)
			return why_set(-EPROTO, why, n, "CLOSE of pages %u, which is not open",
				       h->id);
		if (h->len || h->arg != s->total || s->got != s->total)
			return why_set(
				-EINVAL, why, n,
				"CLOSE of pages %u at %llu bytes: %llu announced, %llu received",
				h->id, (unsigned long long)h->arg, (unsigned long long)s->total,
				(unsigned long long)s->got);
		s->open = false;
		return 0;
	case PS_FILE:
		if (s->open)
			return why_set(-EPROTO, why, n, "FILE while pages %u is open", s->id);
		if (!h->id || h->id > PS_NAME_MAX || h->arg > PS_FILE_MAX ||
		    h->len != h->id + h->arg)
			return why_set(-EMSGSIZE, why, n,
				       "FILE with a name of %u bytes, %llu bytes "
				       "of data and a payload of %u",
				       h->id, (unsigned long long)h->arg, h->len);
		return 0;
	case PS_END:
		if (s->open)
			return why_set(-EPROTO, why, n, "END while pages %u is open", s->id);
		if (h->len || h->id || h->arg)
			return why_set(-EPROTO, why, n, "END with arguments");
		s->ended = true;
		return 0;
	}
	return why_set(-EPROTO, why, n, "unknown command %u", h->cmd);
}

int ps_check_runs(const uint32_t *runs, uint32_t nr, uint64_t total, char *why, size_t n)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < nr; i++) {
		uint32_t p = le32toh(runs[i]);

		if (!p)
			return why_set(-EINVAL, why, n, "run %u has no pages", i);
		sum += p; /* at most 2^24 runs of 2^32 pages: no overflow */
	}
	if (sum * PAGE_SIZE != total)
		return why_set(-EINVAL, why, n, "runs of %llu pages in all for %llu bytes",
			       (unsigned long long)sum, (unsigned long long)total);
	return 0;
}

/* "N.img" with N a decimal number without leading zeros, fitting 32 bits. */
static bool id_img(const char *s, size_t len)
{
	uint64_t v = 0;
	size_t i, digits = len >= 4 ? len - 4 : 0;

	if (!digits || digits > 10 || memcmp(s + digits, ".img", 4) || (s[0] == '0' && digits > 1))
		return false;
	for (i = 0; i < digits; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return v <= UINT32_MAX;
}

int ps_check_name(const char *name, size_t len)
{
	static const char *const prefixes[] = { "pagemap-shmem-", "pagemap-" };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t pl = strlen(prefixes[i]);

		if (len > pl && !memcmp(name, prefixes[i], pl) && id_img(name + pl, len - pl))
			return 0;
	}
	return -EINVAL;
}

int ps_check_path(const char *path, size_t len)
{
	if (!len || len > PS_PATH_MAX || path[0] == '/')
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char ch = path[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-' || ch == '/'))
			return -EINVAL;
		/* a ".." component */
		if (ch == '.' && i + 1 < len && path[i + 1] == '.' &&
		    (i == 0 || path[i - 1] == '/') && (i + 2 == len || path[i + 2] == '/'))
			return -EINVAL;
	}
	return 0;
}

int ps_check_reply(const struct ps_hdr *h, uint16_t cmd, char *why, size_t n)
{
	if (h->magic != PS_MAGIC || h->cmd != PS_REPLY || h->flags)
		return why_set(-EPROTO, why, n, "not a page server reply (magic %#x, command %u)",
			       h->magic, h->cmd);
	if (h->id != cmd && (int64_t)h->arg >= 0)
		return why_set(-EPROTO, why, n, "a reply to command %u, %u expected", h->id, cmd);
	if (h->len > PS_MSG_MAX + (cmd == PS_CLOSE  ? 4 * PS_RUNS_MAX
				   : cmd == PS_GET  ? PS_FILE_MAX
				   : cmd == PS_READ ? PS_DATA_MAX
				   : cmd == PS_LIST ? PS_LIST_MAX
						    : 0))
		return why_set(-EMSGSIZE, why, n, "a reply of %u bytes", h->len);
	return 0;
}

/* ---- transport ---------------------------------------------------------------------------- */

static int io_err(struct ps_conn *c, int err, const char *what)
{
	c->broken = true;
	if (err == -ECONNRESET || err == -EPIPE)
		pr_err("%s: connection lost (%s) while %s\n", c->peer, strerror(-err), what);
	else
		pr_err("%s: %s while %s\n", c->peer, strerror(-err), what);
	return err;
}

int ps_send(struct ps_conn *c, const void *buf, size_t len, const char *what)
{
	const char *p = buf;

	if (c->broken)
		return -EPIPE;
	while (len) {
		ssize_t n = c->tls ? ps_tls_send(c->tls, p, len)
				   : send(c->fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return io_err(c, n < 0 ? neg_errno() : -EIO, what);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ps_recv(struct ps_conn *c, void *buf, size_t len, const char *what)
{
	char *p = buf;

	if (c->broken)
		return -EPIPE;
	while (len) {
		ssize_t n = c->tls ? ps_tls_recv(c->tls, p, len) : recv(c->fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return io_err(c, neg_errno(), what);
		if (!n) {
			c->broken = true;
			pr_err("%s: the peer closed the connection while %s\n", c->peer, what);
			return -ECONNRESET;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Without splice (TLS): through a buffer. @rd is read, or pread at *@pos when @pos is set. */
static int send_copy(struct ps_conn *c, int rd, off_t *pos, size_t len, const char *what)
{
	size_t bufsz = min(len, (size_t)1 << 20);
	_cleanup_free_ char *buf = malloc(bufsz);
	int err;

	if (!buf)
		return -ENOMEM;
	while (len) {
		size_t want = min(len, bufsz);
		ssize_t n = pos ? pread(rd, buf, want, *pos) : read(rd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? neg_errno() : -EIO;
			pr_err("%s: reading the data to send: %s, while %s\n", c->peer,
			       strerror(-err), what);
			return err;
		}
		err = ps_send(c, buf, (size_t)n, what);
		if (err)
			return err;
		if (pos)
			*pos += n;
		len -= (size_t)n;
	}
	return 0;
}

int ps_send_pipe(struct ps_conn *c, int rd, size_t len, const char *what)
{
	if (c->broken)
		return -EPIPE;
	if (c->tls)
		return send_copy(c, rd, NULL, len, what);
	while (len) {
		ssize_t n = splice(rd, NULL, c->fd, NULL, len, SPLICE_F_MORE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return io_err(c, n < 0 ? neg_errno() : -EIO, what);
		len -= (size_t)n;
	}
	return 0;
}

int ps_send_file(struct ps_conn *c, int fd, off_t *pos, size_t len, const char *what)
{
	if (c->broken)
		return -EPIPE;
	if (c->tls)
		return send_copy(c, fd, pos, len, what);
	while (len) {
		ssize_t n = sendfile(c->fd, fd, pos, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return io_err(c, n < 0 ? neg_errno() : -EIO, what);
		len -= (size_t)n;
	}
	return 0;
}

static int recv_copy(struct ps_conn *c, int fd, size_t len, const char *what)
{
	size_t bufsz = min(len, (size_t)1 << 20);
	_cleanup_free_ char *buf = malloc(bufsz);
	int err;

	if (!buf)
		return -ENOMEM;
	while (len) {
		size_t n = min(len, bufsz);

		err = ps_recv(c, buf, n, what);
		if (!err)
			err = write_all(fd, buf, n);
		if (err)
			return err;
		len -= n;
	}
	return 0;
}

int ps_recv_file(struct ps_conn *c, int fd, size_t len, const char *what)
{
	if (c->broken)
		return -EPIPE;
	if (c->tls || c->pipe[0] < 0)
		return recv_copy(c, fd, len, what);
	while (len) {
		ssize_t n = splice(c->fd, NULL, c->pipe[1], NULL, len,
				   SPLICE_F_MOVE | SPLICE_F_MORE);
		size_t left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return io_err(c, neg_errno(), what);
		if (!n) {
			c->broken = true;
			pr_err("%s: the peer closed the connection while %s\n", c->peer, what);
			return -ECONNRESET;
		}
		len -= (size_t)n;
		for (left = (size_t)n; left;) {
			ssize_t w = splice(c->pipe[0], NULL, fd, NULL, left, SPLICE_F_MOVE);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				int err = w < 0 ? neg_errno() : -EIO;

				pr_err("%s: writing the received data: %s, while %s\n", c->peer,
				       strerror(-err), what);
				return err;
			}
			left -= (size_t)w;
		}
	}
	return 0;
}

void ps_conn_close(struct ps_conn *c)
{
	if (!c)
		return;
	if (c->tls)
		ps_tls_close(c->tls);
	if (c->fd >= 0)
		close(c->fd);
	if (c->pipe[0] >= 0)
		close(c->pipe[0]);
	if (c->pipe[1] >= 0)
		close(c->pipe[1]);
	if (c->sigpipe_saved)
		sigaction(SIGPIPE, &c->old_sigpipe, NULL);
	free(c);
}
