// SPDX-License-Identifier: GPL-2.0
/*
 * One RPC conversation: read a criu_req, answer it with one criu_resp (after
 * any notifications), again while the request said keep_open. The requests
 * run the same engine functions as the command line, with the options the
 * request's criu_opts translate to (opts.c). Every failure is answered:
 * success = false, cr_errno, and cr_errmsg naming what failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_PREFIX "rpc: "
#include "cpuinfo.h"
#include "cr.h"
#include "dump.h"
#include "kerndat.h"
#include "lazy.h"
#include "log.h"
#include "notify.h"
#include "page-server.h"
#include "restore.h"
#include "rpc-int.h"
#include "util.h"

static const char *req_name(CriuReqType type)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(&criu_req_type__descriptor, (int)type);

	return v ? v->name : "unknown";
}

/* success = false, with the errno and the message that say why. */
static int send_error(int sk, CriuReqType type, int err, const char *msg)
{
	CriuResp resp = CRIU_RESP__INIT;

	resp.type = type;
	resp.success = false;
	if (err) {
		resp.has_cr_errno = true;
		resp.cr_errno = err < 0 ? -err : err;
	}
	resp.cr_errmsg = (char *)msg;
	pr_warn("%s refused: %s\n", req_name(type), msg);
	return rpc_send_resp(sk, &resp);
}

/* The message of a failed engine call: its first error, else strerror. */
static int send_failure(int sk, CriuReqType type, int err)
{
	char msg[640];
	const char *first = log_first_error();

	snprintf(msg, sizeof(msg), "%s failed: %s", req_name(type),
		 *first ? first : strerror(err < 0 ? -err : EIO));
	return send_error(sk, type, err, msg);
}

static int handle_version(int sk, const CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuVersion v = CRIU_VERSION__INIT;
	char name[64];
	int a = 0, b = 0, c = 0;

	sscanf(CRIU_LIKE_VERSION, "%d.%d.%d", &a, &b, &c);
	snprintf(name, sizeof(name), "criu-like %s", CRIU_LIKE_VERSION);
	/* no gitid: go-criu would count a git build as the next minor version */
	v.major_number = RPC_CRIU_MAJOR;
	v.minor_number = RPC_CRIU_MINOR;
	v.has_sublevel = true;
	v.sublevel = RPC_CRIU_SUBLEVEL;
	v.has_extra = true;
	v.extra = a * 10000 + b * 100 + c; /* criu-like's own, as runtimes count */
	v.name = name;
	resp.type = req->type;
	resp.success = true;
	resp.version = &v;
	return rpc_send_resp(sk, &resp);
}

/* CHECK: the kernel has what dump and restore need (criu-like check, without the table). */
static int handle_check(int sk, const CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	enum kd_feature missing[KD__MAX];
	struct kerndat kd;
	unsigned int nr = 0;
	int err;

	err = kerndat_probe(&kd);
	if (!err)
		err = kd_check_required(&kd, missing, &nr);
	if (err && nr)
		return send_error(sk, req->type, -ENOTSUP,
				  "CHECK: the kernel lacks features dump and restore need "
				  "(criu-like check lists them)");
	if (err)
		return send_failure(sk, req->type, err);
	resp.type = req->type;
	resp.success = true;
	return rpc_send_resp(sk, &resp);
}

/* Memory tracking needs uffd write-protection in async mode and PAGEMAP_SCAN (memory.md). */
static bool rpc_mem_track_ok(void)
{
	struct kerndat kd;

	memset(&kd, 0, sizeof(kd));
	kerndat_probe_one(&kd, KD_UFFD_WP_ASYNC);
	kerndat_probe_one(&kd, KD_PAGEMAP_SCAN);
	return kerndat_has(&kd, KD_UFFD_WP_ASYNC) && kerndat_has(&kd, KD_PAGEMAP_SCAN);
}

