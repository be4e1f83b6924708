// SPDX-License-Identifier: GPL-2.0
/*
 * What the source's network lock held during the final freeze, forwarded to
 * the destination once GO is sent (Documentation/migration.md, "The
 * network"). The peers' packets that reached the source between its lock
 * and the destination's early announcement would otherwise die with the
 * source's holder, and each peer would wait for its retransmission timeout
 * (200 ms at least) before sending them again.
 *
 * The holder gives its copies (nfq_hold_give()); each goes out again as an
 * Ethernet frame to the container link's MAC address, on the bridge the
 * link's outside end was on here, from the bridge's own address (a peer's
 * address as the source would teach the switches the wrong port for it).
 * The switches send it where the early announcement moved that MAC: to the
 * destination, whose lock holds it until its tree runs, then lets it go in
 * order with the rest. Only veths on a bridge are forwarded; anything else
 * held is dropped, as before.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define LOG_PREFIX "migrate: "
#include "image.h"
#include "log.h"
#include "migrate.h"
#include "nfq-hold.h"
#include "ns.h"
#include "util.h"

#include "netns.pb-c.h"

#define FWD_LINKS_MAX 16

struct fwd_link {
	uint32_t ifindex; /* inside the tree's namespace */
	uint8_t mac[ETH_ALEN]; /* its address */
	int out; /* the bridge its outside end was on, here */
	uint8_t src[ETH_ALEN]; /* the bridge's address */
};

struct mig_fwd {
	int sk;
	struct fwd_link l[FWD_LINKS_MAX];
	size_t n;
	unsigned int lost;
	struct nfq_hold *h; /* the holder of the tree's namespace (not ours to stop) */
};

static int bridge_mac(int sk, const char *name, uint8_t mac[ETH_ALEN])
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(sk, SIOCGIFHWADDR, &ifr))
		return neg_errno();
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return 0;
}

/* The veths of netns-@id.img whose outside end was on a bridge of this namespace. */
static void fwd_links(struct mig_fwd *f, int dfd, uint32_t id)
{
	ProtobufCMessage *m = NULL;
	NetnsEntry *ne;
	size_t i;

	if (img_read_one(dfd, CR_IMG_NETNS, id, &m))
		return;
	ne = (NetnsEntry *)m;
	for (i = 0; i < ne->n_links && f->n < FWD_LINKS_MAX; i++) {
		const NetLinkEntry *l = ne->links[i];
		struct fwd_link *fl = &f->l[f->n];

		if (l->kind != NET_LINK_KIND__NET_LINK_VETH || !l->peer_master ||
		    !*l->peer_master || !l->has_address || l->address.len != ETH_ALEN)
			continue;
		fl->out = (int)if_nametoindex(l->peer_master);
		if (!fl->out || bridge_mac(f->sk, l->peer_master, fl->src))
			continue;
		fl->ifindex = l->ifindex;
		memcpy(fl->mac, l->address.data, ETH_ALEN);
		f->n++;
	}
	protobuf_c_message_free_unpacked(m, NULL);
}

size_t mig_fwd_frame(uint8_t *frame, size_t size, const uint8_t dst[6], const uint8_t src[6],
		     const struct hold_pkt *p, const void *data)
{
	struct ether_header *eh = (struct ether_header *)frame;
	size_t len = sizeof(*eh) + p->len;

	if (len > size || (p->proto != ETH_P_IP && p->proto != ETH_P_IPV6))
		return 0;
	memcpy(eh->ether_dhost, dst, ETH_ALEN);
	memcpy(eh->ether_shost, src, ETH_ALEN);
	eh->ether_type = htons(p->proto);
	memcpy(frame + sizeof(*eh), data, p->len);
	return len;
}

static int fwd_one(void *priv, const struct hold_pkt *p, const void *data)
{
	struct mig_fwd *f = priv;
	uint8_t frame[sizeof(struct ether_header) + 0x10000];
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = ETH_ALEN };
	const struct fwd_link *l = NULL;
	size_t i, len = 0;

	for (i = 0; i < f->n && !l; i++)
		if (f->l[i].ifindex == p->indev)
			l = &f->l[i];
	if (l)
		len = mig_fwd_frame(frame, sizeof(frame), l->mac, l->src, p, data);
	if (!len) {
		f->lost++;
		return -ENOENT;
	}
	to.sll_ifindex = l->out;
	to.sll_protocol = htons(p->proto);
	memcpy(to.sll_addr, l->mac, ETH_ALEN);
	if (sendto(f->sk, frame, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len) {
		f->lost++;
		return neg_errno();
	}
	return 0;
}

struct mig_fwd *mig_fwd_prepare(int dfd)
{
	struct mig_fwd *f = calloc(1, sizeof(*f));
	struct dirent *de;
	DIR *d;
	int saved;
	char tail;
	uint32_t id;

	if (!f)
		return NULL;
	f->sk = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (f->sk < 0) {
		pr_perror("no packet socket to forward what the source's lock held");
		free(f);
		return NULL;
	}
	d = fdopendir(dup(dfd));
	if (d)
		rewinddir(d); /* the offset is shared with @dfd, read to its end before */
	while (d && (de = readdir(d)))
		if (sscanf(de->d_name, "netns-%u.im%c", &id, &tail) == 2 && tail == 'g')
			fwd_links(f, dfd, id);
	if (d)
		closedir(d);
	/* the holder of the tree's namespace, started by this dump's lock */
	if (f->n && ns_net_tree_fd() >= 0 && !ns_net_enter_tree(&saved)) {
		f->h = nfq_hold_here(NULL, false);
		ns_net_leave_tree(saved);
	}
	if (!f->h)
		pr_debug("no packet holder of the tree's namespace to forward from (%zu links)\n",
			 f->n);
	return f;
}

int mig_fwd_send(struct mig_fwd *f)
{
	int n;

	if (!f)
		return 0;
	n = f->h ? nfq_hold_give(f->h, fwd_one, f) : 0;
	if (n < 0)
		pr_warn("the packets the source's lock held are lost: %s\n", strerror(-n));
	else
		pr_info("%d packets the source's lock held forwarded to the destination, %u "
			"lost\n",
			n, f->lost);
	return n;
}

void mig_fwd_free(struct mig_fwd *f)
{
	if (!f)
		return;
	close(f->sk);
	free(f);
}
