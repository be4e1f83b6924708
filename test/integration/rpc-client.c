// SPDX-License-Identifier: GPL-2.0
/*
 * A CRIU RPC client for the integration tests (test/integration/rpc-*.sh):
 * speaks the protocol of images/rpc.proto as go-criu and libcriu do.
 *
 *   rpc-client swrk:CRIU_LIKE|unix:SOCKET REQUEST [KEY=VALUE...]
 *
 * REQUEST: version check feature dump restore wait pre-dump page-server
 * cpuinfo-dump cpuinfo-check notify empty, or raw: garbage truncated
 * oversized badtype. KEY: dir (opened, sent as images_dir_fd), images_dir,
 * workdir, pid, log_file, log_level, leave_running, shell_job,
 * tcp_established, ext_unix_sk, file_locks, track_mem, inherit_fd
 * (KEY:FD), network_lock (1-3), timeout, notify (1: answer every
 * notification with success), notify_fail (NAME: answer it with failure),
 * drop_at (NAME: close the connection when it comes), pause_at (NAME: wait
 * 5 s before answering it), drop (1: close right
 * after sending), keep_open, then (a second request on the same
 * conversation), unknown_field (1: append field number 200 to criu_opts),
 * ps_address, ps_port (criu_opts.ps), ps_connect (ADDR:PORT: connected
 * here, given to swrk as its fd 4, sent as ps.fd), status_fd (1: a pipe's
 * write end; "status_fd ready" is printed when its byte came with the
 * answer), cpu_cap, lazy_pages, tls, tls_no_cn_verify, tls_cacert,
 * tls_cacrl, tls_cert, tls_key, orphan_pts_master, cpu_cap.
 * Prints one line per notification ("notify NAME PID", with " fd=MODE" when
 * a descriptor came with it: its file type from fstat) and one for the
 * answer ("resp TYPE success=N errno=N pid=N ... errmsg=..."); exits 0 when
 * the answer says success, 1 when it does not, 2 on a broken conversation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpc.pb-c.h"

static const char *arg(int argc, char **argv, const char *key)
{
	size_t n = strlen(key);
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
	return NULL;
}

static int status_pipe[2] = { -1, -1 };

/* ps_connect=ADDR:PORT: a TCP connection to the page server, or -ENOENT when not asked for */
static int ps_connect(int argc, char **argv)
{
	const char *v = arg(argc, argv, "ps_connect");
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char host[64];
	const char *colon;
	int fd;

	if (!v || !(colon = strrchr(v, ':')))
		return -ENOENT;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - v), v);
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("ps_connect");
		exit(2);
	}
	return fd;
}

static int connect_to(const char *spec, pid_t *child, int argc, char **argv)
{
	int sv[2], psfd = ps_connect(argc, argv);

	*child = 0;
	if (!strncmp(spec, "unix:", 5)) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", spec + 5);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			perror("connect");
			exit(2);
		}
		return fd;
	}
	if (strncmp(spec, "swrk:", 5) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		fprintf(stderr, "bad target %s\n", spec);
		exit(2);
	}
	*child = fork();
	if (*child == 0) {
		/* as go-criu: the socket is fd 3 of `criu swrk 3` */
		close(sv[0]);
		/* out of the way of 3 and 4 first */
		if (psfd >= 0 && (psfd = fcntl(psfd, F_DUPFD, 10)) < 0)
			_exit(127);
		if (dup2(sv[1], 3) < 0 || (psfd >= 0 && dup2(psfd, 4) < 0))
			_exit(127);
		execl(spec + 5, spec + 5, "swrk", "3", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	if (psfd >= 0)
		close(psfd);
	return sv[0];
}

static void send_raw(int sk, const void *buf, size_t len)
{
	if (send(sk, buf, len, 0) != (ssize_t)len) {
		perror("send");
		exit(2);
	}
}

static void send_req(int sk, const CriuReq *req)
{
	size_t len = criu_req__get_packed_size(req);
	uint8_t *buf = malloc(len + 8);

	criu_req__pack(req, buf);
	send_raw(sk, buf, len);
	free(buf);
}

static int got_fd = -1; /* a descriptor that came with the last message */

static CriuResp *recv_resp(int sk)
{
	static uint8_t buf[1 << 16];
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.b,
			     .msg_controllen = sizeof(ctl.b) };
	ssize_t n = recvmsg(sk, &mh, MSG_CMSG_CLOEXEC);
	struct cmsghdr *cm;
	CriuResp *r;

	got_fd = -1;
	cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&got_fd, CMSG_DATA(cm), sizeof(int));

	if (n <= 0) {
		printf("closed\n");
		return NULL;
	}
	r = criu_resp__unpack(NULL, (size_t)n, buf);
	if (!r) {
		printf("bad response (%zd bytes)\n", n);
		exit(2);
	}
	return r;
}

