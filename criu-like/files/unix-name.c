// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: bound names and listening sockets. At dump, the name of a
 * bound socket (a path, or an abstract name), the clients waiting in the
 * backlog of a listening socket, and the bound senders of queued datagrams,
 * each of which must be a socket of the tree. At restore, bind() and
 * connect() to those names, the datagram socket a queued datagram is sent
 * again from, and a listening socket made with its connections: those it
 * accepted (their clients connect and are accepted at once), then those
 * still in its backlog, in the saved order.
 */
#define LOG_PREFIX "files: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "node-attrs.h"
#include "restore.h"
#include "unix.h"
#include "util.h"

/* ---- dump ------------------------------------------------------------------------------- */

/* The socket file at @path (@st): owner, mode, times and extended attributes. */
static int usk_file_attrs(const struct fd_info *f, UnixSkEntry *e, const struct stat *st,
			  const char *path)
{
	int err;

	e->has_file_uid = e->has_file_gid = e->has_file_mode = true;
	e->file_uid = st->st_uid;
	e->file_gid = st->st_gid;
	e->file_mode = st->st_mode & 07777;
	e->has_file_atime_ns = e->has_file_mtime_ns = true;
	e->file_atime_ns = node_ns(&st->st_atim);
	e->file_mtime_ns = node_ns(&st->st_mtim);
	err = node_xattrs_dump(path, false, &e->file_xattrs);
	if (err)
		pr_errno(err, "pid %d fd %d: cannot read the extended attributes of %s", f->pid,
			 f->fd, path);
	e->has_file_xattrs = e->file_xattrs.len != 0;
	return err;
}

/*
 * A relative name: the directory it leads from to the socket file, the
 * task's cwd (where bind() resolved it, unless the task moved since), in
 * @dir; e->name_unlinked when no socket file is there. Another socket file
 * there means the name may resolve elsewhere now: refused.
 */
static int usk_dump_relative(const struct fd_info *f, const struct usk_diag *dg, UnixSkEntry *e,
			     char *dir)
{
	char link[64], path[PATH_MAX * 2];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/cwd", f->pid);
	n = readlink(link, dir, PATH_MAX - 1);
	if (n < 0) {
		pr_perror("pid %d fd %d: cannot read %s", f->pid, f->fd, link);
		return neg_errno();
	}
	dir[n] = '\0';
	if (dir[0] != '/' || (n > 10 && !strcmp(dir + n - 10, " (deleted)"))) {
		pr_err("pid %d fd %d: %s is bound to the relative path %.*s and its cwd %s was "
		       "removed: not supported\n",
		       f->pid, f->fd, f->link, (int)dg->name_len, dg->name, dir);
		return -EOPNOTSUPP;
	}
	snprintf(path, sizeof(path), "/proc/%d/root%s/%.*s", f->pid, dir, (int)dg->name_len,
		 dg->name);
	/* no file there, or one that is not a socket: unlinked since (and replaced) */
	e->has_name_unlinked = true;
	e->name_unlinked = lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode);
	if (!e->name_unlinked && dg->has_vfs && st.st_ino != dg->vfs_ino) {
		pr_err("pid %d fd %d: %s is bound to the relative path %.*s, which from its cwd %s "
		       "is another socket file now (the task moved since the bind?): not "
		       "supported\n",
		       f->pid, f->fd, f->link, (int)dg->name_len, dg->name, dir);
		return -EOPNOTSUPP;
	}
	if (!e->name_unlinked) {
		int err = usk_file_attrs(f, e, &st, path);

		if (err)
			return err;
	}
	e->has_name_dir = true;
	e->name_dir.data = (uint8_t *)dir;
	e->name_dir.len = (size_t)n;
	return 0;
}

/*
 * The name of a bound socket. A path is relative to the task's root; the
 * socket file is looked up there: gone (or another file) means unlinked
 * after bind(), which restore repeats.
 */
