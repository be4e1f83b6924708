// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like page-server (Documentation/page-server.md): listen, accept one
 * connection, write the pagemap and pages images it sends into -D, exit.
 * Every message is checked (ps-proto.c) before it is acted upon; an image is
 * written under a temporary name (".NAME.part") and renamed once complete;
 * a session that ends without END (the peer died, a bad message) removes
 * every image it wrote.
 */
#define LOG_PREFIX "page-server: "

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "fault.h"
#include "image.h"
#include "log.h"
#include "notify.h"
#include "page-server.h"
#include "util.h"

struct srv {
	int dirfd;
	bool no_sync; /* a migration's images: read once and removed, not flushed */
	struct ps_conn *c;
	struct ps_session s;
	/* the open pages image */
	struct cr_img *img;
	int img_fd, rd_fd;
	const uint8_t *map; /* its data, read-only, for the checksums */
	uint32_t *runs, *crcs;
	uint32_t r; /* checksum position: run r, byte done of it */
	uint64_t done, crc_off, zapped;
	char tmp[PS_NAME_MAX + 16], name[PS_NAME_MAX + 1];
	/* every image this session completed, removed if it fails */
	char **written;
	size_t nr_written;
};

static int send_reply(struct srv *sv, uint16_t cmd, int64_t status, const void *payload, size_t len)
{
	struct ps_hdr h = { .magic = PS_MAGIC,
			    .cmd = PS_REPLY,
			    .id = cmd,
			    .len = (uint32_t)len,
			    .arg = (uint64_t)status };
	_cleanup_free_ char *buf = malloc(sizeof(h) + len);

	if (!buf)
		return -ENOMEM;
	/* one send: the peer gets the reason whole even if the connection is reset after it */
	ps_hdr_pack(&h);
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), payload, len);
	return ps_send(sv->c, buf, sizeof(h) + len, "replying");
}

/* Tell the client why the session ends (best effort: it may be gone). */
static void send_error(struct srv *sv, uint16_t cmd, int err, const char *why)
{
	if (!sv->c->broken)
		send_reply(sv, cmd, err, why, min(strlen(why), (size_t)PS_MSG_MAX));
}

static int note_written(struct srv *sv, const char *name)
{
	char **w = realloc(sv->written, (sv->nr_written + 1) * sizeof(*w));

	if (!w)
		return -ENOMEM;
	sv->written = w;
	w[sv->nr_written] = strdup(name);
	if (!w[sv->nr_written])
		return -ENOMEM;
	sv->nr_written++;
	return 0;
}

static void close_pages(struct srv *sv)
{
	if (sv->map)
		munmap((void *)sv->map, sv->s.total);
	sv->map = NULL;
	if (sv->rd_fd >= 0)
		close(sv->rd_fd);
	sv->rd_fd = -1;
	if (sv->img)
		img_close(sv->img);
	sv->img = NULL;
	free(sv->runs);
	free(sv->crcs);
	sv->runs = sv->crcs = NULL;
}

/* A failed session: nothing it wrote stays. */
static void discard(struct srv *sv)
{
	size_t i;

	if (sv->img) {
		close_pages(sv);
		unlinkat(sv->dirfd, sv->tmp, 0);
	}
	for (i = 0; i < sv->nr_written; i++) {
		if (unlinkat(sv->dirfd, sv->written[i], 0) && errno != ENOENT)
			pr_perror("cannot remove %s of the failed session", sv->written[i]);
		free(sv->written[i]);
	}
	if (sv->nr_written)
		pr_err("removed the %zu image%s of the failed session\n", sv->nr_written,
		       sv->nr_written == 1 ? "" : "s");
	free(sv->written);
	sv->written = NULL;
	sv->nr_written = 0;
}

