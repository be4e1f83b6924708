// SPDX-License-Identifier: GPL-2.0
/*
 * `page-server --lazy-pages`: serve an image directory to one `lazy-pages
 * --page-server` (Documentation/lazy-pages.md, "From a page server"): the
 * images it lists (LIST), a file or the header of a pages image (GET), and
 * ranges of a pages image as the daemon needs them (READ). Read-only:
 * nothing in the directory changes. The session ends with END or when the
 * daemon closes the connection. For `dump --lazy-pages` the same, with the
 * holes of its pages images read from the frozen tasks and DONE ending them
 * (struct ps_lazy_src, lazy-dump.c).
 */
#define LOG_PREFIX "page-server: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "log.h"
#include "page-server.h"
#include "util.h"

static int reply(struct ps_conn *c, uint16_t cmd, int64_t status, uint32_t len)
{
	struct ps_hdr h = {
		.magic = PS_MAGIC, .cmd = PS_REPLY, .id = cmd, .len = len, .arg = (uint64_t)status
	};

	ps_hdr_pack(&h);
	return ps_send(c, &h, sizeof(h), "replying");
}

static int reply_err(struct ps_conn *c, uint16_t cmd, int err, const char *why)
{
	size_t n = min(strlen(why), (size_t)PS_MSG_MAX);

	return reply(c, cmd, err, (uint32_t)n) ?: ps_send(c, why, n, "replying");
}

/* What a lazy-pages daemon reads: the inventory, pagemaps, mm images, pages images. */
static bool served_name(const char *n)
{
	return !strcmp(n, "inventory.img") || !strncmp(n, "pagemap-", 8) || !strncmp(n, "mm-", 3) ||
	       !strncmp(n, "pages-", 6) || !strcmp(n, "parent");
}

static int do_list(struct ps_conn *c, int dirfd, const char *path, bool from_tree)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	struct dirent *e;
	int err;

	if (!d) {
		err = neg_errno();
		if (fd >= 0)
			close(fd);
		return reply_err(c, PS_LIST, err, "no such directory");
	}
	out = malloc(PS_LIST_MAX);
	while (out && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!served_name(e->d_name) || len + n + 1 > PS_LIST_MAX)
			continue;
		memcpy(out + len, e->d_name, n);
		out[len + n] = '\n';
		len += n + 1;
	}
	closedir(d);
	if (!out)
		return -ENOMEM;
	return reply(c, PS_LIST, from_tree ? PS_LIST_FROM_TREE : 0, (uint32_t)len)
		       ?: ps_send(c, out, len, "listing");
}

static int do_get(struct ps_conn *c, int dirfd, const char *path, bool head)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	off_t pos = 0;
	size_t len;
	int err;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (!head && st.st_size > PS_FILE_MAX)) {
		err = fd < 0 ? neg_errno() : -EINVAL;
		if (fd >= 0)
			close(fd);
		return reply_err(c, PS_GET, err, "cannot serve that file");
	}
	len = head ? min((size_t)st.st_size, (size_t)IMG_RAW_DATA_OFF) : (size_t)st.st_size;
	err = reply(c, PS_GET, st.st_size, (uint32_t)len);
	if (!err)
		err = ps_send_file(c, fd, &pos, len, "sending a file");
	close(fd);
	return err;
}

/* @len bytes of @fd at @pos, the holes filled in by @src, then sent. */
static int send_filled(struct ps_conn *c, int fd, const char *path, off_t pos, size_t len,
		       const struct ps_lazy_src *src)
{
	_cleanup_free_ char *buf = malloc(len + 1);
	ssize_t n;
	int err;

	if (!buf)
		return -ENOMEM;
	n = pread(fd, buf, len, pos);
	if (n != (ssize_t)len)
		return n < 0 ? neg_errno() : -EIO;
	err = src->read(src->priv, path, (uint64_t)pos, buf, len);
	return err ?: ps_send(c, buf, len, "sending pages");
}

static int do_read(struct ps_conn *c, int dirfd, const char *path, const struct ps_hdr *h,
		   const struct ps_lazy_src *src)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	off_t pos = (off_t)h->arg;
	struct stat st;
	int err;

	if (fd < 0 || fstat(fd, &st) || h->id > PS_DATA_MAX || h->arg > (uint64_t)st.st_size ||
	    h->id > (uint64_t)st.st_size - h->arg) {
		err = fd < 0 ? neg_errno() : -EINVAL;
		if (fd >= 0)
			close(fd);
		return reply_err(c, PS_READ, err, "no such range");
	}
	err = reply(c, PS_READ, 0, h->id);
	/* the reply is sent: a failure from here on ends the session */
	if (!err)
		err = src ? send_filled(c, fd, path, pos, h->id, src)
			  : ps_send_file(c, fd, &pos, h->id, "sending pages");
	close(fd);
	return err;
}

/* DONE: a lazy dump's tree ends (src->done()) before the answer; a plain server has none. */
static int do_done(struct ps_conn *c, const struct ps_lazy_src *src)
{
	int err = src ? src->done(src->priv) : 0;

	if (err)
		return reply_err(c, PS_DONE, err, "the source's tree could not be ended") ?: err;
	return reply(c, PS_DONE, 0, 0);
}

int ps_serve_lazy(struct ps_conn *c, int dirfd, const struct ps_lazy_src *src)
{
	char path[PS_PATH_MAX + 1];
	uint64_t served = 0;
	struct ps_hdr h;
	int err;

	for (;;) {
		err = ps_recv(c, &h, sizeof(h), "waiting for a request");
		if (err == -ECONNRESET) {
			pr_info("%s: the lazy-pages daemon is done (%lu bytes of pages served)\n",
				c->peer, served);
			return 0;
		}
		if (err)
			return err;
		ps_hdr_unpack(&h);
		if (h.magic != PS_MAGIC || h.len > PS_PATH_MAX) {
			pr_err("%s: refused a request (command %u, %u bytes)\n", c->peer, h.cmd,
			       h.len);
			reply_err(c, h.cmd, -EPROTO, "bad request");
			return -EPROTO;
		}
		path[0] = '\0';
		if (h.cmd == PS_LIST || h.cmd == PS_GET || h.cmd == PS_READ) {
			err = ps_recv(c, path, h.len, "reading a path");
			if (err)
				return err;
			path[h.len] = '\0';
			if (ps_check_path(path, h.len)) {
				pr_err("%s: refused the path '%s'\n", c->peer, path);
				reply_err(c, h.cmd, -EINVAL, "bad path");
				return -EINVAL;
			}
		}
		switch (h.cmd) {
		case PS_HELLO:
			err = h.arg == PS_VERSION ? reply(c, PS_HELLO, 0, 0)
						  : reply_err(c, PS_HELLO, -EPROTO, "version");
			break;
		case PS_LIST:
			/* a lazy dump's own directory: its holes are read from the tree */
			err = do_list(c, dirfd, path, src && !strcmp(path, "."));
			break;
		case PS_GET:
			err = do_get(c, dirfd, path, h.flags & PS_GET_HEAD);
			break;
		case PS_READ:
			err = do_read(c, dirfd, path, &h, src);
			served += h.id;
			break;
		case PS_DONE:
			err = do_done(c, src);
			break;
		case PS_END:
			reply(c, PS_END, 0, 0);
			pr_info("%s: session ended (%lu bytes of pages served)\n", c->peer, served);
			return 1;
		default:
			reply_err(c, h.cmd, -EPROTO, "not a request of a lazy page server");
			return -EPROTO;
		}
		if (err)
			return err;
	}
}
