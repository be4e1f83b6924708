// SPDX-License-Identifier: GPL-2.0
/*
 * Packet sockets (AF_PACKET: SOCK_RAW, SOCK_DGRAM and the old SOCK_PACKET;
 * Documentation/files.md): what DHCP clients (udhcpc, dhclient), tcpdump
 * and LLDP daemons hold. Dump, from the drained socket itself: type and
 * protocol, the link it is bound to (getsockname), PACKET_VERSION,
 * PACKET_RESERVE, PACKET_TIMESTAMP, the boolean options, the fanout group,
 * a classic BPF filter, buffers, mark and priority; from sock_diag
 * (packet_diag, in the tree's network namespace): the copy threshold, the
 * memberships (PACKET_ADD_MEMBERSHIP, with their counts) and the mmap'ed
 * rings (PACKET_RX_RING, PACKET_TX_RING: packet-ring.c, with their bytes).
 * Refused by name: a fanout group steered by a BPF program, packets waiting in the queue (they would
 * have to come again through the link), a socket of another network
 * namespace. Restore, in the controller inside the tree's network
 * namespace: socket(), the options that must come before bind(), the
 * rings, the filter, bind(), the memberships, the fanout group.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <linux/packet_diag.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "anon.h"
#include "files-int.h"
#include "inet.h"
#include "log.h"
#include "ns.h"
#include "packet-ring.h"
#include "restore-files-int.h"
#include "util.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23 /* 4.20 */
#endif
#ifndef PACKET_FANOUT_CBPF
#define PACKET_FANOUT_CBPF 6
#define PACKET_FANOUT_EBPF 7
#endif

/* The boolean SOL_PACKET options kept (bit n of bool_opts for option n). */
static const int pk_bool_opts[] = { PACKET_AUXDATA, PACKET_ORIGDEV,	 PACKET_VNET_HDR,
				    PACKET_LOSS,    PACKET_QDISC_BYPASS, PACKET_IGNORE_OUTGOING };

#define PK_MAX_MCLIST 64

static int packet_match(const struct dump_ctx *ctx, const struct fd_info *f)
{
	(void)ctx;
	/* files.c sets sk_family of sockets */
	return f->sk_family == AF_PACKET;
}

/* What packet_diag tells of one socket. */
struct pk_diag {
	uint32_t ino;
	bool found, has_rx, has_tx;
	struct packet_diag_ring rx, tx;
	uint32_t copy_thresh;
	size_t n_mc;
	struct packet_diag_mclist mc[PK_MAX_MCLIST];
	int err;
};

static int pk_diag_cb(struct nl_msg *msg, void *arg)
{
	struct pk_diag *d = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct nlattr *tb[PACKET_DIAG_MAX + 1];
	const struct packet_diag_msg *m;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return NL_OK;
	m = NLMSG_DATA(h);
	if (m->pdiag_ino != d->ino)
		return NL_OK;
	if (nlmsg_parse(h, sizeof(*m), tb, PACKET_DIAG_MAX, NULL) < 0) {
		d->err = -EINVAL;
		return NL_STOP;
	}
	d->found = true;
	if (tb[PACKET_DIAG_RX_RING] && nla_len(tb[PACKET_DIAG_RX_RING]) >= (int)sizeof(d->rx)) {
		d->has_rx = true;
		memcpy(&d->rx, nla_data(tb[PACKET_DIAG_RX_RING]), sizeof(d->rx));
	}
	if (tb[PACKET_DIAG_TX_RING] && nla_len(tb[PACKET_DIAG_TX_RING]) >= (int)sizeof(d->tx)) {
		d->has_tx = true;
		memcpy(&d->tx, nla_data(tb[PACKET_DIAG_TX_RING]), sizeof(d->tx));
	}
	if (tb[PACKET_DIAG_INFO] &&
	    nla_len(tb[PACKET_DIAG_INFO]) >= (int)sizeof(struct packet_diag_info))
		d->copy_thresh = ((struct packet_diag_info *)nla_data(tb[PACKET_DIAG_INFO]))
					 ->pdi_copy_thresh;
	if (tb[PACKET_DIAG_MCLIST]) {
		size_t n = (size_t)nla_len(tb[PACKET_DIAG_MCLIST]) / sizeof(d->mc[0]);

		if (n > PK_MAX_MCLIST) {
			d->err = -E2BIG;
			return NL_STOP;
		}
		memcpy(d->mc, nla_data(tb[PACKET_DIAG_MCLIST]), n * sizeof(d->mc[0]));
		d->n_mc = n;
	}
	return NL_STOP;
}

