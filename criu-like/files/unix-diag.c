// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets at dump: what sock_diag says about them (NETLINK_SOCK_DIAG
 * through libnl, one exact request per socket, or a dump of every unix
 * socket of the dumper's network namespace to find the listening socket of
 * a connection not yet accepted, or the socket bound to a datagram's sender
 * name).
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "ns.h"
#include "unix.h"
#include "util.h"

void usk_diag_fini(struct usk_diag *d)
{
	free(d->icons);
	d->icons = NULL;
}

/* The attributes of one answer (nlmsg_parse() checked their place in the message). */
static int diag_parse_attrs(struct usk_diag *d, struct nlattr **tb)
{
	struct nlattr *a;

	if ((a = tb[UNIX_DIAG_NAME])) {
		d->name_len = min((unsigned int)nla_len(a), (unsigned int)USK_NAME_MAX);
		memcpy(d->name, nla_data(a), d->name_len);
	}
	if ((a = tb[UNIX_DIAG_VFS]) && nla_len(a) >= (int)sizeof(struct unix_diag_vfs)) {
		d->has_vfs = true;
		d->vfs_ino = ((struct unix_diag_vfs *)nla_data(a))->udiag_vfs_ino;
	}
	if ((a = tb[UNIX_DIAG_PEER]) && nla_len(a) >= (int)sizeof(uint32_t)) {
		d->has_peer = true;
		memcpy(&d->peer, nla_data(a), sizeof(uint32_t));
	}
	if ((a = tb[UNIX_DIAG_ICONS])) {
		d->nr_icons = (unsigned int)nla_len(a) / sizeof(uint32_t);
		d->icons = malloc((d->nr_icons ?: 1) * sizeof(uint32_t));
		if (!d->icons)
			return -ENOMEM;
		memcpy(d->icons, nla_data(a), d->nr_icons * sizeof(uint32_t));
	}
	if ((a = tb[UNIX_DIAG_RQLEN]) && nla_len(a) >= (int)sizeof(struct unix_diag_rqlen)) {
		d->rqueue = ((struct unix_diag_rqlen *)nla_data(a))->udiag_rqueue;
		d->wqueue = ((struct unix_diag_rqlen *)nla_data(a))->udiag_wqueue;
	}
	if ((a = tb[UNIX_DIAG_SHUTDOWN]) && nla_len(a) >= 1)
		d->shutdown = *(uint8_t *)nla_data(a);
	return 0;
}

static int diag_parse(struct nlmsghdr *h, struct usk_diag *d)
{
	struct nlattr *tb[UNIX_DIAG_MAX + 1];
	struct unix_diag_msg *m = nlmsg_data(h);

	memset(d, 0, sizeof(*d));
	if (!nlmsg_valid_hdr(h, sizeof(*m)) ||
	    nlmsg_parse(h, sizeof(*m), tb, UNIX_DIAG_MAX, NULL) < 0)
		return -EINVAL;
	d->ino = m->udiag_ino;
	d->type = m->udiag_type;
	d->state = m->udiag_state;
	return diag_parse_attrs(d, tb);
}

/* One sock_diag exchange: each answer goes to @fn until it returns non-zero. */
struct diag_query {
	int (*fn)(struct usk_diag *d, void *arg);
	void *arg;
	int ret; /* what @fn returned last (1: found), or -errno of a failure */
};

static int diag_valid_cb(struct nl_msg *msg, void *arg)
{
	struct diag_query *q = arg;
	struct usk_diag d;

	q->ret = diag_parse(nlmsg_hdr(msg), &d);
	if (!q->ret)
		q->ret = q->fn(&d, q->arg);
	usk_diag_fini(&d);
	return q->ret ? NL_STOP : NL_OK;
}

static int diag_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	(void)nla;
	((struct diag_query *)arg)->ret = e->error < 0 ? e->error : -EIO;
	return NL_STOP;
}

