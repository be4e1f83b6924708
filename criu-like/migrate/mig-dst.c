// SPDX-License-Identifier: GPL-2.0
/*
 * The destination of a live migration (Documentation/migration.md): a
 * worker of `criu-like service --listen` serves one control connection. It
 * checks the source's HELLO, receives each round into WORKDIR/incoming-PID/N
 * (pages through a page server of its own per round, the other images as
 * FILE messages), restores the last round with the tree held before it runs
 * until the source says GO, announces the tree's addresses, and answers
 * RUNNING. Until GO, any failure or a closed connection kills what the
 * restore made and removes every image received: the source then resumes.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_PREFIX "migrate: "
#include "cr.h"
#include "lazy.h"
#include "log.h"
#include "migrate.h"
#include "notify.h"
#include "ns.h"
#include "page-server.h"
#include "restore.h"
#include "util.h"

#define MIG_DEFAULT_WORKDIR "/var/lib/criu-like/migrate"

struct mig_dst {
	const struct cr_options *o;
	int fd; /* the control connection */
	char dir[PATH_MAX]; /* WORKDIR/incoming-PID */
	char peer[96];
	int round; /* the last round begun */
	bool final; /* the last round is the final dump's */
	pid_t ps; /* the page server of the current round, 0 when none */
	bool running; /* GO came and the tree runs: never undone */
	pid_t lazy; /* the lazy-pages daemon of a lazy restore, 0 when none */
	pid_t early; /* the early announcement's child (net_announce_start()), 0 when none */
	pid_t pre; /* the restore forked ahead (restore_ahead()), 0 when none */
	int pre_fd; /* its pipe: the final round and RESTORE's lines go there, -1 when none */
};

/* The most a worker waits, after RUNNING, for its lazy-pages daemon to have every page in. */
#define MIG_LAZY_WAIT_S 600

static const char *workdir(const struct cr_options *o)
{
	return o->work_dir ? o->work_dir : MIG_DEFAULT_WORKDIR;
}

static int rm_one(const char *path, const struct stat *st __unused, int flag,
		  struct FTW *ftw __unused)
{
	/* best effort: what cannot go is left for the next service start */
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return neg_errno();
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return neg_errno();
	return 0;
}

/* Tell the source why, then end: nothing received is kept. */
static int refuse(struct mig_dst *d, uint16_t cmd, int err, const char *why)
{
	pr_err("%s: %s\n", d->peer, why);
	mig_send(d->fd, cmd, err, why, strlen(why));
	return err;
}

static int do_hello(struct mig_dst *d)
{
	struct mig_hdr h;
	_cleanup_free_ char *p = NULL;
	char why[256], ok[PATH_MAX + 16];
	int err;

	err = mig_recv(d->fd, &h, &p);
	if (err)
		return err;
	if (h.cmd != MIG_HELLO)
		return refuse(d, MIG_REFUSE, -EPROTO, "the conversation must begin with HELLO");
	err = mig_hello_check(h.arg, p, h.len, CRIU_LIKE_VERSION, MIG_FEATURES, why, sizeof(why));
	if (err)
		return refuse(d, MIG_REFUSE, err, why);
	snprintf(d->dir, sizeof(d->dir), "%s/incoming-%d", workdir(d->o), getpid());
	err = mkdir_p(d->dir);
	if (err) {
		snprintf(why, sizeof(why), "cannot create %s: %s", d->dir, strerror(-err));
		d->dir[0] = '\0';
		return refuse(d, MIG_REFUSE, err, why);
	}
	pr_info("%s: migration accepted into %s\n", d->peer, d->dir);
	snprintf(ok, sizeof(ok), "dir=%s\n", d->dir);
	return mig_send(d->fd, MIG_OK, 0, ok, strlen(ok));
}

/* A socket on the control connection's local address, any port: the round's page server. */
static int listen_like(int fd, int *port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int lfd, one = 1;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return neg_errno();
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = 0;
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return neg_errno();
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ss, sl) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&ss, &sl)) {
		int err = neg_errno();

		close(lfd);
		return err;
	}
	*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					      : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return lfd;
}

