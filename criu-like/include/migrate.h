/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_MIGRATE_H
#define CRIU_LIKE_MIGRATE_H

/*
 * Live migration (Documentation/migration.md): `criu-like migrate --online`
 * on the source talks to `criu-like service --listen` on the destination
 * over one TCP control connection; the pages of every round go over the
 * page server protocol (page-server.h) to a page server the destination
 * starts for that round.
 *
 * Every control message is a 20-byte little-endian header, then @len bytes:
 *
 *   HELLO      src->dst  arg = MIG_PROTO_VERSION, payload: "key=value\n" lines
 *                        (version, need: the features the source needs)
 *   ROUND      src->dst  arg = round (1..), payload "pre" or "final"
 *                        -> OK arg = the port of this round's page server
 *   FILE       src->dst  arg = round, payload: name, NUL, the file's bytes
 *   ROUND_END  src->dst  arg = round  -> OK once the pages and files are in
 *   RESTORE    src->dst  payload: "key=value\n" lines (root, veth)
 *                        -> RESTORED: every task made, none running yet
 *   GO         src->dst  -> RUNNING arg = the restored root's pid
 *   DONE       src->dst  the source tree is gone: the images may go
 *
 * Any request may be answered by ERROR: arg = -errno, payload = the reason,
 * after which the destination ends the conversation and removes what it
 * received. A destination that refuses a HELLO answers REFUSE likewise.
 */
#include <stddef.h>
#include <stdint.h>

#include "options.h"

#define MIG_MAGIC 0x474d4c43u /* "CLMG" */
#define MIG_PROTO_VERSION 1
#define MIG_DEFAULT_PORT 27100
#define MIG_HDR_SIZE 20
#define MIG_PAYLOAD_MAX (256u << 20) /* a file of one round */
#define MIG_TEXT_MAX 4096 /* HELLO, RESTORE, an error's reason */
#define MIG_NAME_MAX 64
/* A peer that acknowledges nothing for this long is gone (tcp_set_liveness()). */
#define MIG_LINK_TIMEOUT_S 10

enum mig_cmd {
	MIG_HELLO = 1,
	MIG_ROUND,
	MIG_FILE,
	MIG_ROUND_END,
	MIG_RESTORE,
	MIG_GO,
	MIG_DONE,
	MIG_OK = 0x40,
	MIG_RESTORED,
	MIG_RUNNING,
	MIG_REFUSE,
	MIG_ERROR,
};

struct mig_hdr {
	uint32_t magic;
	uint16_t cmd;
	uint16_t flags; /* 0 */
	uint32_t len;
	int64_t arg;
} __attribute__((packed));

/* The features a source may need; the destination answers which it lacks. */
#define MIG_FEATURES "pages,files,restore,tcp-repair,netns,veth,announce,lazy"

/* mig-proto.c: pure checks (test/unit/test-migrate.c). */
/* Check a header (host order) received: magic, flags, a known command, its length bounds. */
int mig_hdr_check(const struct mig_hdr *h, char *why, size_t n);
/*
 * The value of @key in @text ("key=value\n" lines, @len bytes, not
 * NUL-terminated) into @val (@n bytes, NUL-terminated): 0, -ENOENT, or
 * -EINVAL for a value that does not fit.
 */
int mig_text_get(const char *text, size_t len, const char *key, char *val, size_t n);
/*
 * The destination's verdict on a HELLO: 0, or -EPROTONOSUPPORT (another
 * protocol), -EPROTO (another criu-like version: images may differ),
 * -EOPNOTSUPP (a feature @need lists that @have does not), with the reason.
 */
int mig_hello_check(int64_t proto, const char *text, size_t len, const char *version,
		    const char *have, char *why, size_t n);
/* A file name a source may send: plain image names only, no path, not pages. 0 or -EINVAL. */
int mig_name_check(const char *name, size_t len);

/* mig-proto.c: the transport (blocking, whole messages). 0 or -errno, logged. */
int mig_send(int fd, uint16_t cmd, int64_t arg, const void *payload, size_t len);
/* Receive a header (checked) and its payload into a malloc'ed buffer (*@payload, NUL-ended). */
int mig_recv(int fd, struct mig_hdr *h, char **payload);
/* Wait for @want; an ERROR or REFUSE becomes its -errno, its reason logged. */
int mig_expect(int fd, uint16_t want, int64_t *arg, const char *what);
const char *mig_cmd_name(uint16_t cmd);
/* ADDRESS[:PORT] or [ADDRESS6]:PORT (default MIG_DEFAULT_PORT): 0 or -EINVAL. */
int mig_endpoint(const char *s, char *host, size_t n, int *port);

/* mig-src.c: the command. */
int cr_migrate(const struct cr_options *o);
/* mig-dst.c: one migration received on @fd, a connection accepted by the service. */
int mig_serve(const struct cr_options *o, int fd);
/* mig-dst.c: the service's listener for --listen ADDR[:PORT]; a stale incoming dir removed. */
int mig_listen(const struct cr_options *o);

/*
 * mig-fwd.c: the packets the final dump's lock held (its holder in the tree's
 * namespace), sent to the container's links where the destination has them.
 * mig_fwd_prepare(): the links of the final round's images (@dfd), the packet
 * socket and the holder, while the destination restores (NULL: nothing will
 * be forwarded, logged); mig_fwd_send() after GO: how many went, or -errno
 * (logged).
 */
struct mig_fwd;
struct mig_fwd *mig_fwd_prepare(int dfd);
int mig_fwd_send(struct mig_fwd *f);
void mig_fwd_free(struct mig_fwd *f);
struct hold_pkt;
/*
 * The Ethernet frame of held packet @p (@data its bytes) to @dst from @src,
 * into @frame of @size bytes: its length, or 0 (too large, not IPv4 or IPv6).
 */
size_t mig_fwd_frame(uint8_t *frame, size_t size, const uint8_t dst[6], const uint8_t src[6],
		     const struct hold_pkt *p, const void *data);

/* net/announce.c: gratuitous ARP and unsolicited NA from every link of @pid's netns. */
int net_announce(pid_t pid);
/* The same in a child left running: its pid (for net_announce_wait()), or -errno. */
pid_t net_announce_start(pid_t pid);
/* Wait for @child of net_announce_start(@pid) (-errno: its error): 0, or -errno (logged). */
int net_announce_wait(pid_t pid, pid_t child);

#endif
