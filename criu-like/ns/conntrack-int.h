/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_NS_CONNTRACK_INT_H
#define CRIU_LIKE_NS_CONNTRACK_INT_H

/* conntrack.c's encoding of one entry, for test-conntrack.c: no kernel involved. */
#include <stdbool.h>
#include <stdint.h>

#include "conntrack.pb-c.h"

struct nf_conntrack;

/* An image entry and the memory it points to. */
struct ct_entry_buf {
	ConntrackEntry e;
	CtTupleEntry orig, reply;
	uint8_t addrs[2][32]; /* per direction: source then destination address */
	uint8_t labels[16]; /* 128 connlabel bits */
};

/* @ct into @b (pointing into @b itself). 0, or -EINVAL / -EPROTONOSUPPORT. */
int ct_entry_from(const struct nf_conntrack *ct, struct ct_entry_buf *b);
/* A new conntrack object to create for @e (nfct_destroy() it); NULL, errno. */
struct nf_conntrack *ct_entry_to(const ConntrackEntry *e);
/* @which IPS_SRC_NAT or IPS_DST_NAT done on @e: the address and port it translated to. */
bool ct_nat_of(const ConntrackEntry *e, int which, const uint8_t **addr, uint16_t *port);

#endif