static int round_dir(const struct mig_dst *d, int n, char *buf, size_t len)
{
	return snprintf(buf, len, "%s/%d", d->dir, n) >= (int)len ? -ENAMETOOLONG : 0;
}

static int do_round(struct mig_dst *d, const struct mig_hdr *h, const char *kind)
{
	char dir[PATH_MAX], prev[32], why[PATH_MAX + 64];
	struct cr_options po;
	int lfd, port, err;

	if (h->arg != d->round + 1 || d->final || d->ps)
		return refuse(d, MIG_ERROR, -EPROTO, "ROUND out of order");
	err = round_dir(d, (int)h->arg, dir, sizeof(dir));
	if (!err && mkdir(dir, 0700))
		err = neg_errno();
	lfd = err ? err : listen_like(d->fd, &port);
	if (lfd < 0) {
		snprintf(why, sizeof(why), "round %lld: cannot prepare %s: %s", (long long)h->arg,
			 dir, strerror(-lfd));
		return refuse(d, MIG_ERROR, lfd, why);
	}
	d->round = (int)h->arg;
	d->final = !strcmp(kind, "final");
	po = *d->o;
	po.images_dir = dir;
	po.work_dir = NULL;
	snprintf(prev, sizeof(prev), "../%d", d->round - 1);
	po.prev_images_dir = d->round > 1 ? prev : NULL;
	po.ps_listen_fd = lfd;
	po.lazy_pages = false;
	po.no_sync = true; /* removed once restored (or refused): never flushed */
	po.restore_detached = false;
	po.pidfile = NULL;
	po.status_fd = -1;
	po.tls = false;
	d->ps = fork();
	if (d->ps < 0) {
		err = neg_errno();
		d->ps = 0;
		close(lfd);
		return refuse(d, MIG_ERROR, err, "cannot fork the page server");
	}
	if (!d->ps) {
		close(d->fd);
		if (d->pre_fd >= 0)
			close(d->pre_fd);
		_exit(cr_page_server(&po) ? 1 : 0);
	}
	close(lfd);
	pr_info("%s: round %d (%s): page server %d on port %d\n", d->peer, d->round, kind, d->ps,
		port);
	return mig_send(d->fd, MIG_OK, port, NULL, 0);
}

static int do_file(struct mig_dst *d, const struct mig_hdr *h, const char *p)
{
	char dir[PATH_MAX], tmp[MIG_NAME_MAX + 8], why[PATH_MAX + 256];
	size_t nl = strnlen(p, h->len);
	_cleanup_close_ int dfd = -1, fd = -1;
	int err;

	if (h->arg != d->round || nl == h->len || mig_name_check(p, nl)) {
		snprintf(why, sizeof(why), "FILE '%.*s' of round %lld refused (round %d)",
			 (int)(nl > 64 ? 64 : nl), p, (long long)h->arg, d->round);
		return refuse(d, MIG_ERROR, -EINVAL, why);
	}
	err = round_dir(d, d->round, dir, sizeof(dir));
	dfd = err ? -1 : open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	snprintf(tmp, sizeof(tmp), ".%s.part", p);
	fd = dfd < 0 ? -1 : openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	/* no fsync: the images are read once by this restore and removed (no_sync) */
	if (fd < 0 || write_all(fd, p + nl + 1, h->len - nl - 1) || renameat(dfd, tmp, dfd, p)) {
		err = neg_errno();
		snprintf(why, sizeof(why), "cannot write %.64s into %s: %s", p, dir,
			 strerror(-err));
		return refuse(d, MIG_ERROR, err, why);
	}
	return 0;
}

/* The round's page server ended its session: 0, or why not. */
static int wait_ps(struct mig_dst *d)
{
	int st = 0;
	pid_t ps = d->ps;

	d->ps = 0;
	if (!ps)
		return -EPROTO;
	while (waitpid(ps, &st, 0) < 0)
		if (errno != EINTR)
			return neg_errno();
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
}