/* FEATURE_CHECK: an answer for each feature asked, false while it does not exist. */
static int handle_feature_check(int sk, const CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuFeatures f = CRIU_FEATURES__INIT;

	if (!req->features)
		return send_error(sk, req->type, -EINVAL,
				  "FEATURE_CHECK: the request has no features to check");
	/*
	 * As CRIU: each feature asked (true) answered. Memory tracking (pre-dump,
	 * --track-mem) is there when the kernel has userfaultfd write-protection
	 * and PAGEMAP_SCAN; lazy pages when it has userfaultfd with the events the
	 * lazy-pages daemon follows; the pidfd store (pidfd_store_sk) does not
	 * exist in criu-like: false.
	 */
	f.has_mem_track = req->features->has_mem_track;
	f.mem_track = f.has_mem_track && req->features->mem_track && rpc_mem_track_ok();
	f.has_lazy_pages = req->features->has_lazy_pages;
	f.lazy_pages = f.has_lazy_pages && req->features->lazy_pages && lazy_restore_possible();
	f.has_pidfd_store = req->features->has_pidfd_store;
	f.pidfd_store = false;
	resp.type = req->type;
	resp.success = true;
	resp.features = &f;
	return rpc_send_resp(sk, &resp);
}

static int handle_wait_pid(int sk, const CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	char msg[128];
	int status;

	if (!req->has_pid || !req->pid || req->pid > 0x3fffffff)
		return send_error(sk, req->type, -EINVAL, "WAIT_PID: no pid, or not a pid");
	while (waitpid((pid_t)req->pid, &status, 0) < 0) {
		if (errno == EINTR)
			continue;
		snprintf(msg, sizeof(msg),
			 "WAIT_PID: pid %u is not a child of this criu-like (restored "
			 "in this conversation): %m",
			 req->pid);
		return send_error(sk, req->type, -errno, msg);
	}
	resp.type = req->type;
	resp.success = true;
	resp.has_status = true;
	resp.status = status;
	return rpc_send_resp(sk, &resp);
}

/* A descriptor of the caller, as CRIU opens it: /proc/PEER/fd/N. */
static int open_caller_dir(const struct rpc_conv *c, int fd, const char *field, char *msg,
			   size_t size)
{
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", c->peer_pid, fd);
	ret = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ret < 0)
		snprintf(msg, size, "criu_opts.%s: cannot open fd %d of the caller (pid %d): %m",
			 field, fd, c->peer_pid);
	return ret;
}

/* Options, caller's directories and the log of a dump or restore. */
struct rpc_run {
	struct cr_options o;
	int images_fd, work_fd, status_fd;
	char images_path[32], work_path[32], log_path[96];
};

static void rpc_run_fini(struct rpc_run *r)
{
	if (r->status_fd >= 0)
		close(r->status_fd);
	if (r->images_fd >= 0)
		close(r->images_fd);
	if (r->work_fd >= 0)
		close(r->work_fd);
	cr_options_fini(&r->o);
	log_close();
}

static const char *default_log(CriuReqType type)
{
	switch (type) {
	case CRIU_REQ_TYPE__DUMP:
		return "dump.log";
	case CRIU_REQ_TYPE__PRE_DUMP:
		return "pre-dump.log";
	case CRIU_REQ_TYPE__PAGE_SERVER:
	case CRIU_REQ_TYPE__PAGE_SERVER_CHLD:
		return "page-server.log";
	case CRIU_REQ_TYPE__CPUINFO_DUMP:
		return "cpuinfo-dump.log";
	case CRIU_REQ_TYPE__CPUINFO_CHECK:
		return "cpuinfo-check.log";
	default:
		return "restore.log";
	}
}