static const char *tname(int type)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(&criu_req_type__descriptor, type);

	return v ? v->name : "?";
}

static int type_of(const char *s)
{
	static const struct {
		const char *name;
		int type;
	} t[] = {
		{ "version", CRIU_REQ_TYPE__VERSION },
		{ "check", CRIU_REQ_TYPE__CHECK },
		{ "feature", CRIU_REQ_TYPE__FEATURE_CHECK },
		{ "dump", CRIU_REQ_TYPE__DUMP },
		{ "restore", CRIU_REQ_TYPE__RESTORE },
		{ "wait", CRIU_REQ_TYPE__WAIT_PID },
		{ "pre-dump", CRIU_REQ_TYPE__PRE_DUMP },
		{ "page-server", CRIU_REQ_TYPE__PAGE_SERVER },
		{ "page-server-chld", CRIU_REQ_TYPE__PAGE_SERVER_CHLD },
		{ "cpuinfo-dump", CRIU_REQ_TYPE__CPUINFO_DUMP },
		{ "cpuinfo-check", CRIU_REQ_TYPE__CPUINFO_CHECK },
		{ "notify", CRIU_REQ_TYPE__NOTIFY },
		{ "empty", CRIU_REQ_TYPE__EMPTY },
		{ "badtype", 99 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].name))
			return t[i].type;
	return -ENOENT; /* not a request type: a special message (send_special()) */
}

#define BOOL_OPT(key, field)                      \
	do {                                      \
		if ((v = arg(argc, argv, key))) { \
			o->has_##field = true;    \
			o->field = atoi(v);       \
		}                                 \
	} while (0)

static void fill_opts(CriuOpts *o, int argc, char **argv)
{
	static InheritFd ifd = INHERIT_FD__INIT;
	static InheritFd *ifds[1] = { &ifd };
	const char *v;

	if ((v = arg(argc, argv, "dir"))) {
		o->images_dir_fd = open(v, O_RDONLY | O_DIRECTORY);
		if (o->images_dir_fd < 0) {
			perror(v);
			exit(2);
		}
	}
	if ((v = arg(argc, argv, "images_dir_fd")))
		o->images_dir_fd = atoi(v);
	if ((v = arg(argc, argv, "images_dir")))
		o->images_dir = (char *)v;
	if ((v = arg(argc, argv, "workdir"))) {
		o->has_work_dir_fd = true;
		o->work_dir_fd = open(v, O_RDONLY | O_DIRECTORY);
	}
	if ((v = arg(argc, argv, "parent_img")))
		o->parent_img = (char *)v;
	if ((v = arg(argc, argv, "log_file")))
		o->log_file = (char *)v;
	if ((v = arg(argc, argv, "inherit_fd"))) {
		ifd.key = (char *)v;
		ifd.fd = 0;
		o->n_inherit_fd = 1;
		o->inherit_fd = ifds;
	}
	BOOL_OPT("pid", pid);
	BOOL_OPT("log_level", log_level);
	BOOL_OPT("leave_running", leave_running);
	BOOL_OPT("shell_job", shell_job);
	BOOL_OPT("tcp_established", tcp_established);
	BOOL_OPT("ext_unix_sk", ext_unix_sk);
	BOOL_OPT("file_locks", file_locks);
	BOOL_OPT("track_mem", track_mem);
	BOOL_OPT("network_lock", network_lock);
	BOOL_OPT("timeout", timeout);
	BOOL_OPT("cpu_cap", cpu_cap);
	BOOL_OPT("lazy_pages", lazy_pages);
	BOOL_OPT("tls", tls);
	BOOL_OPT("tls_no_cn_verify", tls_no_cn_verify);
	BOOL_OPT("orphan_pts_master", orphan_pts_master);
	if ((v = arg(argc, argv, "tls_cacert")))
		o->tls_cacert = (char *)v;
	if ((v = arg(argc, argv, "tls_cacrl")))
		o->tls_cacrl = (char *)v;
	if ((v = arg(argc, argv, "tls_cert")))
		o->tls_cert = (char *)v;
	if ((v = arg(argc, argv, "tls_key")))
		o->tls_key = (char *)v;
	if (arg(argc, argv, "ps_address") || arg(argc, argv, "ps_port") ||
	    arg(argc, argv, "ps_connect")) {
		static CriuPageServerInfo ps = CRIU_PAGE_SERVER_INFO__INIT;

		ps.address = (char *)arg(argc, argv, "ps_address");
		if ((v = arg(argc, argv, "ps_port"))) {
			ps.has_port = true;
			ps.port = atoi(v);
		}
		if (arg(argc, argv, "ps_connect")) {
			ps.has_fd = true;
			ps.fd = 4; /* swrk's, connect_to() */
		}
		o->ps = &ps;
	}
	if (arg(argc, argv, "status_fd") && status_pipe[1] < 0) {
		if (pipe(status_pipe)) {
			perror("pipe");
			exit(2);
		}
	}
	if (status_pipe[1] >= 0) {
		o->has_status_fd = true;
		o->status_fd = status_pipe[1];
	}
	if (arg(argc, argv, "notify") || arg(argc, argv, "notify_fail") ||
	    arg(argc, argv, "drop_at") || arg(argc, argv, "pause_at")) {
		o->has_notify_scripts = true;
		o->notify_scripts = true;
	}
}

