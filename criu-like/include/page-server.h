/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_PAGE_SERVER_H
#define CRIU_LIKE_PAGE_SERVER_H

/*
 * The page server (Documentation/page-server.md): `criu-like page-server`
 * receives the pagemap and pages images of one dump or pre-dump over TCP
 * (optionally TLS) and writes them into its directory; `dump --page-server`
 * sends them there instead of into -D. One connection per server, as CRIU.
 *
 * The wire format is criu-like's own. Every message is a 24-byte header,
 * little endian, then @len bytes of payload:
 *
 *   HELLO  arg = PS_VERSION                  -> REPLY
 *   OPEN   id = pages id, arg = data bytes,  payload: one le32 page count per run
 *   DATA   payload: the next bytes of the open pages image
 *   CLOSE  id = pages id, arg = data bytes   -> REPLY arg = file size,
 *                                               payload: one le32 crc32c per run
 *   FILE   id = name length, arg = file size, payload: name, then the file
 *                                            (a pagemap image)  -> REPLY
 *   END    the session is complete            -> REPLY (the server syncs, exits)
 *
 * A page server started with --lazy-pages serves its directory instead, to
 * `lazy-pages --page-server` (page-server-lazy.c, Documentation/lazy-pages.md):
 *
 *   LIST   payload: a directory (".", "parent", "parent/parent"...)
 *                                             -> REPLY payload: its image names, '\n' after each;
 *                                                arg = PS_LIST_FROM_TREE from a lazy dump
 *                                                (its holes are filled), else 0
 *   GET    payload: a path; flags PS_GET_HEAD: only the first 4 KiB
 *                                             -> REPLY arg = file size, payload: the file
 *   READ   id = bytes (<= PS_DATA_MAX), arg = file offset, payload: a path
 *                                             -> REPLY payload: the bytes
 *   DONE   the restore is complete: the source's copy of the tree is to end
 *                                             -> REPLY arg = 0 once it is killed
 *                                                (a plain server has none: 0)
 *
 * Paths are relative, without "..", of [A-Za-z0-9._/-] (ps_check_path()).
 *
 * REPLY: id = the command answered, arg = 0 or -errno (as s64), payload: on
 * an error, a message. The server sends an unsolicited error REPLY before it
 * closes on a bad message. Nothing is written under its final name before
 * it is complete; a session that does not END removes everything it wrote.
 */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"

#define PS_MAGIC 0x53504c43u /* "CLPS" */
#define PS_VERSION 1
/* A peer that acknowledges nothing for this long is gone (tcp_set_liveness()). */
#define PS_LINK_TIMEOUT_S 10

enum ps_cmd {
	PS_HELLO = 1,
	PS_OPEN = 2,
	PS_DATA = 3,
	PS_CLOSE = 4,
	PS_FILE = 5,
	PS_END = 6,
	PS_LIST = 7,
	PS_GET = 8,
	PS_READ = 9,
	PS_DONE = 10,
	PS_REPLY = 0x80,
};

struct ps_hdr {
	uint32_t magic;
	uint16_t cmd;
	uint16_t flags; /* 0 */
	uint32_t id;
	uint32_t len; /* payload bytes after the header */
	uint64_t arg;
} __attribute__((packed));

#define PS_GET_HEAD 1 /* GET: the raw image's header only */
/* LIST's answer from `dump --lazy-pages`: READs of its pages images fill their holes */
#define PS_LIST_FROM_TREE 1
#define PS_PATH_MAX 256
#define PS_LIST_MAX (1u << 20)

#define PS_HDR_SIZE 24
#define PS_DATA_MAX (16u << 20) /* one DATA message */
#define PS_RUNS_MAX (16u << 20) /* runs of one pages image */
#define PS_FILE_MAX (256u << 20) /* a pagemap image */
#define PS_NAME_MAX 64
#define PS_IMAGE_MAX (1ULL << 44) /* data of one pages image: 16 TiB */
#define PS_MSG_MAX 1024 /* the text of an error reply */

/* Byte order: the header travels little endian. */
void ps_hdr_pack(struct ps_hdr *h);
void ps_hdr_unpack(struct ps_hdr *h);

/* What the server has seen of a session: the checks of each next message. */
struct ps_session {
	bool hello; /* HELLO received */
	bool open; /* a pages image is open */
	bool ended;
	uint32_t id; /* the open pages image */
	uint64_t total, got; /* its announced and received data bytes */
	uint32_t nr_runs;
};

/*
 * Check the header @h (unpacked) received from the client against @s and
 * advance @s: 0, or -EPROTO (bad magic, unknown command, out of order) /
 * -EMSGSIZE (a length out of bounds) / -EINVAL (an argument out of range),
 * with the reason written into @why. OPEN's runs are checked by
 * ps_check_runs() once read; FILE's name by ps_check_name().
 */
int ps_session_check(struct ps_session *s, const struct ps_hdr *h, char *why, size_t n);
/* OPEN's payload: @nr run page counts (le32, as received), none 0, summing to @total bytes. */
int ps_check_runs(const uint32_t *runs, uint32_t nr, uint64_t total, char *why, size_t n);
/*
 * FILE's name (@len bytes, not NUL-terminated): pagemap-N.img or
 * pagemap-shmem-N.img, N decimal without leading zeros: nothing else can be
 * written by a peer. 0 or -EINVAL.
 */