static int do_open(struct srv *sv, const struct ps_hdr *h)
{
	const struct cr_img_desc *d = img_desc(CR_IMG_PAGES);
	char why[160];
	int err;

	snprintf(sv->name, sizeof(sv->name), d->pattern, h->id);
	snprintf(sv->tmp, sizeof(sv->tmp), ".%s.part", sv->name);
	sv->runs = malloc(h->len + sizeof(uint32_t));
	sv->crcs = calloc(sv->s.nr_runs + 1, sizeof(uint32_t));
	if (!sv->runs || !sv->crcs)
		return -ENOMEM;
	err = ps_recv(sv->c, sv->runs, h->len, "receiving the runs of a pages image");
	if (err)
		return err;
	err = ps_check_runs(sv->runs, sv->s.nr_runs, sv->s.total, why, sizeof(why));
	if (err) {
		pr_err("%s: refused %s: %s\n", sv->c->peer, sv->name, why);
		send_error(sv, PS_OPEN, err, why);
		return err;
	}
	sv->r = 0;
	sv->done = sv->crc_off = sv->zapped = 0;
	sv->img = img_open_name(sv->dirfd, sv->tmp, d, IMG_WRITE);
	if (!sv->img)
		return neg_errno();
	sv->img_fd = img_raw_fd(sv->img);
	sv->rd_fd = openat(sv->dirfd, sv->tmp, O_RDONLY | O_CLOEXEC);
	if (sv->rd_fd < 0) {
		pr_perror("cannot read back %s", sv->tmp);
		return neg_errno();
	}
	if (sv->s.total) {
		void *m = mmap(NULL, sv->s.total, PROT_READ, MAP_SHARED, sv->rd_fd,
			       IMG_RAW_DATA_OFF);

		if (m == MAP_FAILED) {
			pr_perror("cannot map %s", sv->tmp);
			return neg_errno();
		}
		sv->map = m;
		madvise(m, sv->s.total, MADV_SEQUENTIAL);
	}
	pr_debug("receiving %s: %u runs, %llu bytes\n", sv->name, sv->s.nr_runs,
		 (unsigned long long)sv->s.total);
	return 0;
}

/* The crc32c of each run, over what landed in the image, up to @end. */
static void crc_upto(struct srv *sv, uint64_t end)
{
	while (sv->crc_off < end) {
		uint64_t run_len = (uint64_t)le32toh(sv->runs[sv->r]) * PAGE_SIZE;
		size_t n = (size_t)min(end - sv->crc_off, run_len - sv->done);

		sv->crcs[sv->r] = crc32c(sv->crcs[sv->r], sv->map + sv->crc_off, n);
		sv->crc_off += n, sv->done += n;
		if (sv->done == run_len)
			sv->r++, sv->done = 0;
	}
	/* every 32 MiB, the page tables of what is checksummed go; the page cache stays */
	end &= PAGE_MASK;
	if (end - sv->zapped >= (32ULL << 20)) {
		madvise((void *)(sv->map + sv->zapped), end - sv->zapped, MADV_DONTNEED);
		sv->zapped = end;
	}
}

static int do_data(struct srv *sv, const struct ps_hdr *h)
{
	int err = ps_recv_file(sv->c, sv->img_fd, h->len, "receiving pages");

	if (err)
		return err;
	crc_upto(sv, sv->s.got);
	/* CRIU_LIKE_FAULT_STEP=N: the server dies at its N-th message of pages (tests) */
	fault_kill_point();
	return 0;
}

static int do_close(struct srv *sv)
{
	uint64_t size = IMG_RAW_DATA_OFF + sv->s.total;
	uint32_t i;
	int err;

	if (sv->map)
		munmap((void *)sv->map, sv->s.total);
	sv->map = NULL;
	err = img_close(sv->img);
	sv->img = NULL;
	if (!err && renameat(sv->dirfd, sv->tmp, sv->dirfd, sv->name))
		err = neg_errno();
	if (err) {
		pr_errno(err, "cannot complete %s", sv->name);
		unlinkat(sv->dirfd, sv->tmp, 0);
		send_error(sv, PS_CLOSE, err, "the page server could not write the image");
		return err;
	}
	err = note_written(sv, sv->name);
	for (i = 0; i < sv->s.nr_runs; i++)
		sv->crcs[i] = htole32(sv->crcs[i]);
	if (!err)
		err = send_reply(sv, PS_CLOSE, (int64_t)size, sv->crcs,
				 sv->s.nr_runs * sizeof(uint32_t));
	pr_info("%s: %llu bytes in %u runs\n", sv->name, (unsigned long long)sv->s.total,
		sv->s.nr_runs);
	close_pages(sv);
	return err;
}