/* packet_diag of socket @ino, in the tree's network namespace. */
static int pk_diag(uint32_t ino, struct pk_diag *d)
{
	struct packet_diag_req req = {
		.sdiag_family = AF_PACKET,
		.pdiag_show = PACKET_SHOW_INFO | PACKET_SHOW_MCLIST | PACKET_SHOW_RING_CFG,
	};
	struct nl_sock *sk;
	int err;

	memset(d, 0, sizeof(*d));
	d->ino = ino;
	err = sock_diag_open(&sk);
	if (err)
		return err;
	err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, pk_diag_cb, d);
	if (!err)
		err = sock_diag_send(sk, &req, sizeof(req), NLM_F_DUMP);
	if (err >= 0)
		err = nl_recvmsgs_default(sk);
	nl_socket_free(sk);
	if (d->err)
		return d->err;
	if (err < 0) {
		pr_err("packet_diag of socket %u: %s\n", ino, nl_geterror(err));
		return -EIO;
	}
	return 0;
}

/* Where it is bound: a link index and protocol, or a SOCK_PACKET link name. */
static int dump_addr(const struct fd_info *f, PacketSkEntry *e, char *dev)
{
	struct sockaddr_storage ss = {};
	socklen_t len = sizeof(ss);

	if (getsockname(f->dfd, (struct sockaddr *)&ss, &len)) {
		pr_perror("pid %d fd %d: getsockname of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	if (e->type == SOCK_PACKET) {
		const struct sockaddr_pkt *p = (const struct sockaddr_pkt *)&ss;

		memcpy(dev, p->spkt_device, sizeof(p->spkt_device));
		dev[sizeof(p->spkt_device)] = '\0';
		if (dev[0]) {
			e->has_device = true;
			e->device.data = (uint8_t *)dev;
			e->device.len = strlen(dev);
		}
		return 0;
	}
	const struct sockaddr_ll *ll = (const struct sockaddr_ll *)&ss;

	e->protocol = ntohs(ll->sll_protocol);
	e->has_ifindex = ll->sll_ifindex != 0;
	e->ifindex = (uint32_t)ll->sll_ifindex;
	return 0;
}

static int dump_opts(const struct fd_info *f, PacketSkEntry *e)
{
	int val, err;
	size_t i;

	err = inet_sk_getint(f, SOL_SOCKET, SO_RCVBUF, &val);
	e->rcvbuf = (uint32_t)val;
	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_SNDBUF, &val);
	e->sndbuf = (uint32_t)val;
	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_MARK, &val);
	e->has_mark = !err && val;
	e->mark = (uint32_t)val;
	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_PRIORITY, &val);
	e->has_priority = !err && val;
	e->priority = (uint32_t)val;
	if (err || e->type == SOCK_PACKET)
		return err; /* SOCK_PACKET has no SOL_PACKET options */
	err = inet_sk_getint(f, SOL_PACKET, PACKET_VERSION, &val);
	e->version = (uint32_t)val;
	if (!err)
		err = inet_sk_getint(f, SOL_PACKET, PACKET_RESERVE, &val);
	e->has_reserve = !err && val;
	e->reserve = (uint32_t)val;
	if (!err)
		err = inet_sk_getint(f, SOL_PACKET, PACKET_TIMESTAMP, &val);
	e->has_timestamp = !err && val;
	e->timestamp = (uint32_t)val;
	for (i = 0; !err && i < ARRAY_SIZE(pk_bool_opts); i++) {
		err = inet_sk_getint(f, SOL_PACKET, pk_bool_opts[i], &val);
		if (!err && val)
			e->bool_opts |= 1u << pk_bool_opts[i];
	}
	e->has_bool_opts = e->bool_opts != 0;
	if (!err)
		err = inet_sk_getint(f, SOL_PACKET, PACKET_FANOUT, &val);
	if (!err && val) {
		unsigned int type = ((unsigned int)val >> 16) & 0xff;

		if (type == PACKET_FANOUT_CBPF || type == PACKET_FANOUT_EBPF) {
			pr_err("pid %d fd %d: %s is in a packet fanout group (id %u) steered by a "
			       "BPF "
			       "program: its program cannot be read back\n",
			       f->pid, f->fd, f->link, (unsigned int)val & 0xffff);
			return -EOPNOTSUPP;
		}
		e->has_fanout = true;
		e->fanout = (uint32_t)val;
	}
	return err;
}

