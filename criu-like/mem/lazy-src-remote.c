// SPDX-License-Identifier: GPL-2.0
/*
 * Pages from a remote `page-server --lazy-pages` (`lazy-pages --page-server
 * --address A --port P`, Documentation/lazy-pages.md). At the start the
 * daemon mirrors what it needs of the server's directory into a private
 * temporary one (WORKDIR/lazy-pages-mirror.XXXXXX, removed at the end): the inventory, pagemap and mm images whole, of each pages
 * image its header and size only (a sparse file), every parent level of the
 * chain the same way. The local source (lazy-src.c) then resolves each
 * task's pages on that mirror as on real images, and only the page data is
 * read from the server (READ), range by range, as faults and the background
 * copy need it.
 */
#define LOG_PREFIX "lazy-src: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "image.h"
#include "lazy.h"
#include "log.h"
#include "page-server.h"
#include "restore-mem.h"
#include "util.h"

#include "inventory.pb-c.h"

#define LAZY_REMOTE_IO_S 30 /* the longest the server may take to answer (SO_RCVTIMEO) */

#define MIRROR_DEPTH 64
/* How long the outcome of a lazy dump's DONE is asked again when its answer did not come. */
#define LAZY_OUTCOME_S 30

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* CRIU_LIKE_TEST_LAZY_DROP=@what: the test of a message lost, the first one (lazy-dump.sh). */
static bool test_drop(const char *what)
{
	static bool dropped;
	const char *e = getenv("CRIU_LIKE_TEST_LAZY_DROP");

	if (dropped || !e || strcmp(e, what))
		return false;
	dropped = true;
	return true;
}

struct remote_src {
	const struct cr_options *o;
	struct ps_conn *c;
	bool from_tree; /* LIST of "." said PS_LIST_FROM_TREE: a lazy dump fills its holes */
	struct lazy_src local; /* on the mirror */
	int dirfd;
	char dir[4096]; /* the mirror, in the work directory */
};

/* A request with @path as payload; 0 and the reply's header in @h, its payload to be read. */
static int request(struct ps_conn *c, uint16_t cmd, uint16_t flags, uint32_t id, uint64_t arg,
		   const char *path, struct ps_hdr *h)
{
	size_t len = strlen(path);
	int err = ps_send_hdr(c, cmd, flags, id, (uint32_t)len, arg, path);

	if (!err)
		err = ps_send(c, path, len, path);
	if (!err)
		err = ps_get_reply(c, cmd, h, path);
	return err;
}

/* GET @path (its header only when @head) into the mirror, the whole size kept (sparse). */
static int fetch(struct remote_src *r, const char *path, bool head)
{
	struct ps_hdr h;
	_cleanup_free_ char *buf = NULL;
	int fd, err;

	err = request(r->c, PS_GET, head ? PS_GET_HEAD : 0, 0, 0, path, &h);
	if (err)
		return err;
	buf = malloc(h.len + 1);
	if (!buf)
		return -ENOMEM;
	err = ps_recv(r->c, buf, h.len, path);
	if (err)
		return err;
	fd = openat(r->dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return neg_errno();
	if (write(fd, buf, h.len) != (ssize_t)h.len || ftruncate(fd, (off_t)h.arg))
		err = neg_errno() ?: -EIO;
	close(fd);
	return err;
}

/* Mirror the directory @path of the server (".", "parent", ...), recursively through parent. */
static int mirror(struct remote_src *r, const char *path, int depth)
{
	_cleanup_free_ char *list = NULL;
	char sub[PS_PATH_MAX + 1];
	struct ps_hdr h;
	int err;

	if (depth > MIRROR_DEPTH)
		return -ELOOP;
	err = request(r->c, PS_LIST, 0, 0, 0, path, &h);
	list = err ? NULL : malloc(h.len + 1);
	if (!err && !list)
		err = -ENOMEM;
	if (!err)
		err = ps_recv(r->c, list, h.len, "listing");
	if (err)
		return err;
	if (!depth)
		r->from_tree = h.arg & PS_LIST_FROM_TREE;
	list[h.len] = '\0';
	for (char *save = NULL, *n = strtok_r(list, "\n", &save); n && !err;
	     n = strtok_r(NULL, "\n", &save)) {
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", strcmp(path, ".") ? path : "",
				     strcmp(path, ".") ? "/" : "", n) >= sizeof(sub))
			return -ENAMETOOLONG;
		if (!strcmp(n, "parent")) {
			if (mkdirat(r->dirfd, sub, 0700))
				return neg_errno();
			err = mirror(r, sub, depth + 1);
		} else {
			err = fetch(r, sub, !strncmp(n, "pages-", 6));
		}
	}
	return err;
}