/* A pagemap image: written, then read back whole (records and trailer) before it is named. */
static int do_file(struct srv *sv, const struct ps_hdr *h)
{
	const struct cr_img_desc *d;
	ProtobufCMessage **recs = NULL;
	struct cr_img *img;
	size_t nrecs = 0;
	char why[160];
	int fd, err;

	err = ps_recv(sv->c, sv->name, h->id, "receiving a file name");
	if (err)
		return err;
	sv->name[h->id] = '\0';
	if (memchr(sv->name, '\0', h->id) || ps_check_name(sv->name, h->id)) {
		snprintf(why, sizeof(why), "file name '%.*s' is not a pagemap image's", (int)h->id,
			 sv->name);
		pr_err("%s: refused: %s\n", sv->c->peer, why);
		send_error(sv, PS_FILE, -EINVAL, why);
		return -EINVAL;
	}
	d = img_desc(strncmp(sv->name, "pagemap-shmem-", 14) ? CR_IMG_PAGEMAP
							     : CR_IMG_SHMEM_PAGEMAP);
	snprintf(sv->tmp, sizeof(sv->tmp), ".%s.part", sv->name);
	fd = openat(sv->dirfd, sv->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_perror("cannot create %s", sv->tmp);
		return neg_errno();
	}
	err = ps_recv_file(sv->c, fd, h->arg, "receiving a pagemap image");
	close(fd);
	if (!err) {
		img = img_open_name(sv->dirfd, sv->tmp, d, IMG_READ);
		err = img ? img_read_all(img, &recs, &nrecs) : neg_errno();
		img_free_records(recs, nrecs);
		img_close(img);
		if (err) {
			snprintf(why, sizeof(why), "%s is not a valid %s image", sv->name, d->name);
			pr_err("%s: refused: %s\n", sv->c->peer, why);
			send_error(sv, PS_FILE, err, why);
		}
	}
	if (!err && renameat(sv->dirfd, sv->tmp, sv->dirfd, sv->name)) {
		err = neg_errno();
		pr_perror("cannot rename %s", sv->tmp);
	}
	if (err) {
		unlinkat(sv->dirfd, sv->tmp, 0);
		return err;
	}
	err = note_written(sv, sv->name);
	return err ? err : send_reply(sv, PS_FILE, 0, NULL, 0);
}

static int serve(struct srv *sv)
{
	struct ps_hdr h;
	char why[200];
	int err;

	for (;;) {
		err = ps_recv(sv->c, &h, sizeof(h), "waiting for the next message");
		if (err) {
			pr_err("%s: the session ended before the dump completed it\n", sv->c->peer);
			return err;
		}
		ps_hdr_unpack(&h);
		err = ps_session_check(&sv->s, &h, why, sizeof(why));
		if (err) {
			pr_err("%s: refused a message: %s\n", sv->c->peer, why);
			send_error(sv, h.cmd, err, why);
			return err;
		}
		switch (h.cmd) {
		case PS_HELLO:
			err = send_reply(sv, PS_HELLO, 0, NULL, 0);
			break;
		case PS_OPEN:
			err = do_open(sv, &h);
			break;
		case PS_DATA:
			err = do_data(sv, &h);
			break;
		case PS_CLOSE:
			err = do_close(sv);
			break;
		case PS_FILE:
			err = do_file(sv, &h);
			break;
		case PS_END:
			err = sv->no_sync ? 0 : img_dir_sync(sv->dirfd);
			if (err) {
				send_error(sv, PS_END, err, "the page server could not flush");
				return err;
			}
			return send_reply(sv, PS_END, 0, NULL, 0);
		}
		if (err)
			return err;
	}
}

static int write_pidfile(const char *path, pid_t pid)
{
	char buf[32];
	int fd, n, err = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	n = snprintf(buf, sizeof(buf), "%d", pid);
	if (fd < 0 || write_all(fd, buf, (size_t)n))
		err = neg_errno();
	if (fd >= 0)
		close(fd);
	if (err)
		pr_errno(err, "cannot write the pid file %s", path);
	return err;
}

int ps_listen(const struct cr_options *o, char *where, size_t where_len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ports[16], host[64] = "?", serv[16] = "?";
	int fd, one = 1, err;

	snprintf(ports, sizeof(ports), "%d", o->port);
	err = getaddrinfo(o->address, ports, &hints, &res);
	if (err) {
		pr_err("cannot resolve --address %s: %s\n", o->address ? o->address : "(any)",
		       gai_strerror(err));
		return -EINVAL;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 1)) {
		err = neg_errno();
		pr_perror("cannot listen on %s port %d", o->address ? o->address : "(any)",
			  o->port);
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return err;
	}
	freeaddrinfo(res);
	if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv, sizeof(serv),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(where, where_len, "%s:%s", host, serv);
	return fd;
}

/* --daemon: the parent writes the pid file and returns; the child goes on. */
static int go_background(const struct cr_options *o)
{
	pid_t pid = fork();
	int null;

	if (pid < 0)
		return neg_errno();
	if (pid > 0)
		_exit(o->pidfile && write_pidfile(o->pidfile, pid) ? 1 : 0);
	setsid();
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (log_get_fd() != STDERR_FILENO)
			dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	return 0;
}

/* The parent link of --prev-images-dir, relative to -D as in a dump. */
static int link_parent(int dirfd, const struct cr_options *o)
{
	if (!o->prev_images_dir)
		return 0;
	if (unlinkat(dirfd, "parent", 0) && errno != ENOENT) {
		pr_perror("cannot replace %s/parent", o->images_dir);
		return neg_errno();
	}
	if (symlinkat(o->prev_images_dir, dirfd, "parent")) {
		pr_perror("cannot link %s/parent to %s", o->images_dir, o->prev_images_dir);
		return neg_errno();
	}
	return 0;
}

