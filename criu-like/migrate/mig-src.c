// SPDX-License-Identifier: GPL-2.0
/*
 * `criu-like migrate --online -t PID --to ADDRESS[:PORT]`, the source of a
 * live migration (Documentation/migration.md):
 *
 *   1. HELLO: the destination checks the protocol, the version, the features;
 *   2. pre-copy rounds while the tree runs: each a pre-dump (cr_pre_dump() in
 *      a child) whose pages go to the page server the destination starts for
 *      the round, its other images after them as FILE messages; they stop
 *      once the written set stops shrinking, is small, or after --rounds;
 *   3. the final dump (cr_dump(), tree frozen, its network locked), pages to
 *      the destination's page server; in its post-dump hook, the tree still
 *      frozen, the other images go, the destination restores up to its
 *      post-restore point (RESTORED) and the tree there runs on GO (RUNNING);
 *      only then does the hook return 0 and the dump kill the source tree.
 *
 * Any failure before RUNNING makes the hook (or the round) fail: the dump
 * resumes the tree and removes its network lock, as after any failed dump,
 * the write tracking of the pre-copy is dropped, and the destination, whose
 * connection ends, kills what it restored and removes what it received.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_PREFIX "migrate: "
#include "cr.h"
#include "dump.h"
#include "fault.h"
#include "image.h"
#include "inet-scan.h"
#include "log.h"
#include "migrate.h"
#include "notify.h"
#include "ns.h"
#include "stats.h"
#include "track.h"
#include "util.h"
#include "vmas-ahead.h"

#include "netns.pb-c.h"
#include "stats.pb-c.h"

/* A round that writes less than this is not worth another: the final dump copies it. */
#define MIG_SMALL_ROUND_PAGES 64

struct mig_src {
	const struct cr_options *o;
	int fd; /* the control connection */
	char host[64];
	int port;
	int round; /* the last round begun */
	int good; /* the last round completed on both ends */
	pid_t remote_pid; /* RUNNING's answer */
	bool restore_sent; /* RESTORE sent: the destination may have announced the addresses */
	uint64_t t_start, t_final, t_running; /* CLOCK_MONOTONIC ns */
};

static int src_connect(struct mig_src *s)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL, *ai;
	char ports[16];
	int one = 1, err;

	snprintf(ports, sizeof(ports), "%d", s->port);
	err = getaddrinfo(s->host, ports, &hints, &res);
	if (err) {
		pr_err("--to %s: %s\n", s->o->migrate_to, gai_strerror(err));
		return -EINVAL;
	}
	err = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		s->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s->fd < 0)
			continue;
		/* a cut link must end the migration, not hang it for the kernel's retries */
		tcp_set_liveness(s->fd, MIG_LINK_TIMEOUT_S);
		if (!connect(s->fd, ai->ai_addr, ai->ai_addrlen))
			break;
		err = neg_errno();
		close(s->fd);
		s->fd = -1;
	}
	freeaddrinfo(res);
	if (s->fd < 0) {
		pr_errno(err,
			 "cannot reach the destination %s port %d (is `criu-like service "
			 "--listen` running there?)",
			 s->host, s->port);
		return err;
	}
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static int src_hello(struct mig_src *s)
{
	char text[256];
	int64_t proto = MIG_PROTO_VERSION;

	/* for the tests of a refusal (Documentation/fault-injection.md) */
	if (fault_hit("migrate: HELLO with protocol version 0"))
		proto = 0;
	snprintf(text, sizeof(text), "version=%s\nneed=%s\ntree=%d\n", CRIU_LIKE_VERSION,
		 MIG_FEATURES, s->o->tree);
	return mig_send(s->fd, MIG_HELLO, proto, text, strlen(text))
		       ?: mig_expect(s->fd, MIG_OK, NULL, "HELLO");
}

static int round_path(const struct mig_src *s, int n, char *buf, size_t len)
{
	return snprintf(buf, len, "%s/%d", s->o->images_dir, n) >= (int)len ? -ENAMETOOLONG : 0;
}

/* ROUND: the destination's page server for round @n listens; its port. */
static int begin_round(struct mig_src *s, int n, const char *kind, int *port)
{
	int64_t arg = 0;
	int err;

	s->round = n;
	err = mig_send(s->fd, MIG_ROUND, n, kind, strlen(kind));
	if (!err)
		err = mig_expect(s->fd, MIG_OK, &arg, "ROUND");
	if (!err && (arg <= 0 || arg > 65535)) {
		pr_err("ROUND %d: the destination gave port %lld\n", n, (long long)arg);
		err = -EPROTO;
	}
	*port = (int)arg;
	return err;
}