int usk_dump_name(const struct fd_info *f, const struct usk_diag *dg, UnixSkEntry *e, char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (!dg->name_len)
		return 0;
	e->has_name = true;
	e->name.data = (uint8_t *)dg->name;
	e->name.len = dg->name_len;
	if (dg->name[0] == '\0')
		return 0; /* abstract */
	e->has_name_ino = dg->has_vfs;
	e->name_ino = dg->vfs_ino;
	if (dg->name[0] != '/')
		return usk_dump_relative(f, dg, e, dir);
	snprintf(path, sizeof(path), "/proc/%d/root%.*s", f->pid, (int)dg->name_len, dg->name);
	e->has_name_unlinked = true;
	e->name_unlinked = stat(path, &st) || !S_ISSOCK(st.st_mode) ||
			   (dg->has_vfs && st.st_ino != dg->vfs_ino);
	if (!e->name_unlinked)
		return usk_file_attrs(f, e, &st, path);
	return 0;
}

/*
 * Datagrams from bound senders are sent again by those sockets, so the
 * receiver sees the same address: each must be a socket of the tree.
 */
int usk_check_senders(const struct dump_ctx *ctx, const struct fd_info *f,
		      const struct usk_queue *q)
{
	uint32_t ino = 0;
	unsigned int i;
	int err;

	for (i = 0; i < q->n; i++) {
		const struct usk_from *from = &q->from[i];

		if (!from->len || (i && from->len == q->from[i - 1].len &&
				   !memcmp(from->name, q->from[i - 1].name, from->len)))
			continue; /* unbound, or the sender checked just before */
		err = usk_sender_ino(from, &ino);
		if (err)
			return err;
		if (!ino || !sock_in_tree(ctx, f->st.st_dev, ino)) {
			pr_err("pid %d fd %d: %s holds a datagram from %s%.*s, a socket %s: not "
			       "supported yet\n",
			       f->pid, f->fd, f->link, from->name[0] ? "" : "@", (int)from->len - 1,
			       from->name + !from->name[0],
			       ino ? "outside the tree" : "closed since");
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* The connections in the backlog of the listening socket @dg: their clients, in order. */
int usk_dump_icons(const struct dump_ctx *ctx, const struct fd_info *f, const struct usk_diag *dg,
		   UnixSkEntry *e)
{
	unsigned int i;

	e->has_backlog = true;
	e->backlog = dg->wqueue;
	e->n_icons_peer = dg->nr_icons;
	e->icons_peer = calloc(dg->nr_icons ?: 1, sizeof(uint64_t));
	if (!e->icons_peer)
		return -ENOMEM;
	for (i = 0; i < dg->nr_icons; i++) {
		struct usk_diag cl;
		int err;

		e->icons_peer[i] = dg->icons[i];
		if (!dg->icons[i])
			continue; /* a closed client: its socket in the backlog is not found */
		if (!sock_in_tree(ctx, f->st.st_dev, dg->icons[i]))
			return usk_refuse_outside(f, dg->icons[i],
						  "listening with a connection from");
		/*
		 * The socket waiting in the backlog has no inode before accept(), so
		 * sock_diag cannot show it; what its client sent is still charged to
		 * the client's send buffer (wqueue).
		 */
		err = usk_diag_get(dg->icons[i], &cl);
		if (err) {
			pr_errno(err,
				 "pid %d fd %d: sock_diag of the client %u in the backlog of %s",
				 f->pid, f->fd, dg->icons[i], f->link);
			return err;
		}
		usk_diag_fini(&cl);
		if (cl.wqueue) {
			pr_err("pid %d fd %d: the client %u in the backlog of %s sent %u bytes "
			       "before accept(): not supported yet\n",
			       f->pid, f->fd, dg->icons[i], f->link, cl.wqueue);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* ---- restore ---------------------------------------------------------------------------- */

int usk_addr(const ProtobufCBinaryData *name, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!name->len || name->len > sizeof(sa->sun_path))
		return -EINVAL;
	memcpy(sa->sun_path, name->data, name->len);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + name->len);
	return 0;
}

/*
 * A relative name is bound and connected from its directory: the controller
 * moves there (*@saved: where it was, -1 when @e's name is not relative).
 */
static int usk_enter_dir(const UnixSkEntry *e, uint32_t id, int *saved)
{
	char dir[PATH_MAX];

	*saved = -1;
	if (!e->has_name_dir)
		return 0;
	if (!e->name_dir.len || e->name_dir.len >= sizeof(dir) || e->name_dir.data[0] != '/' ||
	    memchr(e->name_dir.data, 0, e->name_dir.len)) {
		pr_err("file %u: bad directory of its relative name\n", id);
		return -EINVAL;
	}
	memcpy(dir, e->name_dir.data, e->name_dir.len);
	dir[e->name_dir.len] = '\0';
	/* a process sharing this cwd (CLONE_FS) must not move it under us */
	rst_fs_lock();
	*saved = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*saved < 0 || chdir(dir)) {
		int err = neg_errno();

		rst_fs_unlock();
		pr_perror("file %u: cannot enter %s, where its relative name was bound", id, dir);
		if (*saved >= 0)
			close(*saved);
		*saved = -1;
		return err;
	}
	return 0;
}

static void usk_leave_dir(int saved)
{
	if (saved < 0)
		return;
	if (fchdir(saved))
		pr_perror("cannot go back to the directory of criu-like");
	close(saved);
	rst_fs_unlock();
}

/*
 * bind() to a path whose socket file was unlinked after the bind at the
 * dump, in the ways the file system may have changed meanwhile: its
 * directory removed (made for the bind, removed again), another file put at
 * its name (moved aside for the bind, put back).
 */
static int bind_unlinked(int sk, const struct sockaddr_un *sa, socklen_t len, uint32_t id)
{
	const char *path = sa->sun_path;
	char aside[PATH_MAX];
	unsigned int made = 0;
	bool moved = false;
	int err = 0;

	if (!access(path, F_OK)) {
		snprintf(aside, sizeof(aside), "%s.criu-like-aside.%d", path, getpid());
		if (rename(path, aside)) {
			pr_perror("file %u: cannot move %s aside to bind its name", id, path);
			return neg_errno();
		}
		moved = true;
	} else {
		err = mkdir_missing_parents(path, &made);
		if (err)
			pr_errno(err, "file %u: cannot make the directories of %s", id, path);
	}
	if (!err && bind(sk, (const struct sockaddr *)sa, len)) {
		err = neg_errno();
		pr_perror("file %u: cannot bind to %s", id, path);
	}
	if (!err && unlink(path)) {
		err = neg_errno();
		pr_perror("file %u: cannot unlink %s again", id, path);
	}
	if (moved && rename(aside, path)) {
		pr_perror("file %u: cannot put %s back from %s", id, path, aside);
		err = err ?: neg_errno();
	}
	if (rmdir_made_parents(path, made))
		pr_perror("file %u: cannot remove the directories made for %s", id, path);
	return err;
}

/*
 * bind() to the saved name. A path still there from the dumped socket (a
 * socket file is not removed when its socket closes) is removed first; a
 * name that was unlinked after bind() is unlinked again (@keep: later, by
 * the caller, which connects through it first).
 */
static int usk_bind_file(int sk, const UnixSkEntry *e, const struct sockaddr_un *sa, socklen_t len,
			 uint32_t id, bool keep)
{
	struct node_attrs na = { e->has_file_atime_ns && e->has_file_mtime_ns, e->file_atime_ns,
				 e->file_mtime_ns, e->has_file_xattrs ? &e->file_xattrs : NULL };
	char what[PATH_MAX + 32];
	struct stat st;

	if (e->name_unlinked && !keep)
		return bind_unlinked(sk, sa, len, id);
	if (!lstat(sa->sun_path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			pr_err("file %u: %s exists and is not a socket file\n", id, sa->sun_path);
			return -EEXIST;
		}
		if (unlink(sa->sun_path) && errno != ENOENT) {
			pr_perror("file %u: cannot remove the old socket file %s", id,
				  sa->sun_path);
			return neg_errno();
		}
	}
	if (bind(sk, (const struct sockaddr *)sa, len)) {
		pr_perror("file %u: cannot bind to %s", id, sa->sun_path);
		return neg_errno();
	}
	/* the socket file as the binder had it, not the controller's ids and umask */
	if ((e->has_file_uid && e->has_file_gid &&
	     fchownat(AT_FDCWD, sa->sun_path, e->file_uid, e->file_gid, AT_SYMLINK_NOFOLLOW)) ||
	    (e->has_file_mode && fchmodat(AT_FDCWD, sa->sun_path, e->file_mode & 07777, 0))) {
		pr_perror("file %u: cannot give %s its owner %u:%u and mode %o", id, sa->sun_path,
			  e->file_uid, e->file_gid, e->file_mode);
		return neg_errno();
	}
	snprintf(what, sizeof(what), "file %u: socket file %s", id, sa->sun_path);
	return node_attrs_set(-1, sa->sun_path, false, &na, what);
}

/* The directory's times put back after: bind() made an entry in it (and removed one). */
static int usk_bind_path(int sk, const UnixSkEntry *e, const struct sockaddr_un *sa, socklen_t len,
			 uint32_t id, bool keep)
{
	struct dir_times dt;
	int err;

	dir_times_save(&dt, sa->sun_path);
	err = usk_bind_file(sk, e, sa, len, id, keep);
	dir_times_put_back(&dt);
	return err;
}

static int usk_bind_keep(int sk, const UnixSkEntry *e, uint32_t id, bool keep)
{
	struct sockaddr_un sa;
	socklen_t len;
	int saved, err;

	if (!e->has_name)
		return 0;
	if (usk_addr(&e->name, &sa, &len)) {
		pr_err("file %u: bad socket name of %zu bytes\n", id, e->name.len);
		return -EINVAL;
	}
	if (sa.sun_path[0] == '\0') {
		if (bind(sk, (struct sockaddr *)&sa, len)) {
			pr_perror("file %u: cannot bind to @%s", id, sa.sun_path + 1);
			return neg_errno();
		}
		return 0;
	}
	err = usk_enter_dir(e, id, &saved);
	if (!err)
		err = usk_bind_path(sk, e, &sa, len, id, keep);
	usk_leave_dir(saved);
	return err;
}

int usk_bind(int sk, const UnixSkEntry *e, uint32_t id)
{
	return usk_bind_keep(sk, e, id, false);
}

int usk_connect(int sk, const ProtobufCBinaryData *name, uint32_t id)
{
	struct sockaddr_un sa;
	socklen_t len;

	if (usk_addr(name, &sa, &len)) {
		pr_err("file %u: bad peer name of %zu bytes\n", id, name->len);
		return -EINVAL;
	}
	if (connect(sk, (struct sockaddr *)&sa, len)) {
		pr_perror("file %u: cannot connect to %s%s", id, sa.sun_path[0] ? "" : "@",
			  sa.sun_path + !sa.sun_path[0]);
		return neg_errno();
	}
	return 0;
}

static bool same_name(const UnixSkEntry *a, const UnixSkEntry *b)
{
	return a->has_name && b->has_name && a->name.len == b->name.len &&
	       !memcmp(a->name.data, b->name.data, a->name.len);
}

long usk_find_named(const struct usk_rst *u, const ProtobufCBinaryData *name)
{
	size_t j;

	for (j = 0; j < u->k->n; j++) {
		const UnixSkEntry *s = usk_at(u, u->k->pos[j]);

		if (s->type == SOCK_DGRAM && s->has_name && s->name.len == name->len &&
		    !memcmp(s->name.data, name->data, name->len))
			return (long)u->k->pos[j];
	}
	return -ENOENT;
}

/* The datagram socket of the images bound to @name, opened first if need be; or -errno. */
int usk_sender_fd(struct restore_ctx *ctx, const ProtobufCBinaryData *name, uint32_t id)
{
	struct usk_rst *u = rst_kind_get(ctx, &unix_kind)->priv;
	long i = usk_find_named(u, name);
	int fd;

	if (i < 0) {
		pr_err("file %u: a datagram in its queue comes from a socket not in the images\n",
		       id);
		return -ENOENT;
	}
	if (u->f->fds[i] == FD_IN_PROGRESS) {
		pr_err("file %u: its senders need each other first: not supported\n", id);
		return -EINVAL;
	}
	if (u->f->fds[i] < 0) {
		fd = usk_open(ctx, (size_t)i);
		if (fd < 0)
			return fd;
		usk_park(u, i, fd);
	}
	return u->f->fds[i];
}

/* The listening socket @e was accepted from (it has its name), or -ENOENT. */
long usk_listener_named(const struct usk_rst *u, const UnixSkEntry *e)
{
	size_t j;

	for (j = 0; j < u->k->n; j++) {
		const UnixSkEntry *l = usk_at(u, u->k->pos[j]);

		if (l != e && l->state == TCP_LISTEN && l->type == e->type && same_name(l, e))
			return (long)u->k->pos[j];
	}
	return -ENOENT;
}

/* The listening socket with the client @ino in its backlog, or -ENOENT. */
long usk_listener_of(const struct usk_rst *u, uint64_t ino)
{
	size_t j, k;

	for (j = 0; j < u->k->n; j++) {
		const UnixSkEntry *l = usk_at(u, u->k->pos[j]);

		for (k = 0; l->state == TCP_LISTEN && k < l->n_icons_peer; k++)
			if (l->icons_peer[k] == ino)
				return (long)u->k->pos[j];
	}
	return -ENOENT;
}

/* A new socket for entry @pos, bound, connected to the listening socket @l. */
static int connect_client(const struct usk_rst *u, long pos, const UnixSkEntry *l, int type)
{
	UnixSkEntry tmp = UNIX_SK_ENTRY__INIT;
	const UnixSkEntry *e = pos >= 0 ? usk_at(u, pos) : &tmp;
	uint32_t id = pos >= 0 ? usk_id(u, pos) : 0;
	int sk, err;

	tmp.type = (uint32_t)type;
	sk = usk_socket(e, id);
	if (sk < 0)
		return sk;
	err = usk_bind(sk, e, id);
	if (!err)
		err = usk_connect(sk, &l->name, id);
	if (err) {
		close(sk);
		return err;
	}
	return sk;
}

/*
 * The connection of the accepted socket @pb, made again through the listening
 * socket @lsk (bound to @l's name).
 */
static int accept_one(struct usk_rst *u, int lsk, const UnixSkEntry *l, size_t pb)
{
	const UnixSkEntry *b = usk_at(u, pb);
	long pa = b->peer_closed ? -1 : usk_find(u, b->peer);
	const UnixSkEntry *a = pa >= 0 ? usk_at(u, pa) : NULL;
	int csk, ssk, err = 0;

	if (!b->peer_closed && (!a || a->peer != b->ino || u->f->fds[pa] >= 0)) {
		pr_err("file %u: accepted, but its peer %llu is not in the images\n", usk_id(u, pb),
		       (unsigned long long)b->peer);
		return -EINVAL;
	}
	csk = connect_client(u, pa, l, (int)b->type);
	if (csk < 0)
		return csk;
	ssk = accept4(lsk, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (ssk < 0) {
		pr_perror("file %u: accept", usk_id(u, pb));
		close(csk);
		return neg_errno();
	}
	err = usk_refill(u, csk, pb, true);
	if (!err && a)
		err = usk_refill(u, ssk, (size_t)pa, true);
	if (!err)
		err = usk_finish(u, ssk, pb);
	if (!err && a)
		err = usk_finish(u, csk, (size_t)pa);
	if (err) {
		close(csk);
		close(ssk);
		return err;
	}
	if (!a)
		usk_close_or_keep(u, pb, csk);
	if (a)
		usk_park(u, pa, csk);
	usk_park(u, (long)pb, ssk);
	return 0;
}

/* The connections of the listening socket @lsk: accepted ones, then its backlog in order. */
static int listener_conns(struct usk_rst *u, int lsk, size_t pl)
{
	const UnixSkEntry *l = usk_at(u, pl);
	size_t i, j;
	int err;

	for (j = 0; j < u->k->n; j++) {
		size_t pb = u->k->pos[j];
		const UnixSkEntry *b;

		if (pb == pl || u->f->fds[pb] >= 0)
			continue;
		b = usk_at(u, pb);
		if (b->state != TCP_ESTABLISHED || usk_listener_named(u, b) != (long)pl)
			continue;
		err = accept_one(u, lsk, l, pb);
		if (err)
			return err;
	}
	for (i = 0; i < l->n_icons_peer; i++) {
		long pc = l->icons_peer[i] ? usk_find(u, l->icons_peer[i]) : -1;
		int csk;

		if (l->icons_peer[i] && (pc < 0 || u->f->fds[pc] >= 0)) {
			pr_err("file %u: the client %llu in its backlog is not in the images\n",
			       usk_id(u, pl), (unsigned long long)l->icons_peer[i]);
			return -EINVAL;
		}
		csk = connect_client(u, pc, l, (int)l->type);
		if (csk < 0)
			return csk;
		/* A client closed since: its connection stays in the backlog, its peer gone. */
		err = pc >= 0 ? usk_finish(u, csk, (size_t)pc) : 0;
		if (err || pc < 0) {
			close(csk);
			if (err)
				return err;
			continue;
		}
		usk_park(u, pc, csk);
	}
	return 0;
}

int usk_open_listener(struct usk_rst *u, size_t pl)
{
	const UnixSkEntry *l = usk_at(u, pl);
	uint32_t id = usk_id(u, pl);
	int sk, err;

	if (!l->has_name) {
		pr_err("file %u: a listening socket without a name\n", id);
		return -EINVAL;
	}
	sk = usk_socket(l, id);
	if (sk < 0)
		return sk;
	err = usk_bind(sk, l, id);
	if (!err && listen(sk, (int)l->backlog)) {
		pr_perror("file %u: listen(%u)", id, l->backlog);
		err = neg_errno();
	}
	if (!err)
		err = listener_conns(u, sk, pl);
	if (!err)
		err = usk_finish(u, sk, pl);
	if (err) {
		close(sk);
		return err;
	}
	return sk;
}

/* @pos made with the listening socket @pl, which is parked at its slot. */
int usk_open_via_listener(struct usk_rst *u, size_t pos, size_t pl)
{
	int fd = usk_open_listener(u, pl);

	if (fd < 0)
		return fd;
	usk_park(u, (long)pl, fd);
	fd = u->f->fds[pos];
	if (fd < 0) {
		pr_err("file %u: not one of the connections of file %u\n", usk_id(u, pos),
		       usk_id(u, pl));
		return -EINVAL;
	}
	return fd;
}

/*
 * A connected stream or seqpacket pair with a name and no listening socket of
 * that name in the images (closed since): the named end is accepted from a
 * temporary listening socket on its name, so several accepted sockets can
 * share the name as they did (bind() would refuse the second).
 */
int usk_open_pair_named(struct usk_rst *u, size_t pa, size_t pb)
{
	size_t ps = usk_at(u, pb)->has_name ? pb : pa;
	const UnixSkEntry *s = usk_at(u, ps);
	uint32_t id = usk_id(u, ps);
	struct sockaddr_un sa;
	socklen_t len;
	int lsk, err, fd, saved = -1;

	lsk = usk_socket(s, id);
	if (lsk < 0)
		return lsk;
	/* a relative name: bound, connected through and unlinked from its directory */
	err = usk_enter_dir(s, id, &saved);
	if (!err)
		err = usk_bind_keep(lsk, s, id, true);
	if (!err && listen(lsk, 1))
		err = neg_errno();
	if (!err)
		err = accept_one(u, lsk, s, ps);
	close(lsk);
	if (!err && s->name_unlinked && !usk_addr(&s->name, &sa, &len) && sa.sun_path[0] &&
	    unlink(sa.sun_path))
		err = neg_errno();
	usk_leave_dir(saved);
	if (err) {
		pr_errno(err, "file %u: cannot connect it again through its name", id);
		return err;
	}
	fd = u->f->fds[pa];
	u->f->fds[pa] = -1;
	return fd;
}