static int do_round_end(struct mig_dst *d, const struct mig_hdr *h)
{
	char why[128];
	int err;

	if (h->arg != d->round)
		return refuse(d, MIG_ERROR, -EPROTO, "ROUND_END of another round");
	err = wait_ps(d);
	if (err) {
		snprintf(why, sizeof(why),
			 "round %d: the page server failed (see the service's log)", d->round);
		return refuse(d, MIG_ERROR, err, why);
	}
	err = mig_send(d->fd, MIG_OK, d->round, NULL, 0);
	/* the first pre-copy round's images are in: the restore forked ahead makes their veths */
	if (!err && d->round == 1 && !d->final && d->pre_fd >= 0) {
		int n = -1;

		if (write(d->pre_fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
			pr_debug("%s: the restore forked ahead is gone\n", d->peer);
	}
	return err;
}

/*
 * post-setup-namespaces: the tree's network namespace is made, its links
 * up with their addresses, and locked (what reaches it is held until the
 * tree runs). The switches learn the MAC's new port now, so that what the
 * peers send during the rest of the freeze comes here and is held, rather
 * than to the source's lock, which drops it (a retransmission timeout
 * later). Should the source resume after all, it announces its own copy's
 * addresses again. IPv6's advertisement may not pass the lock yet: it is
 * sent again once the tree runs.
 *
 * post-restore: every task made, none running. The source may still
 * resume its own copy: the tree goes on only once it says GO.
 */
static int hold_for_go(void *priv, const char *action, pid_t root)
{
	struct mig_dst *d = priv;
	int err;

	/* sent while the restore goes on (about 10 ms here), waited for after it */
	if (!strcmp(action, CR_ACT_POST_SETUP_NS)) {
		if (root > 0)
			d->early = net_announce_start(root);
		return 0;
	}
	if (strcmp(action, CR_ACT_POST_RESTORE))
		return 0;
	err = mig_send(d->fd, MIG_RESTORED, 0, NULL, 0);
	if (!err)
		err = mig_expect(d->fd, MIG_GO, NULL, "waiting for GO");
	if (err)
		pr_err("%s: no GO from the source: the restored tree is killed\n", d->peer);
	return err;
}

/* Append @s to the NULL-terminated array of @n strings @arr. */
static int append_str(const char ***arr, int *n, const char *s)
{
	const char **a = realloc(*arr, (size_t)(*n + 2) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	a[(*n)++] = s;
	a[*n] = NULL;
	*arr = a;
	return 0;
}

/*
 * The restore options of RESTORE's lines: root=DIR, external=VALUE
 * (veth[IN]:OUT...), lazy=1 (the memory comes after the tree runs, from a
 * lazy-pages daemon on these images).
 */
static int restore_opts(struct cr_options *ro, char *p, char *dir)
{
	char *line, *save = NULL;

	ro->images_dir = dir;
	ro->work_dir = NULL;
	ro->tcp_established = true;
	ro->restore_detached = true;
	ro->lazy_pages = false;
	ro->page_server = false;
	ro->pidfile = NULL;
	ro->external = NULL;
	ro->n_external = 0;
	ro->root = NULL;
	for (line = strtok_r(p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "root=", 5))
			ro->root = line + 5;
		else if (!strcmp(line, "lazy=1"))
			ro->lazy_pages = true;
		else if (!strncmp(line, "external=", 9) &&
			 append_str(&ro->external, &ro->n_external, line + 9))
			return -ENOMEM;
		else if (strncmp(line, "external=", 9)) {
			pr_err("RESTORE: unknown line '%s'\n", line);
			return -EINVAL;
		}
	}
	return 0;
}

/* In a child of the worker: restore, hold for GO, announce, answer RUNNING. */
static int restore_child(struct mig_dst *d, char *p)
{
	struct cr_notifier hold = { .notify = hold_for_go, .priv = d };
	struct cr_options ro = *d->o;
	char dir[PATH_MAX];
	pid_t root = 0;
	int err;

	err = round_dir(d, d->round, dir, sizeof(dir));
	if (!err)
		err = restore_opts(&ro, p, dir);
	ro.notifier = &hold;
	log_error_reset();
	if (!err)
		err = cr_restore_pid(&ro, &root);
	/* a network namespace made ahead that the restore did not take (none, or joined) */
	ns_net_ahead_drop();
	if (d->early && net_announce_wait(root, d->early))
		pr_debug("%s: the early announcement was not complete\n", d->peer);
	d->early = 0;
	free(ro.external);
	if (err) {
		const char *why = log_first_error();

		refuse(d, MIG_ERROR, err, *why ? why : "the restore failed");
		return err;
	}
	/* the tree runs: peers must learn where its addresses went at once */
	if (net_announce(root))
		pr_warn("%s: pid %d runs, but its addresses were not announced\n", d->peer, root);
	pr_info("%s: the migrated tree runs as pid %d\n", d->peer, root);
	return mig_send(d->fd, MIG_RUNNING, root, NULL, 0) ? 2 : 0;
}

/*
 * The lazy-pages daemon of a lazy restore, on the final round's images (the
 * pre-copied levels through its parent links): a child of the worker, which
 * keeps the images until it has put every page in. Its socket is in the
 * round's directory, where the restore looks for it.
 */
static int start_lazy(struct mig_dst *d)
{
	struct cr_options lo = *d->o;
	char dir[PATH_MAX];
	int err = round_dir(d, d->round, dir, sizeof(dir));

	if (err)
		return err;
	lo.images_dir = dir;
	lo.work_dir = NULL;
	lo.page_server = false;
	lo.address = NULL;
	lo.port = 0;
	lo.status_fd = -1;
	lo.pidfile = NULL;
	lo.notifier = NULL;
	d->lazy = fork();
	if (d->lazy < 0) {
		err = neg_errno();
		d->lazy = 0;
		return err;
	}
	if (!d->lazy) {
		close(d->fd);
		if (d->pre_fd >= 0)
			close(d->pre_fd);
		_exit(cr_lazy_pages(&lo) ? 1 : 0);
	}
	pr_info("%s: lazy-pages daemon %d on %s\n", d->peer, d->lazy, dir);
	return 0;
}

/* After RUNNING: the images go only once the lazy-pages daemon has every page in. */
static void end_lazy(struct mig_dst *d)
{
	int st = 0, i;
	pid_t r = 0;

	if (!d->lazy)
		return;
	if (!d->running)
		kill(d->lazy, SIGKILL); /* its guard kills whatever the restore left */
	for (i = 0; i < MIG_LAZY_WAIT_S * 100; i++) {
		r = waitpid(d->lazy, &st, WNOHANG);
		if (r != 0 && !(r < 0 && errno == EINTR))
			break;
		usleep(10000);
	}
	if (r == 0) {
		/* the images stay: the daemon may still read them */
		pr_err("%s: the lazy-pages daemon %d still runs after %d s; its images stay\n",
		       d->peer, d->lazy, MIG_LAZY_WAIT_S);
		d->dir[0] = '\0';
	} else if (d->running && (r < 0 || !WIFEXITED(st) || WEXITSTATUS(st)))
		pr_err("%s: the lazy-pages daemon %d failed: the migrated tree was killed\n",
		       d->peer, d->lazy);
	else if (d->running)
		pr_info("%s: every page of the migrated tree is in\n", d->peer);
	d->lazy = 0;
}

/* Up to @n bytes of @in into @buf, until EOF: how many. */
static size_t pipe_read(int in, char *buf, size_t n)
{
	size_t len = 0;
	ssize_t r;

	while (len < n && (r = read(in, buf + len, n - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		len += (size_t)r;
	}
	return len;
}

/* In the restore forked ahead: the veths of round @n's image made now (the first round's). */
static void links_ahead(struct mig_dst *d, int n)
{
	char dir[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int err = round_dir(d, n, dir, sizeof(dir));

	fd = err ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? -ENOENT : ns_net_links_ahead(fd);
	if (err && err != -ENOENT)
		pr_warn("%s: the container's veths are made at RESTORE\n", d->peer);
}

/*
 * The restore forked ahead, in the child: the tree's network namespace, its
 * packet holder and its lock made now (ns_net_restore_ahead(): 5-10 ms that
 * were the final freeze's), then @in read: -N, round N is in (the first
 * round: its veths are made, links_ahead()); N > 0, the final round, and
 * RESTORE's lines up to EOF. EOF before them (the migration failed first, or
 * the worker died): what was made is dropped, and nothing is restored.
 */
static int ahead_child(struct mig_dst *d, int in, pid_t worker)
{
	char buf[MIG_TEXT_MAX + 1];
	size_t len;
	int n = 0;

	/* never outlives its worker while it waits (a SIGKILLed service) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != worker)
		return 1;
	if (ns_net_restore_ahead(d->o))
		pr_warn("%s: the network namespace is made at RESTORE\n", d->peer);
	while (pipe_read(in, (char *)&n, sizeof(n)) == sizeof(n) && n < 0)
		links_ahead(d, -n);
	len = n > 0 ? pipe_read(in, buf, sizeof(buf) - 1) : 0;
	close(in);
	if (n <= 0) {
		ns_net_ahead_drop();
		return 0;
	}
	buf[len] = '\0';
	/* the restore proper: as a restore forked at RESTORE */
	prctl(PR_SET_PDEATHSIG, 0);
	d->round = n;
	d->final = true;
	return restore_child(d, buf) ? 1 : 0;
}

/* Once HELLO is accepted: the restore's process forked ahead; none if it cannot be. */
static void restore_ahead(struct mig_dst *d)
{
	pid_t worker = getpid();
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return;
	d->pre = fork();
	if (d->pre < 0) {
		d->pre = 0;
		close(p[0]);
		close(p[1]);
		return;
	}
	if (!d->pre) {
		close(p[1]);
		_exit(ahead_child(d, p[0], worker));
	}
	close(p[0]);
	d->pre_fd = p[1];
}

/* The restore forked ahead let go without restoring: it drops what it made. */
static void ahead_end(struct mig_dst *d)
{
	if (d->pre_fd >= 0)
		close(d->pre_fd);
	d->pre_fd = -1;
	if (d->pre)
		while (waitpid(d->pre, NULL, 0) < 0 && errno == EINTR)
			;
	d->pre = 0;
}

/* The restore forked ahead told to go (its pid), or 0 when there is none or it is gone. */
static pid_t ahead_go(struct mig_dst *d, const char *p)
{
	size_t len = strlen(p);
	pid_t pid = d->pre;
	bool ok;

	if (!pid)
		return 0;
	ok = write(d->pre_fd, &d->round, sizeof(int)) == (ssize_t)sizeof(int) &&
	     write(d->pre_fd, p, len) == (ssize_t)len;
	close(d->pre_fd);
	d->pre_fd = -1;
	if (ok) {
		d->pre = 0;
		return pid;
	}
	pr_warn("%s: the restore forked ahead is gone: forked again\n", d->peer);
	kill(pid, SIGKILL);
	ahead_end(d);
	return 0;
}

static int do_restore(struct mig_dst *d, char *p)
{
	pid_t pid;
	int st = 0, err;

	if (!d->final || d->ps)
		return refuse(d, MIG_ERROR, -EPROTO, "RESTORE before the final round is in");
	if (strstr(p, "lazy=1\n")) {
		err = start_lazy(d);
		if (err)
			return refuse(d, MIG_ERROR, err, "cannot start the lazy-pages daemon");
	}
	pid = ahead_go(d, p);
	if (!pid)
		pid = fork();
	if (pid < 0)
		return refuse(d, MIG_ERROR, neg_errno(), "cannot fork the restore");
	if (!pid)
		_exit(restore_child(d, p) ? 1 : 0);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return neg_errno();
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		pr_err("%s: the restore did not complete\n", d->peer);
		return -EIO;
	}
	d->running = true;
	return 0;
}

/* The conversation after HELLO: rounds, then the restore, then DONE. */
static int converse(struct mig_dst *d)
{
	struct mig_hdr h;
	int err;

	for (;;) {
		_cleanup_free_ char *p = NULL;

		err = mig_recv(d->fd, &h, &p);
		if (err)
			return d->running ? 0 : err;
		if (d->running && h.cmd != MIG_DONE)
			return refuse(d, MIG_ERROR, -EPROTO, "only DONE may follow RUNNING");
		switch (h.cmd) {
		case MIG_ROUND:
			err = do_round(d, &h, p);
			break;
		case MIG_FILE:
			err = do_file(d, &h, p);
			break;
		case MIG_ROUND_END:
			err = do_round_end(d, &h);
			break;
		case MIG_RESTORE:
			err = do_restore(d, p);
			break;
		case MIG_DONE:
			return d->running ? 0
					  : refuse(d, MIG_ERROR, -EPROTO, "DONE before RUNNING");
		default:
			err = refuse(d, MIG_ERROR, -EPROTO, "a message out of place");
		}
		if (err)
			return err;
	}
}

int mig_serve(const struct cr_options *o, int fd)
{
	struct mig_dst d = { .o = o, .fd = fd, .pre_fd = -1 };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[64] = "?", serv[16] = "?";
	int err;

	signal(SIGPIPE, SIG_IGN);
	tcp_set_liveness(fd, MIG_LINK_TIMEOUT_S);
	/*
	 * Each message at once: RESTORED follows the final round's OK within the
	 * source's delayed ACK (a restore of 15-20 ms), and Nagle held it back
	 * until that ACK came, 30-40 ms of the freeze (the source's end has it too)
	 */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	if (!getpeername(fd, (struct sockaddr *)&ss, &sl))
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv, sizeof(serv),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(d.peer, sizeof(d.peer), "source %s:%s", host, serv);
	err = do_hello(&d);
	if (!err)
		restore_ahead(&d);
	if (!err)
		err = converse(&d);
	ahead_end(&d);
	if (d.ps) {
		kill(d.ps, SIGKILL);
		wait_ps(&d);
	}
	end_lazy(&d);
	/* the images go either way: the tree runs from memory, or the source resumed */
	if (d.dir[0])
		rm_tree(d.dir);
	if (err)
		pr_errno(err, "%s: migration failed; nothing of it is left here", d.peer);
	else
		pr_info("%s: migration complete\n", d.peer);
	return err;
}

/* ADDRESS[:PORT] or [ADDRESS6]:PORT into @host and @port. */
static int split_endpoint(const char *s, char *host, size_t n, int *port)
{
	const char *colon;
	unsigned long ul = MIG_DEFAULT_PORT;
	size_t hl;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end)
			return -EINVAL;
		hl = (size_t)(end - s - 1);
		s++;
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] && !colon)
			return -EINVAL;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':')) /* a bare IPv6 address */
			colon = NULL;
		hl = colon ? (size_t)(colon - s) : strlen(s);
	}
	if (colon && (parse_ulong(colon + 1, &ul) || !ul || ul > 65535))
		return -EINVAL;
	if (!hl || hl >= n)
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	*port = (int)ul;
	return 0;
}