static int rpc_run_setup(struct rpc_conv *c, const CriuReq *req, struct rpc_run *r, char *msg,
			 size_t size)
{
	const char *dir, *file;
	struct rpc_opts ro;
	int err;

	if (!req->opts) {
		snprintf(msg, size, "%s: the request has no opts", req_name(req->type));
		return -EINVAL;
	}
	err = rpc_opts_translate(req->opts, req->type, &r->o, &ro, msg, size);
	if (err)
		return err;
	if (c->service && r->o.n_inherit_fd) {
		snprintf(msg, size,
			 "criu_opts.inherit_fd: the daemon holds none of the caller's fds "
			 "(swrk inherits them)");
		return -EOPNOTSUPP;
	}
	if (ro.ps_fd >= 0) {
		/* as CRIU: swrk's own fd, inherited from the caller (runc's way) */
		if (c->service) {
			snprintf(msg, size,
				 "criu_opts.ps.fd: the daemon holds none of the caller's fds "
				 "(swrk inherits them)");
			return -EOPNOTSUPP;
		}
		int type = 0;
		socklen_t tl = sizeof(type);

		if (ro.ps_fd <= STDERR_FILENO || ro.ps_fd == c->sk ||
		    getsockopt(ro.ps_fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_STREAM) {
			snprintf(msg, size,
				 "criu_opts.ps.fd: %d is not a stream socket swrk inherited (a "
				 "connection to or from the page server)",
				 ro.ps_fd);
			return -EBADF;
		}
		r->o.ps_sock_fd = ro.ps_fd;
	}
	if (ro.status_fd >= 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", c->peer_pid, ro.status_fd);
		r->status_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (r->status_fd < 0) {
			snprintf(
				msg, size,
				"criu_opts.status_fd: cannot open fd %d of the caller (pid %d): %m",
				ro.status_fd, c->peer_pid);
			return neg_errno();
		}
	}
	if (ro.images_dir_fd >= 0) {
		r->images_fd = open_caller_dir(c, ro.images_dir_fd, "images_dir_fd", msg, size);
		if (r->images_fd < 0)
			return neg_errno();
		snprintf(r->images_path, sizeof(r->images_path), "/proc/self/fd/%d", r->images_fd);
		r->o.images_dir = r->images_path;
	}
	if (ro.work_dir_fd >= 0) {
		r->work_fd = open_caller_dir(c, ro.work_dir_fd, "work_dir_fd", msg, size);
		if (r->work_fd < 0)
			return neg_errno();
		snprintf(r->work_path, sizeof(r->work_path), "/proc/self/fd/%d", r->work_fd);
		r->o.work_dir = r->work_path;
	}
	c->notify = ro.notify;
	r->o.notifier = &c->notifier;
	/* the log: log_file in the work directory, dump.log / restore.log by default */
	log_set_level(r->o.log_level);
	file = r->o.log_file ? r->o.log_file : default_log(req->type);
	if (!strcmp(file, "-"))
		return 0;
	dir = r->o.work_dir ? r->o.work_dir : r->o.images_dir;
	snprintf(r->log_path, sizeof(r->log_path), "%s/%s", dir, file);
	err = log_set_file(r->log_path);
	if (err) {
		errno = -err;
		snprintf(msg, size, "criu_opts.log_file: cannot open %s in the work directory: %m",
			 file);
	}
	return err;
}

static int handle_dump_restore(struct rpc_conv *c, const CriuReq *req)
{
	struct rpc_run r = { .images_fd = -1, .work_fd = -1, .status_fd = -1 };
	CriuResp resp = CRIU_RESP__INIT;
	CriuDumpResp dr = CRIU_DUMP_RESP__INIT;
	CriuRestoreResp rr = CRIU_RESTORE_RESP__INIT;
	bool dump = req->type == CRIU_REQ_TYPE__DUMP || req->type == CRIU_REQ_TYPE__PRE_DUMP;
	char msg[512];
	pid_t root = -1;
	int err;

	cr_options_init(&r.o);
	if (geteuid()) {
		rpc_run_fini(&r);
		return send_error(c->sk, req->type, -EPERM,
				  dump ? "DUMP and PRE_DUMP need root" : "RESTORE needs root");
	}
	err = rpc_run_setup(c, req, &r, msg, sizeof(msg));
	if (err) {
		rpc_run_fini(&r);
		return send_error(c->sk, req->type, err, msg);
	}
	pr_info("%s requested by pid %d\n", req_name(req->type), c->peer_pid);
	/* a lazy dump writes status_fd once it serves its pages (lazy-dump.c), and closes it */
	if (dump && r.o.lazy_pages)
		r.o.status_fd = TAKE_FD(r.status_fd);
	err = req->type == CRIU_REQ_TYPE__PRE_DUMP ? cr_pre_dump(&r.o)
	      : dump				   ? cr_dump(&r.o)
						   : cr_restore_pid(&r.o, &root);
	rpc_run_fini(&r);
	if (err)
		return send_failure(c->sk, req->type, err);
	resp.type = req->type;
	resp.success = true;
	if (dump) {
		dr.has_restored = true; /* false: this is the dump, not a self-dump's restore */
		resp.dump = &dr;
	} else {
		rr.pid = root;
		resp.restore = &rr;
	}
	return rpc_send_resp(c->sk, &resp);
}

/*
 * The page server's process: PAGE_SERVER (CRIU's daemon mode) a grandchild
 * in a session of its own, PAGE_SERVER_CHLD a child of this criu-like. It
 * serves one dump on @lfd (or the connection o->ps_sock_fd) and exits.
 */
static void page_server_child(struct rpc_conv *c, struct rpc_run *r, int lfd)
{
	int null = open("/dev/null", O_RDWR);

	close(c->sk);
	if (r->status_fd >= 0)
		close(r->status_fd);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (log_get_fd() != STDERR_FILENO)
			dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	r->o.ps_listen_fd = lfd;
	r->o.status_fd = -1; /* the conversation says status-ready, below */
	r->o.notifier = NULL;
	r->o.restore_detached = false;
	r->o.pidfile = NULL;
	r->o.page_server = false;
	_exit(cr_page_server(&r->o) ? 1 : 0);
}

/* Fork the page server: its pid, or -errno. */
static pid_t page_server_start(struct rpc_conv *c, struct rpc_run *r, int lfd, bool daemon)
{
	int pfd[2], status;
	pid_t pid, server = -1;

	if (!daemon) {
		pid = fork();
		if (pid == 0)
			page_server_child(c, r, lfd);
		return pid < 0 ? neg_errno() : pid;
	}
	if (pipe2(pfd, O_CLOEXEC))
		return neg_errno();
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		setsid();
		server = fork();
		if (server == 0) {
			close(pfd[1]);
			page_server_child(c, r, lfd);
		}
		_exit(server > 0 && write(pfd[1], &server, sizeof(server)) == sizeof(server) ? 0
											     : 1);
	}
	close(pfd[1]);
	if (pid > 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (read(pfd[0], &server, sizeof(server)) != sizeof(server))
			server = -ECHILD;
	} else {
		server = neg_errno();
	}
	close(pfd[0]);
	return server;
}