/* One file of the round's directory @dfd, as FILE. */
static int send_file(struct mig_src *s, int dfd, const char *name)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	size_t nl = strlen(name) + 1;
	struct stat st;
	int err;

	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("round %d: cannot open %s", s->round, name);
		return neg_errno();
	}
	if ((uint64_t)st.st_size + nl > MIG_PAYLOAD_MAX) {
		pr_err("round %d: %s has %lld bytes: more than a migration carries (%u)\n",
		       s->round, name, (long long)st.st_size, MIG_PAYLOAD_MAX);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + nl);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, name, nl);
	err = read_all(fd, buf + nl, (size_t)st.st_size);
	if (err) {
		pr_errno(err, "round %d: cannot read %s", s->round, name);
		return err;
	}
	return mig_send(s->fd, MIG_FILE, s->round, buf, (size_t)st.st_size + nl);
}

static bool is_log(const char *name)
{
	size_t l = strlen(name);

	return l > 4 && !strcmp(name + l - 4, ".log");
}

/*
 * Every image of round @n but the pages (at the destination already), then
 * ROUND_END; its answer (the destination's page server ended its session and
 * the files are written) is end_round_ack()'s.
 */
static int end_round_send(struct mig_src *s, int n)
{
	char dir[PATH_MAX];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int err;

	err = round_path(s, n, dir, sizeof(dir));
	d = err ? NULL : opendir(dir);
	if (!d) {
		pr_perror("round %d: cannot read %s", n, dir);
		return err ?: neg_errno();
	}
	while ((de = readdir(d))) {
		if (de->d_type != DT_REG || is_log(de->d_name) ||
		    mig_name_check(de->d_name, strlen(de->d_name)))
			continue;
		err = send_file(s, dirfd(d), de->d_name);
		if (err)
			return err;
	}
	return mig_send(s->fd, MIG_ROUND_END, n, NULL, 0);
}

static int end_round_ack(struct mig_src *s, int n)
{
	int err = mig_expect(s->fd, MIG_OK, NULL, "ROUND_END");

	if (!err)
		s->good = n;
	return err;
}

static int end_round(struct mig_src *s, int n)
{
	return end_round_send(s, n) ?: end_round_ack(s, n);
}

/* The options of round @n's dump or pre-dump: its directory, its parent, the page server. */
static void round_opts(const struct mig_src *s, struct cr_options *ro, int n, int port, char *dir,
		       char *prev, size_t plen)
{
	*ro = *s->o;
	ro->images_dir = dir;
	ro->work_dir = NULL; /* stats-dump into the round's directory */
	snprintf(prev, plen, "../%d", n - 1);
	ro->prev_images_dir = n > 1 ? prev : NULL;
	ro->page_server = true;
	ro->address = s->host;
	ro->port = port;
	ro->leave_running = false;
	ro->tcp_established = true;
	ro->root = NULL; /* the destination's, sent with RESTORE */
	ro->action_script = NULL;
	ro->lazy_pages = false; /* the destination's restore is lazy, not this dump */
	ro->no_sync = true; /* sent to the destination and removed: never flushed */
}

/* The pages round @n wrote; -1 (a sentinel, printed as is) when its stats do not say. */
static int64_t round_pages(const struct mig_src *s, int n)
{
	char dir[PATH_MAX];
	_cleanup_close_ int dfd = -1;
	ProtobufCMessage *m = NULL;
	int64_t pages = -1;

	if (round_path(s, n, dir, sizeof(dir)))
		return pages; /* unknown */
	dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (dfd >= 0 && !img_read_one(dfd, CR_IMG_STATS_DUMP, 0, &m)) {
		const StatsEntry *se = (const StatsEntry *)m;

		if (se->dump)
			pages = (int64_t)se->dump->pages_written;
		protobuf_c_message_free_unpacked(m, NULL);
	}
	return pages;
}

/* More tasks than this: the others' smaps are read in the freeze, as without. */
#define MIG_AHEAD_TASKS 256