/* A packet waiting to be read cannot come again through the link at restore: refused. */
static int check_queue(const struct fd_info *f)
{
	char c;
	ssize_t n = recv(f->dfd, &c, 1, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n < 0) {
		pr_perror("pid %d fd %d: cannot look at the queue of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	pr_err("pid %d fd %d: %s, a packet socket, has a packet of %zd bytes queued unread: the "
	       "queue of a packet socket is not saved\n",
	       f->pid, f->fd, f->link, n);
	return -EOPNOTSUPP;
}

/* One block owned by the description: the entry and everything it points to. */
struct pk_priv {
	PacketSkEntry e;
	char dev[IFNAMSIZ + 1];
	PacketMclist mc[PK_MAX_MCLIST];
	PacketMclist *mcp[PK_MAX_MCLIST];
	uint8_t addr[PK_MAX_MCLIST][32];
	PacketRing rx, tx;
	size_t filter_len;
	uint8_t filter[]; /* the classic BPF program, then the bytes of the rings */
};

static int dump_diag(const struct fd_info *f, const struct pk_diag *d, struct pk_priv *p)
{
	size_t i;
	int err;

	if (d->has_rx || d->has_tx) {
		err = pk_rings_dump(f, p->e.version, d->has_rx ? &d->rx : NULL,
				    d->has_tx ? &d->tx : NULL, &p->rx, &p->tx,
				    p->filter + p->filter_len);
		if (err)
			return err;
		p->e.rx_ring = d->has_rx ? &p->rx : NULL;
		p->e.tx_ring = d->has_tx ? &p->tx : NULL;
	}
	p->e.has_copy_thresh = d->copy_thresh != 0;
	p->e.copy_thresh = d->copy_thresh;
	for (i = 0; i < d->n_mc; i++) {
		PacketMclist *m = &p->mc[i];

		packet_mclist__init(m);
		m->ifindex = d->mc[i].pdmc_index;
		m->type = d->mc[i].pdmc_type;
		m->count = d->mc[i].pdmc_count;
		memcpy(p->addr[i], d->mc[i].pdmc_addr, sizeof(p->addr[i]));
		m->addr.data = p->addr[i];
		m->addr.len = min((size_t)d->mc[i].pdmc_alen, sizeof(p->addr[i]));
		p->mcp[i] = m;
	}
	p->e.mclist = p->mcp;
	p->e.n_mclist = d->n_mc;
	return 0;
}

/* packet_diag of @f (none for SOCK_PACKET), and the bytes its rings need. */
static int diag_of(const struct fd_info *f, struct pk_diag *d, size_t *ring_bytes)
{
	int type = 0, err = inet_sk_getint(f, SOL_SOCKET, SO_TYPE, &type);

	memset(d, 0, sizeof(*d));
	*ring_bytes = 0;
	if (err || type == SOCK_PACKET)
		return err;
	err = pk_diag((uint32_t)f->st.st_ino, d);
	if (err)
		return err;
	if (!d->found) {
		pr_err("pid %d fd %d: %s is not known to packet_diag\n", f->pid, f->fd, f->link);
		return -ENOENT;
	}
	*ring_bytes = (d->has_rx ? pk_ring_bytes(&d->rx) : 0) +
		      (d->has_tx ? pk_ring_bytes(&d->tx) : 0);
	return 0;
}

static int packet_dump(struct dump_ctx *ctx, const struct fd_info *f, struct file_desc *d)
{
	ProtobufCBinaryData filter = { 0 };
	bool locked = false;
	int type = 0, proto = 0, err;
	_cleanup_free_ struct pk_diag *dg = malloc(sizeof(*dg));
	struct pk_priv *p = NULL;
	size_t ring_bytes = 0;

	(void)ctx;
	err = dg ? sock_check_netns(f, "a packet") : -ENOMEM;
	if (!err)
		err = diag_of(f, dg, &ring_bytes);
	if (!err)
		err = sk_dump_filter(f, &filter, &locked);
	if (!err) {
		p = anon_priv_alloc(d, sizeof(*p) + filter.len + ring_bytes);
		err = p ? 0 : -ENOMEM;
	}
	if (err) {
		free(filter.data);
		return err;
	}
	packet_sk_entry__init(&p->e);
	if (filter.len)
		memcpy(p->filter, filter.data, filter.len);
	free(filter.data);
	p->filter_len = filter.len;
	p->e.has_filter = filter.len != 0;
	p->e.filter.data = p->filter;
	p->e.filter.len = filter.len;
	p->e.has_lock_filter = p->e.lock_filter = locked;
	d->fe.type = FILE_TYPE__FILE_PACKETSK;
	d->fe.packetsk = &p->e;
	p->e.flags = f->flags;
	err = inet_sk_getint(f, SOL_SOCKET, SO_TYPE, &type);
	if (!err)
		err = inet_sk_getint(f, SOL_SOCKET, SO_PROTOCOL, &proto);
	p->e.type = (uint32_t)type;
	/* SO_PROTOCOL gives the socket()'s protocol in network order */
	p->e.protocol = ntohs((uint16_t)proto);
	if (!err)
		err = dump_addr(f, &p->e, p->dev);
	if (!err)
		err = dump_opts(f, &p->e);
	if (!err && type != SOCK_PACKET)
		err = dump_diag(f, dg, p);
	if (!err)
		err = check_queue(f);
	if (err)
		return err;
	pr_debug("pid %d fd %d: packet socket type %u protocol %#x ifindex %u, %zu memberships, "
		 "fanout %#x\n",
		 f->pid, f->fd, p->e.type, p->e.protocol, p->e.ifindex, p->e.n_mclist, p->e.fanout);
	return 0;
}

/* ---- restore ---- */
static int packet_check(const FileEntry *fe)
{
	const PacketSkEntry *e = fe->packetsk;

	if (!e)
		return rst_file_part_missing(fe);
	if ((e->type != SOCK_RAW && e->type != SOCK_DGRAM && e->type != SOCK_PACKET) ||
	    e->protocol > 0xffff || (e->has_device && e->device.len > IFNAMSIZ) ||
	    e->n_mclist > PK_MAX_MCLIST) {
		pr_err("files.img: file %u: packet socket of type %u, protocol %#x: not one the "
		       "dump writes\n",
		       fe->id, e->type, e->protocol);
		return -EINVAL;
	}
	return 0;
}

static int setint(const FileEntry *fe, int sk, int level, int opt, int val, const char *name)
{
	if (!setsockopt(sk, level, opt, &val, sizeof(val)))
		return 0;
	pr_perror("file %u: packet socket: cannot set %s to %d", fe->id, name, val);
	return neg_errno();
}

/* The options that must come before bind() and the rings: version, reserve, the flags. */
static int set_opts(const FileEntry *fe, int sk, const PacketSkEntry *e)
{
	/* the kernel doubles what it is given, and getsockopt() shows the double */
	int err = setint(fe, sk, SOL_SOCKET, SO_RCVBUFFORCE, (int)(e->rcvbuf / 2), "SO_RCVBUF");
	size_t i;

	if (!err)
		err = setint(fe, sk, SOL_SOCKET, SO_SNDBUFFORCE, (int)(e->sndbuf / 2), "SO_SNDBUF");
	if (!err && e->has_mark)
		err = setint(fe, sk, SOL_SOCKET, SO_MARK, (int)e->mark, "SO_MARK");
	if (!err && e->has_priority)
		err = setint(fe, sk, SOL_SOCKET, SO_PRIORITY, (int)e->priority, "SO_PRIORITY");
	if (err || e->type == SOCK_PACKET)
		return err;
	if (e->version)
		err = setint(fe, sk, SOL_PACKET, PACKET_VERSION, (int)e->version, "PACKET_VERSION");
	if (!err && e->has_reserve)
		err = setint(fe, sk, SOL_PACKET, PACKET_RESERVE, (int)e->reserve, "PACKET_RESERVE");
	if (!err && e->has_timestamp)
		err = setint(fe, sk, SOL_PACKET, PACKET_TIMESTAMP, (int)e->timestamp,
			     "PACKET_TIMESTAMP");
	if (!err && e->has_copy_thresh)
		err = setint(fe, sk, SOL_PACKET, PACKET_COPY_THRESH, (int)e->copy_thresh,
			     "PACKET_COPY_THRESH");
	for (i = 0; !err && i < ARRAY_SIZE(pk_bool_opts); i++)
		if (e->bool_opts & (1u << pk_bool_opts[i]))
			err = setint(fe, sk, SOL_PACKET, pk_bool_opts[i], 1, "a SOL_PACKET option");
	return err;
}

static bool has_rings(const PacketSkEntry *e)
{
	return e->rx_ring || e->tx_ring;
}

static int bind_it(const FileEntry *fe, int sk, const PacketSkEntry *e)
{
	if (e->type == SOCK_PACKET) {
		struct sockaddr_pkt a = { .spkt_family = AF_PACKET,
					  .spkt_protocol = htons((uint16_t)e->protocol) };

		if (!e->has_device)
			return 0;
		memcpy(a.spkt_device, e->device.data,
		       min(e->device.len, sizeof(a.spkt_device) - 1));
		/* the kernel wants the size of a struct sockaddr, whose sa_data is the name */
		if (bind(sk, (struct sockaddr *)&a, sizeof(struct sockaddr))) {
			pr_perror("file %u: SOCK_PACKET socket: cannot bind to %s", fe->id,
				  (const char *)a.spkt_device);
			return neg_errno();
		}
		return 0;
	}
	struct sockaddr_ll ll = { .sll_family = AF_PACKET,
				  .sll_protocol = htons((uint16_t)e->protocol),
				  .sll_ifindex = (int)e->ifindex };

	/* unbound: socket() took the protocol already, but for a socket with rings */
	if (!e->has_ifindex && !has_rings(e))
		return 0;
	if (bind(sk, (struct sockaddr *)&ll, sizeof(ll))) {
		pr_perror("file %u: packet socket: cannot bind to link %u, protocol %#x", fe->id,
			  e->ifindex, e->protocol);
		return neg_errno();
	}
	return 0;
}

static int join(const FileEntry *fe, int sk, const PacketSkEntry *e)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < e->n_mclist; i++) {
		const PacketMclist *m = e->mclist[i];
		struct packet_mreq r = { .mr_ifindex = (int)m->ifindex,
					 .mr_type = (unsigned short)m->type,
					 .mr_alen = (unsigned short)min(m->addr.len,
									sizeof(r.mr_address)) };

		memcpy(r.mr_address, m->addr.data, r.mr_alen);
		for (k = 0; k < m->count; k++)
			if (setsockopt(sk, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &r, sizeof(r))) {
				pr_perror("file %u: packet socket: cannot add membership %u of "
					  "link %u",
					  fe->id, m->type, m->ifindex);
				return neg_errno();
			}
	}
	if (e->has_fanout)
		return setint(fe, sk, SOL_PACKET, PACKET_FANOUT, (int)e->fanout, "PACKET_FANOUT");
	return 0;
}