static int remote_open_task(struct lazy_src *s, pid_t pid, struct lazy_ranges *out)
{
	struct remote_src *r = s->priv;

	return r->local.ops->open_task(&r->local, pid, out);
}

/* The mirror holds the task's mm image: its stretches to collapse are the local source's. */
static int remote_thp_chunks(struct lazy_src *s, pid_t pid, uint64_t **out, size_t *n)
{
	struct remote_src *r = s->priv;

	return r->local.ops->thp_chunks(&r->local, pid, out, n);
}

static int remote_read(struct lazy_src *s, pid_t pid, uint32_t level, uint64_t off, void *buf,
		       size_t len)
{
	struct remote_src *r = s->priv;
	char path[PS_PATH_MAX + 1];
	const char *dir, *name;
	struct ps_hdr h;
	int err;

	err = lazy_src_local_where(&r->local, pid, level, &dir, &name);
	if (err)
		return err;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	while (len && !err) {
		size_t n = min(len, (size_t)PS_DATA_MAX);

		err = request(r->c, PS_READ, 0, (uint32_t)n, IMG_RAW_DATA_OFF + off, path, &h);
		if (!err && h.len != n)
			err = -EPROTO;
		if (!err)
			err = ps_recv(r->c, buf, n, "reading pages");
		if (err == -EAGAIN) {
			/* SO_RCVTIMEO: a server that stalls must not leave the tree waiting */
			pr_err("the page server %s sent no pages for %d s: giving up\n", r->c->peer,
			       LAZY_REMOTE_IO_S);
			err = -ETIMEDOUT;
		}
		buf = (char *)buf + n;
		off += n;
		len -= n;
	}
	return err;
}

static void rm_mirror(int dirfd, const char *path, int depth)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (e->d_type == DT_DIR && depth < MIRROR_DEPTH + 1)
			rm_mirror(fd, e->d_name, depth + 1);
		unlinkat(fd, e->d_name, e->d_type == DT_DIR ? AT_REMOVEDIR : 0);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
}

static void remote_fini(struct lazy_src *s)
{
	struct remote_src *r = s->priv;

	if (!r)
		return;
	if (r->local.ops)
		r->local.ops->fini(&r->local);
	if (r->c) {
		struct ps_hdr h;

		if (!r->c->broken && !ps_send_hdr(r->c, PS_END, 0, 0, 0, 0, "ending the session"))
			ps_get_reply(r->c, PS_END, &h, "ending the session");
		ps_conn_close(r->c);
	}
	if (r->dirfd >= 0) {
		rm_mirror(r->dirfd, ".", 0);
		close(r->dirfd);
		rmdir(r->dir);
	}
	free(r);
	s->priv = NULL;
}

/*
 * Every exchange with the server bounded: a fault (or the outcome of a
 * restore) waits on it. A link that goes silent is given up after half the
 * time the server gives it: a lazy dump resumes its tree only once it saw
 * the link fail, after the restored tree was killed here.
 */
static int bound_io(struct ps_conn *c)
{
	const struct timeval io_tmo = { .tv_sec = LAZY_REMOTE_IO_S };
	int err = 0;

	tcp_set_liveness(c->fd, PS_LINK_TIMEOUT_S / 2);

	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &io_tmo, sizeof(io_tmo)) ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &io_tmo, sizeof(io_tmo))) {
		err = neg_errno();
		pr_errno(err, "%s: cannot bound its socket's waits", c->peer);
	}
	return err;
}

/* DONE on @c: 0 once the server's tree (a lazy dump's) is killed; its refusal; or an I/O error. */
static int ask_done(struct ps_conn *c)
{
	struct ps_hdr h;
	int err;

	/* the test of a DONE lost on the way (lazy-dump.sh): the connection drops instead */
	if (test_drop("done")) {
		shutdown(c->fd, SHUT_RDWR);
		c->broken = true;
		return -ECONNRESET;
	}
	err = ps_send_hdr(c, PS_DONE, 0, 0, 0, 0, "ending the source's tree");
	if (!err)
		err = ps_get_reply(c, PS_DONE, &h, "ending the source's tree");
	return err == -EAGAIN ? -ETIMEDOUT : err;
}