/* The tasks of the running tree (its threads' children, /proc/PID/task/TID/children). */
static unsigned int tree_pids(pid_t root, pid_t *pids, unsigned int max)
{
	unsigned int n = 1;

	pids[0] = root;
	for (unsigned int i = 0; i < n; i++) {
		char path[64];
		_cleanup_closedir_ DIR *d = NULL;
		struct dirent *de;

		snprintf(path, sizeof(path), "/proc/%d/task", pids[i]);
		d = opendir(path);
		while (d && (de = readdir(d)) && n < max) {
			char cpath[300];
			FILE *f;
			int c;

			if (de->d_name[0] == '.')
				continue;
			snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", pids[i],
				 de->d_name);
			f = fopen(cpath, "re");
			while (f && n < max && fscanf(f, "%d", &c) == 1)
				pids[n++] = c;
			if (f)
				fclose(f);
		}
	}
	return n;
}

/*
 * What a round's freeze would read otherwise, read while the tree runs:
 * its smaps (include/vmas-ahead.h), and for the final dump the socket fds
 * of the processes outside it (include/inet-scan.h).
 */
static void read_ahead(const struct mig_src *s, struct cr_options *ro, bool final)
{
	pid_t pids[MIG_AHEAD_TASKS];
	unsigned int n = tree_pids(s->o->tree, pids, MIG_AHEAD_TASKS);

	if (final)
		ro->inet_scan_ahead = inet_scan_ahead(pids, n);
	ro->vmas_ahead = vmas_ahead_read(pids, n);
}

static void read_ahead_free(struct cr_options *ro)
{
	vmas_ahead_free(ro->vmas_ahead);
	inet_scan_ahead_free(ro->inet_scan_ahead);
}

/* A pre-copy round: a pre-dump in a child (the engine is run once per process). */
/*
 * After the first pre-dump, the tree running: its veths into the round's
 * images, for the destination to make them before the final images come
 * (Documentation/migration.md, "The phases"). Best effort: without them the
 * destination makes them at RESTORE.
 */
static void links_ahead(const struct mig_src *s, const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = fd < 0 ? neg_errno() : ns_net_links_dump_ahead(s->o->tree, fd);

	if (err)
		pr_warn("round 1: the container's veths are not sent ahead: %s\n", strerror(-err));
}

static int pre_round(struct mig_src *s, int n)
{
	char dir[PATH_MAX], prev[32];
	struct cr_options ro;
	int port, st = 0, err;
	pid_t pid;

	err = round_path(s, n, dir, sizeof(dir));
	if (!err)
		err = begin_round(s, n, "pre", &port);
	if (err)
		return err;
	round_opts(s, &ro, n, port, dir, prev, sizeof(prev));
	pid = fork();
	if (pid < 0)
		return neg_errno();
	if (!pid) {
		close(s->fd);
		read_ahead(s, &ro, false);
		if (cr_pre_dump(&ro))
			_exit(1);
		if (n == 1)
			links_ahead(s, dir);
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return neg_errno();
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		pr_err("round %d: the pre-dump failed; the tree goes on\n", n);
		return -EIO;
	}
	return end_round(s, n);
}

/*
 * The restore's options: the root given to migrate, and the outside end of
 * each veth of the container under the name it had here, on the bridge of
 * the same name at the destination.
 */
static int restore_text(const struct mig_src *s, int dfd, char *buf, size_t n)
{
	_cleanup_closedir_ DIR *d = fdopendir(dup(dfd));
	struct dirent *de;
	size_t len = 0;
	unsigned int id;
	char tail;

	if (!d)
		return neg_errno();
	if (s->o->root)
		len += (size_t)snprintf(buf + len, n - len, "root=%s\n", s->o->root);
	if (s->o->lazy_pages)
		len += (size_t)snprintf(buf + len, n - len, "lazy=1\n");
	while ((de = readdir(d)) && len < n) {
		ProtobufCMessage *m = NULL;
		NetnsEntry *ne;
		size_t i;

		if (sscanf(de->d_name, "netns-%u.im%c", &id, &tail) != 2 || tail != 'g' ||
		    img_read_one(dfd, CR_IMG_NETNS, id, &m))
			continue;
		ne = (NetnsEntry *)m;
		for (i = 0; i < ne->n_links && len < n; i++) {
			const NetLinkEntry *l = ne->links[i];

			if (l->kind == NET_LINK_KIND__NET_LINK_VETH && l->peer_name &&
			    *l->peer_name)
				len += (size_t)snprintf(buf + len, n - len,
							"external=veth[%s]:%s\n", l->name,
							l->peer_name);
		}
		protobuf_c_message_free_unpacked(m, NULL);
	}
	return len < n ? (int)len : -ENAMETOOLONG;
}