static int packet_open(struct restore_ctx *ctx, size_t pos)
{
	const FileEntry *fe = ctx->files->idx.by_id[pos];
	const PacketSkEntry *e = fe->packetsk;
	_cleanup_close_ int sk = -1;
	int err;

	/*
	 * Bound sockets get their protocol from bind(): none until then, so
	 * nothing queues. So do sockets with rings, which bind() to the
	 * protocol alone when they were not bound.
	 */
	sk = socket(AF_PACKET, (int)e->type | SOCK_CLOEXEC | (int)(e->flags & O_NONBLOCK),
		    e->has_ifindex || has_rings(e) ? 0 : htons((uint16_t)e->protocol));
	if (sk < 0) {
		pr_perror("file %u: socket(AF_PACKET, %u, %#x)", fe->id, e->type, e->protocol);
		return neg_errno();
	}
	err = set_opts(fe, sk, e);
	/* before the filter, which could drop the frames that put a ring's position back */
	if (!err)
		err = pk_rings_restore(fe, sk, e);
	if (!err)
		err = sk_restore_filter(sk, &e->filter, false, fe->id);
	if (!err)
		err = bind_it(fe, sk, e);
	if (!err)
		err = join(fe, sk, e);
	if (!err && e->lock_filter)
		err = setint(fe, sk, SOL_SOCKET, SO_LOCK_FILTER, 1, "SO_LOCK_FILTER");
	return err ? err : TAKE_FD(sk);
}

/* A mapping of the rings: the socket itself, which the restorer maps again. */
static int packet_open_mapped(struct restore_ctx *ctx, size_t pos, int flags)
{
	const struct rst_files *f = ctx->files;
	int fd;

	(void)flags;
	if (f->fds[pos] < 0 || !has_rings(f->idx.by_id[pos]->packetsk)) {
		pr_err("files.img: file %u: a packet socket without rings backs a mapping\n",
		       f->idx.by_id[pos]->id);
		return -EINVAL;
	}
	fd = fcntl(f->fds[pos], F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? neg_errno() : fd;
}

const struct file_kind packet_kind = {
	.name = "packet",
	.match = packet_match,
	.dump = packet_dump,
	.types = { FILE_TYPE__FILE_PACKETSK },
	.in_flight = true,
	.check = packet_check,
	.open = packet_open,
	.open_mapped = packet_open_mapped,
};