/*
 * PAGE_SERVER, PAGE_SERVER_CHLD: a page server (Documentation/page-server.md)
 * listening at ps's address and port (0: an ephemeral one) into the images
 * directory, for one dump (its ps pointing here). The answer comes once it
 * listens, with its pid and port; before it, status-ready (notify_scripts)
 * and a byte to status_fd, as CRIU's page server says it is ready.
 */
static int handle_page_server(struct rpc_conv *c, const CriuReq *req)
{
	struct rpc_run r = { .images_fd = -1, .work_fd = -1, .status_fd = -1 };
	CriuResp resp = CRIU_RESP__INIT;
	CriuPageServerInfo ps = CRIU_PAGE_SERVER_INFO__INIT;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char msg[512], where[96];
	int err, lfd = -1, port = 0;
	pid_t pid;

	cr_options_init(&r.o);
	err = rpc_run_setup(c, req, &r, msg, sizeof(msg));
	if (err) {
		rpc_run_fini(&r);
		return send_error(c->sk, req->type, err, msg);
	}
	if (r.o.ps_sock_fd < 0) {
		lfd = ps_listen(&r.o, where, sizeof(where));
		if (lfd < 0) {
			rpc_run_fini(&r);
			return send_failure(c->sk, req->type, lfd);
		}
		if (!getsockname(lfd, (struct sockaddr *)&ss, &sl))
			port = ntohs(ss.ss_family == AF_INET6
					     ? ((struct sockaddr_in6 *)&ss)->sin6_port
					     : ((struct sockaddr_in *)&ss)->sin_port);
		pr_info("page server listening on %s for pid %d\n", where, c->peer_pid);
	}
	pid = page_server_start(c, &r, lfd, req->type == CRIU_REQ_TYPE__PAGE_SERVER);
	if (lfd >= 0)
		close(lfd);
	if (pid < 0) {
		pr_errno(pid, "cannot start the page server");
		rpc_run_fini(&r);
		return send_failure(c->sk, req->type, pid);
	}
	err = cr_notify(&r.o, CR_ACT_STATUS_READY, 0, -1);
	if (!err && r.status_fd >= 0 && write(r.status_fd, "", 1) != 1)
		pr_perror("cannot write to status_fd");
	rpc_run_fini(&r);
	if (err) {
		kill(pid, SIGKILL);
		return send_failure(c->sk, req->type, err);
	}
	ps.has_pid = true;
	ps.pid = pid;
	ps.has_port = lfd >= 0;
	ps.port = port;
	resp.type = req->type;
	resp.success = true;
	resp.ps = &ps;
	return rpc_send_resp(c->sk, &resp);
}