static int diag_request(struct nl_sock *sk, uint32_t ino, bool dump)
{
	struct unix_diag_req req = {
		.sdiag_family = AF_UNIX,
		.udiag_states = ~0u,
		.udiag_ino = ino,
		.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_PEER |
			      UDIAG_SHOW_ICONS | UDIAG_SHOW_RQLEN,
		/*
		 * sk_shutdown comes always (UNIX_DIAG_SHUTDOWN). An exact request
		 * checks the cookie unless it is INET_DIAG_NOCOOKIE (~0).
		 */
		.udiag_cookie = { ~0u, ~0u },
	};

	return sock_diag_send(sk, &req, sizeof(req), dump ? NLM_F_DUMP : 0);
}

/*
 * Ask sock_diag (through libnl) about the unix socket @ino, or with @dump
 * about every unix socket of the dumper's network namespace, passing each
 * answer to @fn until it returns non-zero (1: found, stop). 0 when @fn never
 * stopped it, -ENOENT when sock_diag does not know @ino, or -errno.
 */
static int diag_query(uint32_t ino, bool dump, int (*fn)(struct usk_diag *d, void *arg), void *arg)
{
	struct diag_query q = { .fn = fn, .arg = arg };
	struct nl_sock *sk;
	int err = sock_diag_open(&sk);

	if (err)
		return err;
	/* Only the answers: no NLM_F_ACK, so an exact request ends with its one answer. */
	nl_socket_disable_auto_ack(sk);
	err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, diag_valid_cb, &q);
	if (!err)
		err = nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, diag_err_cb, &q);
	if (!err)
		err = diag_request(sk, ino, dump);
	if (err >= 0)
		err = nl_recvmsgs_default(sk);
	nl_socket_free(sk);
	if (q.ret)
		return q.ret;
	if (err < 0) {
		pr_debug("sock_diag of unix socket %u: %s\n", ino, nl_geterror(err));
		return err == -NLE_NOMEM ? -ENOMEM : -EIO;
	}
	return 0;
}

static int take_exact(struct usk_diag *d, void *arg)
{
	*(struct usk_diag *)arg = *d;
	d->icons = NULL;
	return 1;
}

/* sock_diag of the unix socket @ino into @ret (usk_diag_fini() it); -ENOENT if none. */
int usk_diag_get(uint32_t ino, struct usk_diag *ret)
{
	int err = diag_query(ino, false, take_exact, ret);

	return err == 0 ? -ENOENT : err < 0 ? err : 0;
}

struct name_search {
	const struct usk_from *name;
	uint8_t type;
	uint32_t ino;
};

static int match_name(struct usk_diag *d, void *arg)
{
	struct name_search *s = arg;

	/* An accepted socket shares its listener's name; only datagram sockets send from one. */
	if (d->type != s->type || d->name_len != s->name->len ||
	    memcmp(d->name, s->name->name, d->name_len))
		return 0;
	s->ino = d->ino;
	return 1;
}

/* The datagram socket bound to @name; 0 if none. */
int usk_sender_ino(const struct usk_from *name, uint32_t *ret)
{
	struct name_search s = { .name = name, .type = SOCK_DGRAM };
	int err = diag_query(0, true, match_name, &s);

	*ret = s.ino;
	return err < 0 ? err : 0;
}

struct listener_search {
	uint32_t client, listener;
};

static int match_icon(struct usk_diag *d, void *arg)
{
	struct listener_search *s = arg;
	unsigned int i;

	for (i = 0; i < d->nr_icons; i++)
		if (d->icons[i] == s->client) {
			s->listener = d->ino;
			return 1;
		}
	return 0;
}

/*
 * The listening socket with a connection from @client not yet accepted; 0 if
 * none. UNIX_DIAG_ICONS lists the clients of those connections (the peers
 * of the sockets in the backlog, 0 for a client closed since).
 */
int usk_find_listener(uint32_t client, uint32_t *ret)
{
	struct listener_search s = { .client = client };
	int err = diag_query(0, true, match_icon, &s);

	*ret = s.listener;
	return err < 0 ? err : 0;
}