int ps_check_name(const char *name, size_t len);
/* A path of LIST, GET, READ (@len bytes): relative, no "..", plain characters. 0 or -EINVAL. */
int ps_check_path(const char *path, size_t len);
/* A reply header @h (unpacked) to @cmd: 0 or -EPROTO with @why. */
int ps_check_reply(const struct ps_hdr *h, uint16_t cmd, char *why, size_t n);

/* ---- transport: TCP, or TLS over it ---- */
struct ps_conn {
	int fd;
	void *tls; /* gnutls_session_t, or NULL */
	int pipe[2]; /* for splice on the receiving side */
	char peer[96]; /* "ADDR:PORT", for messages */
	bool broken; /* an I/O error happened: send nothing more */
	/* the dumping side ignores SIGPIPE (splice and sendfile raise it) while connected */
	bool sigpipe_saved;
	struct sigaction old_sigpipe;
};

/* Full send / receive: 0 or -errno (-ECONNRESET for an end of stream), logged naming the peer. */
int ps_send(struct ps_conn *c, const void *buf, size_t len, const char *what);
int ps_recv(struct ps_conn *c, void *buf, size_t len, const char *what);
/* @len bytes from the pipe @rd into the connection (splice, or read and send with TLS). */
int ps_send_pipe(struct ps_conn *c, int rd, size_t len, const char *what);
/* @len bytes of file @fd at *@pos into the connection (sendfile, or pread and send). */
int ps_send_file(struct ps_conn *c, int fd, off_t *pos, size_t len, const char *what);
/* @len bytes from the connection into @fd at its position (splice through c->pipe). */
int ps_recv_file(struct ps_conn *c, int fd, size_t len, const char *what);
void ps_conn_close(struct ps_conn *c);

/* tls.c: CRIU's --tls options: the handshake on c->fd, both ends authenticated. */
int ps_tls_client(struct ps_conn *c, const struct cr_options *o, const char *host);
int ps_tls_server(struct ps_conn *c, const struct cr_options *o);
/* As send() and recv(), but -errno on failure (errno set too). */
ssize_t ps_tls_send(void *tls, const void *buf, size_t len);
ssize_t ps_tls_recv(void *tls, void *buf, size_t len);
void ps_tls_close(void *tls);

/* ---- the dumping side (ps-client.c) ---- */

/* Connect to --address/--port (TLS with --tls) and say HELLO: a connection or NULL (logged). */
struct ps_conn *ps_connect(const struct cr_options *o);
/* Open pages-@id.img on the server: @nr runs of @pages[i] pages, @total bytes in all. */
int ps_pages_open(struct ps_conn *c, uint32_t id, const uint32_t *pages, uint32_t nr,
		  uint64_t total);
/* The header of a DATA message of @len bytes (the data follows, sent by the caller). */
int ps_data_hdr(struct ps_conn *c, size_t len);
/* Complete pages-@id.img: its crc32c per run into @crcs (@nr of them), its file size. */
int ps_pages_close(struct ps_conn *c, uint32_t id, uint64_t total, uint32_t *crcs, uint32_t nr,
		   uint64_t *file_size);
/* Send the file @name of @dirfd (a pagemap image) to the server under the same name. */
int ps_send_image(struct ps_conn *c, int dirfd, const char *name);
/* The session is complete: the server syncs its directory and says so. */
int ps_finish(struct ps_conn *c);
/* After a failed send: the error the server gave, if it sent one (logged). */
void ps_read_error(struct ps_conn *c);

/* Send the header of a message (ps-client.c). */
int ps_send_hdr(struct ps_conn *c, uint16_t cmd, uint16_t flags, uint32_t id, uint32_t len,
		uint64_t arg, const char *what);
/* The reply to @cmd: 0 with its header in @h (payload still to read), or the error (logged). */
int ps_get_reply(struct ps_conn *c, uint16_t cmd, struct ps_hdr *h, const char *what);

/* ---- the receiving side (page-server.c) ---- */
int cr_page_server(const struct cr_options *o);
/*
 * A socket listening at --address/--port (port 0: an ephemeral one), its
 * "ADDR:PORT" in @where; the fd or -errno (logged). cr_page_server() takes it
 * as o->ps_listen_fd (the RPC's PAGE_SERVER learns the port first).
 */
int ps_listen(const struct cr_options *o, char *where, size_t where_len);
/*
 * What `dump --lazy-pages` adds to the serving of its directory (lazy-dump.c):
 * @read fills in the bytes of a READ of @path at file offset @off that are
 * not in the file (its holes: pages left in the frozen tasks), over what
 * the file gave; @done ends the tree (DONE), 0 once it can never run again.
 */
struct ps_lazy_src {
	int (*read)(void *priv, const char *path, uint64_t off, void *buf, size_t len);
	int (*done)(void *priv);
	void *priv;
};
/*
 * page-server-lazy.c: --lazy-pages, serve the directory @dirfd to one
 * lazy-pages daemon; @src: a lazy dump's tasks (NULL: the files alone).
 * 1 once the daemon ended the session (END), 0 when it closed the connection.
 */
int ps_serve_lazy(struct ps_conn *c, int dirfd, const struct ps_lazy_src *src);
/* page-server.c: accept one connection on @lfd into @c (its peer named, its liveness bounded). */
int ps_accept(int lfd, struct ps_conn *c);

#endif
