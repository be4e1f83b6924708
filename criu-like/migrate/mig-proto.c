// SPDX-License-Identifier: GPL-2.0
/*
 * The control protocol of a live migration (include/migrate.h,
 * Documentation/migration.md): the checks of what a peer sends, pure so
 * that test/unit/test-migrate.c covers them, and the blocking transport.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define LOG_PREFIX "migrate: "
#include "log.h"
#include "migrate.h"
#include "util.h"

static const char *const cmd_names[] = {
	[MIG_HELLO] = "HELLO",	       [MIG_ROUND] = "ROUND",	  [MIG_FILE] = "FILE",
	[MIG_ROUND_END] = "ROUND_END", [MIG_RESTORE] = "RESTORE", [MIG_GO] = "GO",
	[MIG_DONE] = "DONE",
};
static const char *const reply_names[] = {
	"OK", "RESTORED", "RUNNING", "REFUSE", "ERROR",
};

const char *mig_cmd_name(uint16_t cmd)
{
	if (cmd < sizeof(cmd_names) / sizeof(cmd_names[0]) && cmd_names[cmd])
		return cmd_names[cmd];
	if (cmd >= MIG_OK && cmd <= MIG_ERROR)
		return reply_names[cmd - MIG_OK];
	return NULL;
}

int mig_hdr_check(const struct mig_hdr *h, char *why, size_t n)
{
	uint32_t max = MIG_TEXT_MAX;

	if (h->magic != MIG_MAGIC || h->flags) {
		snprintf(why, n, "not a migration message (magic %#x, flags %#x)", h->magic,
			 h->flags);
		return -EPROTO;
	}
	if (!mig_cmd_name(h->cmd)) {
		snprintf(why, n, "unknown command %u", h->cmd);
		return -EPROTO;
	}
	if (h->cmd == MIG_FILE)
		max = MIG_PAYLOAD_MAX;
	if (h->len > max) {
		snprintf(why, n, "%s of %u bytes (at most %u)", mig_cmd_name(h->cmd), h->len, max);
		return -EMSGSIZE;
	}
	if ((h->cmd == MIG_ROUND || h->cmd == MIG_FILE || h->cmd == MIG_ROUND_END) &&
	    (h->arg < 1 || h->arg > 1000)) {
		snprintf(why, n, "%s of round %lld (1 to 1000)", mig_cmd_name(h->cmd),
			 (long long)h->arg);
		return -EINVAL;
	}
	return 0;
}

int mig_text_get(const char *text, size_t len, const char *key, char *val, size_t n)
{
	size_t kl = strlen(key), i = 0, end, vl;

	while (i < len) {
		for (end = i; end < len && text[end] != '\n'; end++)
			;
		if (end - i > kl && !memcmp(text + i, key, kl) && text[i + kl] == '=') {
			vl = end - i - kl - 1;
			if (vl >= n || memchr(text + i + kl + 1, '\0', vl))
				return -EINVAL;
			memcpy(val, text + i + kl + 1, vl);
			val[vl] = '\0';
			return 0;
		}
		i = end + 1;
	}
	return -ENOENT;
}

/* Is @word one of the comma-separated @list? */
static bool in_list(const char *list, const char *word, size_t wl)
{
	const char *p = list;

	while (*p) {
		size_t l = strcspn(p, ",");

		if (l == wl && !memcmp(p, word, wl))
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}

int mig_hello_check(int64_t proto, const char *text, size_t len, const char *version,
		    const char *have, char *why, size_t n)
{
	char peer[64], need[512];
	const char *p;

	if (proto != MIG_PROTO_VERSION) {
		snprintf(why, n, "migration protocol %lld, this destination speaks %d",
			 (long long)proto, MIG_PROTO_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (mig_text_get(text, len, "version", peer, sizeof(peer))) {
		snprintf(why, n, "the source did not say its criu-like version");
		return -EPROTO;
	}
	/* the images carry no version of their own yet: the same build on both ends */
	if (strcmp(peer, version)) {
		snprintf(why, n, "the source runs criu-like %s, this destination %s", peer,
			 version);
		return -EPROTO;
	}
	if (mig_text_get(text, len, "need", need, sizeof(need)))
		need[0] = '\0';
	for (p = need; *p;) {
		size_t l = strcspn(p, ",");

		if (l && !in_list(have, p, l)) {
			snprintf(why, n, "this destination lacks the feature '%.*s'", (int)l, p);
			return -EOPNOTSUPP;
		}
		p += l + (p[l] == ',');
	}
	return 0;
}

int mig_name_check(const char *name, size_t len)
{
	size_t i;

	if (!len || len > MIG_NAME_MAX || name[0] == '.')
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return -EINVAL;
	}
	/* pages come through the page server only; the chain's link is made here */
	if ((len > 8 && !memcmp(name, "pagemap-", 8)) || (len > 6 && !memcmp(name, "pages-", 6)) ||
	    (len == 6 && !memcmp(name, "parent", 6)))
		return -EINVAL;
	return 0;
}

int mig_send(int fd, uint16_t cmd, int64_t arg, const void *payload, size_t len)
{
	struct mig_hdr h = { .magic = htole32(MIG_MAGIC),
			     .cmd = htole16(cmd),
			     .len = htole32((uint32_t)len),
			     .arg = (int64_t)htole64((uint64_t)arg) };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)payload, len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	size_t left = sizeof(h) + len;
	ssize_t r;

	while (left) {
		r = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			pr_perror("cannot send %s", mig_cmd_name(cmd));
			return r < 0 ? neg_errno() : -EPIPE;
		}
		left -= (size_t)r;
		while (r && m.msg_iovlen) {
			size_t take = (size_t)r < m.msg_iov->iov_len ? (size_t)r
								     : m.msg_iov->iov_len;

			m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + take;
			m.msg_iov->iov_len -= take;
			r -= (ssize_t)take;
			if (!m.msg_iov->iov_len) {
				m.msg_iov++;
				m.msg_iovlen--;
			}
		}
	}
	return 0;
}