static void print_resp(const CriuResp *r)
{
	printf("resp %s success=%d", tname(r->type), r->success);
	if (r->has_cr_errno)
		printf(" errno=%d", r->cr_errno);
	if (r->restore)
		printf(" pid=%d", r->restore->pid);
	if (r->version)
		printf(" version=%d.%d.%d extra=%d name=%s", r->version->major_number,
		       r->version->minor_number, r->version->sublevel, r->version->extra,
		       r->version->name ? r->version->name : "");
	if (r->features)
		printf(" mem_track=%d/%d lazy_pages=%d/%d pidfd_store=%d/%d",
		       r->features->has_mem_track, r->features->mem_track,
		       r->features->has_lazy_pages, r->features->lazy_pages,
		       r->features->has_pidfd_store, r->features->pidfd_store);
	if (r->has_status)
		printf(" status=%d", r->status);
	if (r->ps)
		printf(" ps_pid=%d ps_port=%d", r->ps->has_pid ? r->ps->pid : 0,
		       r->ps->has_port ? r->ps->port : 0);
	if (r->cr_errmsg)
		printf(" errmsg=%s", r->cr_errmsg);
	printf("\n");
	fflush(stdout);
}

/* Notifications until the answer; 0 success, 1 failure, 2 broken. */
static int converse(int sk, int argc, char **argv)
{
	const char *fail = arg(argc, argv, "notify_fail"), *drop = arg(argc, argv, "drop_at");
	const char *pause = arg(argc, argv, "pause_at");
	CriuResp *r;
	int ret;

	while ((r = recv_resp(sk))) {
		if (r->type == CRIU_REQ_TYPE__NOTIFY && r->notify) {
			CriuReq a = CRIU_REQ__INIT;

			printf("notify %s %d", r->notify->script,
			       r->notify->has_pid ? r->notify->pid : 0);
			if (got_fd >= 0) {
				struct stat st;

				if (!fstat(got_fd, &st))
					printf(" fd=%s", S_ISCHR(st.st_mode)	? "chr"
							 : S_ISFIFO(st.st_mode) ? "fifo"
										: "other");
				close(got_fd);
			}
			printf("\n");
			fflush(stdout);
			if (drop && !strcmp(drop, r->notify->script))
				exit(3);
			if (pause && !strcmp(pause, r->notify->script))
				sleep(5);
			a.type = CRIU_REQ_TYPE__NOTIFY;
			a.has_notify_success = true;
			a.notify_success = !(fail && !strcmp(fail, r->notify->script));
			send_req(sk, &a);
			criu_resp__free_unpacked(r, NULL);
			continue;
		}
		print_resp(r);
		if (status_pipe[0] >= 0) {
			char c = 1;

			close(status_pipe[1]);
			status_pipe[1] = -1;
			fcntl(status_pipe[0], F_SETFL, O_NONBLOCK);
			if (read(status_pipe[0], &c, 1) == 1 && c == 0)
				printf("status_fd ready\n");
		}
		ret = r->success ? 0 : 1;
		criu_resp__free_unpacked(r, NULL);
		return ret;
	}
	return 2;
}