/*
 * For the tests of a destination that dies with its copy made but held
 * (migrate-fail.sh f4): CRIU_LIKE_MIGRATE_GO_DELAY_MS=N waits up to N ms
 * (60 s at most) before GO, less when the destination closes the connection
 * meanwhile. The test kills it whenever it has looked at the copy held there:
 * no race with a fixed delay, which a loaded machine's test could overrun
 * (its kill landed after GO: both copies ran, the client's connection broke).
 */
static void go_delay(const struct mig_src *s)
{
	const char *e = getenv("CRIU_LIKE_MIGRATE_GO_DELAY_MS");
	struct pollfd p = { .fd = s->fd, .events = POLLRDHUP };
	unsigned long ms = 0;
	uint64_t end;
	int64_t left;

	pr_info("the destination holds the restored tree\n");
	if (!e || parse_ulong(e, &ms) || !ms)
		return;
	pr_info("GO in %lu ms (CRIU_LIKE_MIGRATE_GO_DELAY_MS)\n", ms);
	end = stats_now_ns() + (uint64_t)(ms > 60000 ? 60000 : ms) * 1000000;
	while ((left = (int64_t)(end - stats_now_ns()) / 1000000) > 0 && !p.revents)
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			break;
}

/*
 * Whether the destination has closed the connection (or it broke) before
 * GO: then it gets none. Its copy dies there without one, and the source
 * resumes at once rather than after GO, which would leave it unsure.
 */
static int peer_closed(const struct mig_src *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLRDHUP };

	if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return 0;
	pr_err("the destination closed the connection before GO: its copy dies there, the "
	       "source resumes\n");
	return -ECONNRESET;
}

static void mig_fwd_freep(struct mig_fwd **f)
{
	mig_fwd_free(*f);
}

/*
 * post-dump of the final dump, the tree frozen and its network locked: the
 * rest of the images, the restore there, GO, RUNNING. 0 lets the dump kill
 * the source tree; anything else makes it resume.
 */
static int final_hook(void *priv, const char *action, pid_t root __unused)
{
	struct mig_src *s = priv;
	char dir[PATH_MAX], text[MIG_TEXT_MAX];
	_cleanup_close_ int dfd = -1;
	_cleanup_(mig_fwd_freep) struct mig_fwd *fwd = NULL;
	int64_t arg = 0;
	uint64_t t0, t1, t2;
	int len, err;

	if (strcmp(action, CR_ACT_POST_DUMP))
		return 0;
	err = end_round_send(s, s->round);
	if (err)
		return err;
	err = round_path(s, s->round, dir, sizeof(dir));
	dfd = err ? -1 : open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	len = dfd < 0 ? neg_errno() : restore_text(s, dfd, text, sizeof(text));
	if (len < 0)
		return len;
	/*
	 * RESTORE right behind ROUND_END, before its OK: the destination takes
	 * them in order (an ERROR to ROUND_END ends the conversation there), and
	 * the round trip between them is not frozen time.
	 */
	s->restore_sent = true;
	err = mig_send(s->fd, MIG_RESTORE, 0, text, (size_t)len);
	/* made while the destination restores: after GO only the packets go */
	t0 = stats_now_ns();
	if (!err && !s->o->no_packet_hold)
		fwd = mig_fwd_prepare(dfd);
	t1 = stats_now_ns();
	if (!err)
		err = end_round_ack(s, s->round);
	t2 = stats_now_ns();
	if (!err)
		err = mig_expect(s->fd, MIG_RESTORED, NULL, "RESTORE");
	if (!err)
		pr_debug("RESTORED %llu us after RESTORE: the forward made in %llu us, the round's "
			 "OK %llu us later\n",
			 (unsigned long long)(stats_now_ns() - t0) / 1000,
			 (unsigned long long)(t1 - t0) / 1000,
			 (unsigned long long)(t2 - t1) / 1000);
	if (err)
		return err;
	go_delay(s);
	err = peer_closed(s);
	if (err)
		return err;
	/* from GO on the destination's copy runs: the source's must not come back */
	err = mig_send(s->fd, MIG_GO, 0, NULL, 0);
	/* what the peers sent here since the lock: to the destination, which holds it */
	if (!err)
		mig_fwd_send(fwd);
	if (!err)
		err = mig_expect(s->fd, MIG_RUNNING, &arg, "GO");
	if (err) {
		pr_err("no RUNNING after GO: the destination may run the tree; the source resumes "
		       "(Documentation/migration.md, \"After GO\")\n");
		return err;
	}
	s->remote_pid = (pid_t)arg;
	s->t_running = stats_now_ns();
	return 0;
}