int mig_endpoint(const char *s, char *host, size_t n, int *port)
{
	return split_endpoint(s, host, n, port);
}

/* A service killed mid-migration left its incoming images: no worker owns them now. */
static void rm_stale(const char *dir)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	char path[PATH_MAX];
	struct dirent *de;

	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "incoming-", 9) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		pr_warn("removing %s, left by a migration that never ended\n", path);
		rm_tree(path);
	}
}

int mig_listen(const struct cr_options *o)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST };
	struct addrinfo *res = NULL;
	char host[64], ports[16];
	int port, fd, one = 1, err;

	if (split_endpoint(o->listen, host, sizeof(host), &port)) {
		pr_err("--listen %s: not ADDRESS[:PORT]\n", o->listen);
		return -EINVAL;
	}
	snprintf(ports, sizeof(ports), "%d", port);
	err = getaddrinfo(host, ports, &hints, &res);
	if (err) {
		pr_err("--listen %s: %s\n", o->listen, gai_strerror(err));
		return -EINVAL;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 8)) {
		err = neg_errno();
		pr_perror("cannot listen for migrations on %s", o->listen);
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return err;
	}
	freeaddrinfo(res);
	rm_stale(workdir(o));
	pr_info("listening for migrations on %s:%d, images into %s\n", host, port, workdir(o));
	return fd;
}