static void send_special(int sk, const char *what)
{
	CriuReq req = CRIU_REQ__INIT;
	uint8_t buf[64];
	size_t len;

	if (!strcmp(what, "garbage")) {
		memset(buf, 0xff, sizeof(buf));
		send_raw(sk, buf, sizeof(buf));
	} else if (!strcmp(what, "truncated")) {
		CriuOpts o = CRIU_OPTS__INIT;

		req.type = CRIU_REQ_TYPE__DUMP;
		req.opts = &o;
		o.log_file = "a-long-enough-name.log";
		len = criu_req__get_packed_size(&req);
		criu_req__pack(&req, buf);
		send_raw(sk, buf, len - 5);
	} else {
		size_t big = (128 << 10);
		uint8_t *p = calloc(1, big);

		send_raw(sk, p, big);
		free(p);
	}
}

static int one_request(int sk, const char *what, int argc, char **argv)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuOpts opts = CRIU_OPTS__INIT;
	CriuFeatures f = CRIU_FEATURES__INIT;
	int type = type_of(what);
	const char *v;

	if (type < 0) {
		send_special(sk, what);
		return converse(sk, argc, argv);
	}
	req.type = type;
	fill_opts(&opts, argc, argv);
	if (type == CRIU_REQ_TYPE__DUMP || type == CRIU_REQ_TYPE__RESTORE ||
	    type == CRIU_REQ_TYPE__PRE_DUMP || type == CRIU_REQ_TYPE__PAGE_SERVER ||
	    type == CRIU_REQ_TYPE__PAGE_SERVER_CHLD || type == CRIU_REQ_TYPE__CPUINFO_DUMP ||
	    type == CRIU_REQ_TYPE__CPUINFO_CHECK)
		req.opts = &opts;
	if (type == CRIU_REQ_TYPE__FEATURE_CHECK) {
		f.has_mem_track = f.has_lazy_pages = f.has_pidfd_store = true;
		f.mem_track = f.lazy_pages = f.pidfd_store = true;
		req.features = &f;
	}
	if ((v = arg(argc, argv, "pid")) && type == CRIU_REQ_TYPE__WAIT_PID) {
		req.has_pid = true;
		req.pid = (uint32_t)atoi(v);
	}
	if (arg(argc, argv, "keep_open"))
		req.has_keep_open = req.keep_open = true;
	if (arg(argc, argv, "unknown_field") && req.opts) {
		/* criu_opts with field 200 (varint 1) appended: a newer client's option */
		size_t len = criu_opts__get_packed_size(&opts);
		uint8_t *ob = malloc(len + 3), *rb;
		size_t rl = 0;

		criu_opts__pack(&opts, ob);
		ob[len] = 0xc0; /* tag (200 << 3 | 0) = 1600: 0xc0 0x0c */
		ob[len + 1] = 0x0c;
		ob[len + 2] = 0x01;
		rb = malloc(len + 16);
		rb[rl++] = 0x08; /* field 1 varint: type */
		rb[rl++] = (uint8_t)type;
		rb[rl++] = 0x12; /* field 2 bytes: opts */
		rb[rl++] = (uint8_t)(len + 3); /* short requests only */
		memcpy(rb + rl, ob, len + 3);
		send_raw(sk, rb, rl + len + 3);
		return converse(sk, argc, argv);
	}
	send_req(sk, &req);
	if (arg(argc, argv, "drop"))
		exit(3);
	return converse(sk, argc, argv);
}

int main(int argc, char **argv)
{
	const char *then;
	pid_t child;
	int sk, ret, status;

	if (argc < 3) {
		fprintf(stderr, "usage: %s swrk:CRIU|unix:SOCKET REQUEST [KEY=VALUE...]\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sk = connect_to(argv[1], &child, argc - 3, argv + 3);
	ret = one_request(sk, argv[2], argc - 3, argv + 3);
	then = arg(argc - 3, argv + 3, "then");
	if (!ret && then)
		ret = one_request(sk, then, argc - 3, argv + 3);
	close(sk);
	if (child > 0 && waitpid(child, &status, 0) == child)
		printf("swrk exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	return ret;
}