static int final_round(struct mig_src *s, int n)
{
	struct cr_notifier hook = { .notify = final_hook, .priv = s };
	char dir[PATH_MAX], prev[32];
	struct cr_options ro;
	int port, err;

	err = round_path(s, n, dir, sizeof(dir));
	if (!err)
		err = begin_round(s, n, "final", &port);
	if (err)
		return err;
	round_opts(s, &ro, n, port, dir, prev, sizeof(prev));
	ro.notifier = &hook;
	read_ahead(s, &ro, true);
	s->t_final = stats_now_ns();
	err = cr_dump(&ro);
	read_ahead_free(&ro);
	return err;
}

/* After a failure: the tracking a round's keeper holds ends, the tree's memory unprotected. */
static void drop_tracking(const struct mig_src *s)
{
	char dir[PATH_MAX];
	_cleanup_close_ int dfd = -1;
	struct track_set ts = { 0 };

	if (!s->good || round_path(s, s->good, dir, sizeof(dir)))
		return;
	dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (dfd >= 0 && !track_keeper_take(dfd, dir, &ts))
		track_set_fini(&ts);
}

/* Pre-copy: rounds until the written set stops shrinking, is small, or --rounds. */
static int pre_copy(struct mig_src *s)
{
	int64_t pages, last = -1;
	int n, err;

	for (n = 1; n <= (int)s->o->rounds; n++) {
		err = pre_round(s, n);
		if (err)
			return err;
		pages = round_pages(s, n);
		pr_info("round %d: %lld pages copied while the tree ran\n", n, (long long)pages);
		printf("round %d: %lld pages\n", n, (long long)pages);
		if (pages < 0 || (n > 1 && pages < MIG_SMALL_ROUND_PAGES) ||
		    (last >= 0 && pages >= last))
			break;
		last = pages;
	}
	return 0;
}

static int mkdir_p(const char *path)
{
	if (mkdir(path, 0700) && errno != EEXIST) {
		pr_perror("cannot create %s", path);
		return neg_errno();
	}
	return 0;
}

int cr_migrate(const struct cr_options *o)
{
	struct mig_src s = { .o = o, .fd = -1 };
	int err;

	if (o->tree <= 0 || !o->migrate_to) {
		pr_err("migrate needs -t PID and --to ADDRESS[:PORT]\n");
		return -EINVAL;
	}
	if (mig_endpoint(o->migrate_to, s.host, sizeof(s.host), &s.port)) {
		pr_err("--to %s: not ADDRESS[:PORT]\n", o->migrate_to);
		return -EINVAL;
	}
	s.t_start = stats_now_ns();
	err = mkdir_p(o->images_dir);
	if (!err)
		err = src_connect(&s);
	if (!err)
		err = src_hello(&s);
	if (!err && o->online)
		err = pre_copy(&s);
	if (!err)
		err = final_round(&s, s.round + 1);
	if (err) {
		drop_tracking(&s);
		/* the destination may have moved the switches' entries: back here */
		if (s.restore_sent && net_announce(o->tree))
			pr_warn("the tree's addresses were not announced again here\n");
		if (s.fd >= 0)
			close(s.fd);
		pr_errno(err, "migration of %d to %s failed; the tree runs on here", o->tree,
			 o->migrate_to);
		return err;
	}
	mig_send(s.fd, MIG_DONE, 0, NULL, 0);
	close(s.fd);
	printf("migrated %d to %s: pid %d there, %d round%s, %.1f ms from the final dump to "
	       "RUNNING, %.1f ms in all\n",
	       o->tree, o->migrate_to, s.remote_pid, s.round, s.round == 1 ? "" : "s",
	       (double)(s.t_running - s.t_final) / 1e6, (double)(stats_now_ns() - s.t_start) / 1e6);
	return 0;
}