int mig_recv(int fd, struct mig_hdr *h, char **payload)
{
	char why[160];
	char *buf;
	int err;

	*payload = NULL;
	err = read_all(fd, h, sizeof(*h));
	if (err) {
		if (err == -ENODATA)
			err = -ECONNRESET;
		pr_errno(err, "the peer closed the connection");
		return err;
	}
	h->magic = le32toh(h->magic);
	h->cmd = le16toh(h->cmd);
	h->flags = le16toh(h->flags);
	h->len = le32toh(h->len);
	h->arg = (int64_t)le64toh((uint64_t)h->arg);
	err = mig_hdr_check(h, why, sizeof(why));
	if (err) {
		pr_err("refused a message: %s\n", why);
		return err;
	}
	buf = malloc((size_t)h->len + 1);
	if (!buf)
		return -ENOMEM;
	err = read_all(fd, buf, h->len);
	if (err) {
		free(buf);
		pr_errno(err, "%s: the payload did not come", mig_cmd_name(h->cmd));
		return err == -ENODATA ? -ECONNRESET : err;
	}
	buf[h->len] = '\0';
	*payload = buf;
	return 0;
}

int mig_expect(int fd, uint16_t want, int64_t *arg, const char *what)
{
	struct mig_hdr h;
	_cleanup_free_ char *p = NULL;
	int err = mig_recv(fd, &h, &p);

	if (err) {
		pr_err("%s: no answer from the destination\n", what);
		return err;
	}
	if (h.cmd == MIG_ERROR || h.cmd == MIG_REFUSE) {
		err = h.arg < 0 && h.arg > -4096 ? (int)h.arg : -EIO;
		pr_err("%s: the destination %s: %s\n", what,
		       h.cmd == MIG_REFUSE ? "refused" : "failed", p);
		return err;
	}
	if (h.cmd != want) {
		pr_err("%s: the destination answered %s, not %s\n", what, mig_cmd_name(h.cmd),
		       mig_cmd_name(want));
		return -EPROTO;
	}
	if (arg)
		*arg = h.arg;
	return 0;
}
