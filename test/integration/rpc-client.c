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
 * conversation), unknown_field (1: append field number 200 to criu_opts).
 * Prints one line per notification ("notify NAME PID") and one for the
 * answer ("resp TYPE success=N errno=N pid=N ... errmsg=..."); exits 0 when
 * the answer says success, 1 when it does not, 2 on a broken conversation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static int connect_to(const char *spec, pid_t *child)
{
	int sv[2];

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
		if (dup2(sv[1], 3) < 0)
			_exit(127);
		execl(spec + 5, spec + 5, "swrk", "3", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
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

static CriuResp *recv_resp(int sk)
{
	static uint8_t buf[1 << 16];
	ssize_t n = recv(sk, buf, sizeof(buf), 0);
	CriuResp *r;

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
	return -1;
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

			printf("notify %s %d\n", r->notify->script,
			       r->notify->has_pid ? r->notify->pid : 0);
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
	    type == CRIU_REQ_TYPE__PRE_DUMP)
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
	sk = connect_to(argv[1], &child);
	ret = one_request(sk, argv[2], argc - 3, argv + 3);
	then = arg(argc - 3, argv + 3, "then");
	if (!ret && then)
		ret = one_request(sk, then, argc - 3, argv + 3);
	close(sk);
	if (child > 0 && waitpid(child, &status, 0) == child)
		printf("swrk exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	return ret;
}