int ps_accept(int lfd, struct ps_conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[64] = "?", serv[16] = "?";
	int one = 1;

	do
		c->fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	while (c->fd < 0 && errno == EINTR);
	if (c->fd < 0) {
		pr_perror("cannot accept a connection");
		return neg_errno();
	}
	getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv, sizeof(serv),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(c->peer, sizeof(c->peer), "client %s:%s", host, serv);
	tcp_set_liveness(c->fd, PS_LINK_TIMEOUT_S);
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pr_info("accepted a connection from %s\n", c->peer + 7);
	return 0;
}

int cr_page_server(const struct cr_options *o)
{
	struct srv sv = { .dirfd = -1, .rd_fd = -1, .no_sync = o->no_sync };
	char where[96];
	int lfd, err;
	char ready = 0;

	signal(SIGPIPE, SIG_IGN);
	sv.dirfd = img_dir_open(o->images_dir, true);
	if (sv.dirfd < 0)
		return sv.dirfd;
	/* a lazy dump's images: only that dump fills their holes (it serves them itself) */
	err = o->lazy_pages ? img_lazy_refuse_dir("page-server", sv.dirfd, o->images_dir, NULL)
			    : link_parent(sv.dirfd, o);
	if (err) {
		close(sv.dirfd);
		return err;
	}
	/* a migration's destination listens itself, to tell the source the port (mig-dst.c) */
	if (o->ps_sock_fd >= 0) {
		/* RPC ps.fd: a connection the client made, served as accepted */
		lfd = -1;
		snprintf(where, sizeof(where), "the connected fd %d", o->ps_sock_fd);
	} else if (o->ps_listen_fd >= 0) {
		lfd = o->ps_listen_fd;
		snprintf(where, sizeof(where), "the migration's port");
	} else {
		lfd = ps_listen(o, where, sizeof(where));
	}
	if (lfd < 0 && o->ps_sock_fd < 0) {
		close(sv.dirfd);
		return lfd;
	}
	pr_info("listening on %s, images %s %s\n", where, o->lazy_pages ? "served from" : "into",
		o->images_dir);
	err = o->restore_detached ? go_background(o)
				  : (o->pidfile ? write_pidfile(o->pidfile, getpid()) : 0);
	/* CRIU's status-ready hook, then --status-fd: one byte once connections are accepted */
	if (!err)
		err = cr_notify(o, CR_ACT_STATUS_READY, 0, -1);
	if (!err && o->status_fd >= 0) {
		if (write(o->status_fd, &ready, 1) != 1)
			pr_perror("cannot write to --status-fd %d", o->status_fd);
		close(o->status_fd);
	}
	sv.c = calloc(1, sizeof(*sv.c));
	if (!err && !sv.c)
		err = -ENOMEM;
	if (!err) {
		sv.c->fd = sv.c->pipe[0] = sv.c->pipe[1] = -1;
		if (lfd >= 0) {
			err = ps_accept(lfd, sv.c);
		} else {
			sv.c->fd = o->ps_sock_fd;
			snprintf(sv.c->peer, sizeof(sv.c->peer), "client on fd %d", o->ps_sock_fd);
			tcp_set_liveness(sv.c->fd, PS_LINK_TIMEOUT_S);
		}
	}
	if (lfd >= 0)
		close(lfd);
	if (!err && !o->tls) {
		if (pipe2(sv.c->pipe, O_CLOEXEC))
			err = neg_errno();
		else
			fcntl(sv.c->pipe[1], F_SETPIPE_SZ, 1 << 20);
	}
	if (!err && o->tls)
		err = ps_tls_server(sv.c, o);
	if (!err && o->lazy_pages) {
		/* serving the directory to a lazy-pages daemon: nothing is written */
		err = ps_serve_lazy(sv.c, sv.dirfd, NULL);
		ps_conn_close(sv.c);
		close(sv.dirfd);
		return err < 0 ? err : 0;
	}
	if (!err)
		err = serve(&sv);
	if (err)
		discard(&sv);
	close_pages(&sv);
	while (sv.nr_written)
		free(sv.written[--sv.nr_written]);
	free(sv.written);
	ps_conn_close(sv.c);
	close(sv.dirfd);
	if (err)
		pr_errno(err, "page server session failed; nothing it received was kept");
	else
		pr_info("session complete: images in %s\n", o->images_dir);
	return err;
}