/*
 * DONE: the server's tree (a lazy dump's) is killed before it answers 0.
 * Without an answer (the link or the server went), the outcome is asked
 * again on new connections for LAZY_OUTCOME_S, the old one closed first (a
 * server still in that session sees it end): a lazy dump that killed its
 * tree without being heard leaves a keeper that answers 0 (lazy-dump.c);
 * one that resumed its tree answers nothing, and the restored tree is
 * killed once no answer came.
 */
static int remote_complete(struct lazy_src *s)
{
	struct remote_src *r = s->priv;
	uint64_t deadline = now_s() + LAZY_OUTCOME_S;
	char peer[sizeof(r->c->peer)];
	int err = ask_done(r->c);
	bool answered = !err || !r->c->broken;

	snprintf(peer, sizeof(peer), "%s", r->c->peer);
	while (!answered && now_s() < deadline) {
		pr_warn("no answer to DONE from %s (%s): asking it again\n", peer, strerror(-err));
		ps_conn_close(r->c);
		sleep(1);
		r->c = ps_connect(r->o);
		err = r->c ? bound_io(r->c) ?: ask_done(r->c) : -ECONNREFUSED;
		answered = r->c && (!err || !r->c->broken);
	}
	if (!err)
		pr_info("the page server %s ended its copy of the tree\n", peer);
	else
		pr_err("the page server %s did not say that its tree ended (%s)\n", peer,
		       strerror(-err));
	return err;
}

static int remote_hangup_fd(struct lazy_src *s)
{
	return ((struct remote_src *)s->priv)->c->fd;
}

static const struct lazy_src_ops remote_ops = {
	.name = "page server",
	.open_task = remote_open_task,
	.thp_chunks = remote_thp_chunks,
	.read = remote_read,
	.complete = remote_complete,
	.hangup_fd = remote_hangup_fd,
	.fini = remote_fini,
};

/*
 * The images mirrored are a lazy dump's (InventoryEntry.lazy_dump): their
 * holes are served only by that dump, which said so in its LIST, and its id
 * goes to the restore (the HELLO); a page server serving a copy of them
 * would send zeros for them.
 */
static int check_lazy_dump(struct remote_src *r, struct lazy_src *out)
{
	char who[sizeof(r->c->peer) + 16];
	InventoryEntry *inv = NULL;
	int err;

	if (img_read_one(r->dirfd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&inv))
		return 0; /* none: the local source says what is missing */
	snprintf(who, sizeof(who), "lazy-pages: %s", r->c->peer);
	err = r->from_tree
		      ? 0
		      : img_lazy_refuse(who, ".", inv,
					"that page server serves a copy of them, not the dump");
	if (!err && r->from_tree && img_lazy_dump(inv)) {
		out->from_lazy_dump = true;
		out->lazy_dump_id = inv->lazy_dump->id;
	}
	protobuf_c_message_free_unpacked(&inv->base, NULL);
	return err;
}

int lazy_src_remote(const struct cr_options *o, struct lazy_src *out)
{
	struct remote_src *r = calloc(1, sizeof(*r));
	int err = 0;

	if (!r)
		return -ENOMEM;
	r->dirfd = -1;
	out->ops = &remote_ops;
	out->priv = r;
	snprintf(r->dir, sizeof(r->dir), "%s/lazy-pages-mirror.XXXXXX",
		 o->work_dir ? o->work_dir : o->images_dir);
	if (!mkdtemp(r->dir)) {
		err = neg_errno();
		pr_errno(err, "cannot make a directory for the images' mirror");
		return err;
	}
	r->dirfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dirfd < 0)
		return neg_errno();
	r->o = o;
	r->c = ps_connect(o);
	if (!r->c)
		return -ECONNREFUSED;
	err = bound_io(r->c);
	if (!err)
		err = mirror(r, ".", 0);
	if (!err)
		err = check_lazy_dump(r, out);
	if (!err)
		err = lazy_src_local(r->dirfd, r->c->peer, &r->local);
	if (err)
		pr_errno(err, "cannot read the images of the page server %s", r->c->peer);
	else
		pr_info("pages from the page server %s\n", r->c->peer);
	return err;
}