/* CPUINFO_DUMP, CPUINFO_CHECK: as `criu-like cpuinfo dump|check` (cpu_cap: what is checked). */
static int handle_cpuinfo(struct rpc_conv *c, const CriuReq *req)
{
	struct rpc_run r = { .images_fd = -1, .work_fd = -1, .status_fd = -1 };
	CriuResp resp = CRIU_RESP__INIT;
	char msg[640], why[560] = "";
	int err;

	cr_options_init(&r.o);
	err = rpc_run_setup(c, req, &r, msg, sizeof(msg));
	if (err) {
		rpc_run_fini(&r);
		return send_error(c->sk, req->type, err, msg);
	}
	err = req->type == CRIU_REQ_TYPE__CPUINFO_DUMP ? cr_cpuinfo_dump(&r.o)
						       : cr_cpuinfo_check(&r.o, why, sizeof(why));
	rpc_run_fini(&r);
	if (err && *why) {
		snprintf(msg, sizeof(msg), "%s failed: %s", req_name(req->type), why);
		return send_error(c->sk, req->type, err, msg);
	}
	if (err)
		return send_failure(c->sk, req->type, err);
	resp.type = req->type;
	resp.success = true;
	return rpc_send_resp(c->sk, &resp);
}

static int handle(struct rpc_conv *c, const CriuReq *req)
{
	char msg[160];

	log_error_reset();
	switch (req->type) {
	case CRIU_REQ_TYPE__VERSION:
		return handle_version(c->sk, req);
	case CRIU_REQ_TYPE__CHECK:
		return handle_check(c->sk, req);
	case CRIU_REQ_TYPE__FEATURE_CHECK:
		return handle_feature_check(c->sk, req);
	case CRIU_REQ_TYPE__DUMP:
	case CRIU_REQ_TYPE__PRE_DUMP:
	case CRIU_REQ_TYPE__RESTORE:
		return handle_dump_restore(c, req);
	case CRIU_REQ_TYPE__WAIT_PID:
		return handle_wait_pid(c->sk, req);
	case CRIU_REQ_TYPE__SINGLE_PRE_DUMP:
		snprintf(msg, sizeof(msg), "%s is not available in this version yet",
			 req_name(req->type));
		return send_error(c->sk, req->type, -EOPNOTSUPP, msg);
	case CRIU_REQ_TYPE__PAGE_SERVER:
	case CRIU_REQ_TYPE__PAGE_SERVER_CHLD:
		return handle_page_server(c, req);
	case CRIU_REQ_TYPE__CPUINFO_DUMP:
	case CRIU_REQ_TYPE__CPUINFO_CHECK:
		return handle_cpuinfo(c, req);
	case CRIU_REQ_TYPE__NOTIFY:
		return send_error(c->sk, req->type, -EINVAL,
				  "NOTIFY is the answer to a notification, not a request");
	default:
		snprintf(msg, sizeof(msg), "unknown request type %d", (int)req->type);
		return send_error(c->sk, CRIU_REQ_TYPE__EMPTY, -EBADRQC, msg);
	}
}

static int peer_creds(struct rpc_conv *c)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(c->sk, SOL_SOCKET, SO_PEERCRED, &cr, &len)) {
		pr_perror("cannot get the credentials of the RPC peer");
		return neg_errno();
	}
	c->peer_pid = cr.pid;
	c->peer_uid = cr.uid;
	return 0;
}

int rpc_serve(int sk, bool service)
{
	struct rpc_conv c = { .sk = sk, .service = service };
	char err[256], msg[320];
	CriuReq *req;
	bool keep;
	int ret;

	ret = peer_creds(&c);
	if (ret)
		return ret;
	rpc_notifier_init(&c);
	do {
		ret = rpc_recv_req(sk, &req, err, sizeof(err));
		if (ret > 0)
			return 0;
		if (ret) {
			/* the conversation is out of step: answer, and end it */
			send_error(sk, CRIU_REQ_TYPE__EMPTY, ret, err);
			return ret;
		}
		if (service && c.peer_uid != 0) {
			snprintf(msg, sizeof(msg),
				 "criu-like service serves root only: the peer (pid %d) runs "
				 "as uid %u",
				 c.peer_pid, (unsigned int)c.peer_uid);
			send_error(sk, req->type, -EPERM, msg);
			criu_req__free_unpacked(req, NULL);
			return -EPERM;
		}
		keep = req->has_keep_open && req->keep_open;
		ret = handle(&c, req);
		criu_req__free_unpacked(req, NULL);
		if (ret)
			pr_errno(ret, "cannot answer the RPC client (pid %d)", c.peer_pid);
	} while (!ret && keep);
	return ret;
}
