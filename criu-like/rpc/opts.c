// SPDX-License-Identifier: GPL-2.0
/*
 * criu_opts -> struct cr_options. Every field the request carries is looked
 * at through the message's descriptor, so none can be ignored by accident:
 * a field criu-like gives CRIU's meaning is translated below, a field whose
 * feature is missing is refused by name when it asks for something (a bool
 * that is true, any other value given), and a field number this schema does
 * not know (a newer client) is refused too.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define LOG_PREFIX "rpc: "
#include "cli-config.h"
#include "log.h"
#include "restore.h"
#include "cgroup.h"
#include "rpc.h"
#include "util.h"

/* Fields whose feature criu-like lacks: the feature, as `--help` names it. */
static const struct {
	const char *name;
	const char *missing;
} refused[] = {
	{ "exec_cmd", "running a command after the restore" },
	{ "skip_mnt", "mount namespaces" },
	{ "unix_sk_ino", "naming external unix sockets by inode" },
	{ "irmap_scan_paths", "the inotify path map (irmap)" },
	{ "weak_sysctls", "sysctls" },
	{ "pidfd_store_sk", "the pidfd store of pre-dumps" },
	{ "lsm_mount_context", "LSM mount contexts" },
	{ "mntns_compat_mode", "mount namespaces" },
	{ "skip_file_rwx_check", "skipping the permission check of files" },
	{ "unprivileged", "unprivileged mode" },
	{ "leave_stopped", "leaving the tree stopped" },
	{ "file_validation_method", "file validation" },
};

static int refuse(char *err, size_t size, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(char *err, size_t size, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return ret;
}

static const void *field_ptr(const CriuOpts *m, size_t off)
{
	return (const char *)m + off;
}

/* The request carries @f (proto2: has_X, a pointer, or n_X). */
static bool field_given(const CriuOpts *m, const ProtobufCFieldDescriptor *f)
{
	if (f->label == PROTOBUF_C_LABEL_REQUIRED)
		return true;
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return *(const size_t *)field_ptr(m, f->quantifier_offset) > 0;
	if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE ||
	    f->type == PROTOBUF_C_TYPE_BYTES)
		return *(void *const *)field_ptr(m, f->offset) != NULL;
	return *(const protobuf_c_boolean *)field_ptr(m, f->quantifier_offset);
}

/* A given field asks for its feature: a bool that is true, other values but "none" ones. */
static bool field_asks(const CriuOpts *m, const ProtobufCFieldDescriptor *f)
{
	if (f->type == PROTOBUF_C_TYPE_BOOL && f->label != PROTOBUF_C_LABEL_REPEATED)
		return *(const protobuf_c_boolean *)field_ptr(m, f->offset);
	if (!strcmp(f->name, "empty_ns"))
		return m->empty_ns != 0;
	return true;
}

static const char *field_missing(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(refused); i++)
		if (!strcmp(refused[i].name, name))
			return refused[i].missing;
	return NULL;
}

/* Every field given whose feature is missing, and every unknown field number. */
static int check_fields(const CriuOpts *m, char *err, size_t size)
{
	const ProtobufCMessageDescriptor *d = &criu_opts__descriptor;
	const char *missing;
	unsigned int i;

	if (m->base.n_unknown_fields)
		return refuse(err, size, -EOPNOTSUPP,
			      "criu_opts: field number %u is not known to this version",
			      m->base.unknown_fields[0].tag);
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];

		missing = field_missing(f->name);
		if (missing && field_given(m, f) && field_asks(m, f))
			return refuse(err, size, -EOPNOTSUPP,
				      "criu_opts.%s: %s is not supported by this version yet",
				      f->name, missing);
	}
	return 0;
}

static int translate_dirs(const CriuOpts *m, struct cr_options *o, struct rpc_opts *ro, char *err,
			  size_t size)
{
	ro->images_dir_fd = m->images_dir_fd;
	ro->work_dir_fd = -1;
	if (m->images_dir_fd < -1)
		return refuse(err, size, -EINVAL, "criu_opts.images_dir_fd: %d is not a descriptor",
			      m->images_dir_fd);
	if (m->images_dir_fd == -1) {
		if (!m->images_dir || !*m->images_dir)
			return refuse(err, size, -EINVAL,
				      "criu_opts.images_dir_fd: -1 and no images_dir: "
				      "no image directory");
		o->images_dir = m->images_dir;
	}
	if (m->has_work_dir_fd) {
		if (m->work_dir_fd < 0)
			return refuse(err, size, -EINVAL,
				      "criu_opts.work_dir_fd: %d is not a descriptor",
				      m->work_dir_fd);
		ro->work_dir_fd = m->work_dir_fd;
	}
	/* CRIU: a name in the work directory, no subdirectories */
	if (m->log_file && (!*m->log_file || strchr(m->log_file, '/')))
		return refuse(err, size, -EINVAL,
			      "criu_opts.log_file: '%s' is not a file name (no '/' allowed; "
			      "use work_dir_fd)",
			      m->log_file);
	o->log_file = m->log_file;
	if (!o->log_file && m->has_log_to_stderr && m->log_to_stderr)
		o->log_file = "-";
	return 0;
}

static int translate_values(const CriuOpts *m, CriuReqType type, struct cr_options *o, char *err,
			    size_t size)
{
	if (m->has_log_level) {
		if (m->log_level < 0)
			return refuse(err, size, -EINVAL,
				      "criu_opts.log_level: %d is not a level (0-4)", m->log_level);
		o->log_level = m->log_level > LOG_DEBUG ? LOG_DEBUG : m->log_level;
	}
	if (type == CRIU_REQ_TYPE__DUMP || type == CRIU_REQ_TYPE__PRE_DUMP) {
		/* CRIU dumps the caller itself then: it holds our socket, never dumpable here */
		if (!m->has_pid)
			return refuse(err, size, -EOPNOTSUPP,
				      "criu_opts.pid: not set: dumping the calling process itself "
				      "is not supported (it holds the RPC socket)");
		if (m->pid <= 0)
			return refuse(err, size, -EINVAL, "criu_opts.pid: %d is not a pid", m->pid);
		o->tree = m->pid;
	}
	if (m->has_timeout) {
		if (m->timeout > 86400)
			return refuse(err, size, -EINVAL,
				      "criu_opts.timeout: %u seconds is out of range (0-86400)",
				      m->timeout);
		o->timeout = m->timeout ? m->timeout : CR_DEFAULT_TIMEOUT;
	}
	if (m->has_network_lock) {
		switch (m->network_lock) {
		case CRIU_NETWORK_LOCK_METHOD__IPTABLES:
			o->network_lock = "iptables";
			break;
		case CRIU_NETWORK_LOCK_METHOD__NFTABLES:
			o->network_lock = "nftables";
			break;
		case CRIU_NETWORK_LOCK_METHOD__SKIP:
			o->network_lock = "skip";
			break;
		default:
			return refuse(err, size, -EINVAL,
				      "criu_opts.network_lock: %d is not a method",
				      m->network_lock);
		}
	}
	if (m->has_pre_dump_mode) {
		if (m->pre_dump_mode != CRIU_PRE_DUMP_MODE__SPLICE &&
		    m->pre_dump_mode != CRIU_PRE_DUMP_MODE__VM_READ)
			return refuse(err, size, -EINVAL,
				      "criu_opts.pre_dump_mode: %d is not a mode",
				      m->pre_dump_mode);
		o->pre_dump_mode = m->pre_dump_mode == CRIU_PRE_DUMP_MODE__SPLICE ? "splice"
										  : "read";
	}
	if (m->has_ghost_limit)
		o->ghost_limit = m->ghost_limit;
	if (m->freeze_cgroup) {
		/* the pre-dump seizes the tree as the dump does (runc sends it to both) */
		if (type != CRIU_REQ_TYPE__DUMP && type != CRIU_REQ_TYPE__PRE_DUMP)
			return refuse(
				err, size, -EOPNOTSUPP,
				"criu_opts.freeze_cgroup: applies to a dump or a pre-dump only");
		o->freeze_cgroup = m->freeze_cgroup;
	}
	return 0;
}

/*
 * external (CRIU's --external, passed on as is: mnt[] is what criu-like has)
 * and the older ext_mnt key/value pairs, as mnt[KEY]:VAL (runc 1.1 sends
 * its bind mounts this way). One block: the NULL-terminated array, then the
 * strings made here; cr_options_fini() frees it.
 */
static int translate_external(const CriuOpts *m, struct cr_options *o, char *err, size_t size)
{
	size_t n = m->n_external + m->n_ext_mnt + m->n_veths, bytes = (n + 1) * sizeof(char *), i,
	       k = 0;
	char *p;

	if (!n)
		return 0;
	for (i = 0; i < m->n_external; i++)
		if (!m->external[i] || !*m->external[i])
			return refuse(err, size, -EINVAL, "criu_opts.external[%zu]: empty", i);
	for (i = 0; i < m->n_ext_mnt; i++) {
		const ExtMountMap *e = m->ext_mnt[i];

		if (!e->key || !e->val || !*e->key || !*e->val || strchr(e->key, ']'))
			return refuse(err, size, -EINVAL,
				      "criu_opts.ext_mnt[%zu]: not a mount point and a name", i);
		bytes += strlen(e->key) + strlen(e->val) + sizeof("mnt[]:");
	}
	for (i = 0; i < m->n_veths; i++) {
		const CriuVethPair *v = m->veths[i];

		if (!v->if_in || !v->if_out || !*v->if_in || !*v->if_out || strchr(v->if_in, ']'))
			return refuse(err, size, -EINVAL,
				      "criu_opts.veths[%zu]: not an inside and an outside name", i);
		bytes += strlen(v->if_in) + strlen(v->if_out) + sizeof("veth[]:");
	}
	o->external = malloc(bytes);
	if (!o->external)
		return refuse(err, size, -ENOMEM, "criu_opts.external: out of memory");
	p = (char *)(o->external + n + 1);
	for (i = 0; i < m->n_external; i++)
		o->external[k++] = m->external[i];
	for (i = 0; i < m->n_ext_mnt; i++) {
		int len = sprintf(p, "mnt[%s]:%s", m->ext_mnt[i]->key, m->ext_mnt[i]->val);

		o->external[k++] = p;
		p += len + 1;
	}
	/* CRIU's veth pairs: --external veth[IN]:OUT */
	for (i = 0; i < m->n_veths; i++) {
		int len = sprintf(p, "veth[%s]:%s", m->veths[i]->if_in, m->veths[i]->if_out);

		o->external[k++] = p;
		p += len + 1;
	}
	o->external[k] = NULL;
	o->n_external = (int)k;
	/* runc sends every device node and masked file, bound or not (ns/mnt.c) */
	o->ext_mnt_optional = m->n_ext_mnt > 0;
	return 0;
}

/*
 * The cgroup fields (Documentation/cgroups.md): manage_cgroups (true: SOFT,
 * false: IGNORE, as CRIU), overridden by manage_cgroups_mode; cg_root as
 * --cgroup-root [CTRL:]/PATH (one block: the NULL-terminated array, then the
 * strings; cr_options_fini() frees it); cgroup_yard as --cgroup-yard;
 * cgroup_props, cgroup_props_file, cgroup_dump_controller as their options.
 */
static int translate_cgroups(const CriuOpts *m, struct cr_options *o, char *err, size_t size)
{
	static const char *const modes[] = {
		[CRIU_CG_MODE__IGNORE] = "ignore", [CRIU_CG_MODE__CG_NONE] = "none",
		[CRIU_CG_MODE__PROPS] = "props",   [CRIU_CG_MODE__SOFT] = "soft",
		[CRIU_CG_MODE__FULL] = "full",	   [CRIU_CG_MODE__STRICT] = "strict",
		[CRIU_CG_MODE__DEFAULT] = "soft",
	};
	size_t n = m->n_cg_root, bytes = (n + 1) * sizeof(char *), i;
	char *p;

	if (m->has_manage_cgroups)
		o->manage_cgroups = m->manage_cgroups ? "soft" : "ignore";
	if (m->has_manage_cgroups_mode) {
		if ((unsigned int)m->manage_cgroups_mode >= ARRAY_SIZE(modes))
			return refuse(err, size, -EINVAL,
				      "criu_opts.manage_cgroups_mode: %d is not a mode",
				      m->manage_cgroups_mode);
		o->manage_cgroups = modes[m->manage_cgroups_mode];
	}
	if (m->cgroup_props) {
		struct cg_spec spec = { 0 };
		int e = cg_spec_parse(&spec, m->cgroup_props, "criu_opts.cgroup_props");

		cg_spec_fini(&spec);
		if (e)
			return refuse(err, size, e,
				      "criu_opts.cgroup_props: not a property list "
				      "(the log says where)");
		o->cgroup_props = m->cgroup_props;
	}
	o->cgroup_props_file = m->cgroup_props_file;
	if (m->n_cgroup_dump_controller) {
		o->cgroup_dump_ctrls = calloc(m->n_cgroup_dump_controller + 1, sizeof(char *));
		if (!o->cgroup_dump_ctrls)
			return refuse(err, size, -ENOMEM, "criu_opts.cgroup_dump_controller");
		for (i = 0; i < m->n_cgroup_dump_controller; i++)
			o->cgroup_dump_ctrls[i] = m->cgroup_dump_controller[i];
		o->n_cgroup_dump_ctrls = (int)m->n_cgroup_dump_controller;
	}
	if (m->cgroup_yard) {
		if (m->cgroup_yard[0] != '/')
			return refuse(err, size, -EINVAL,
				      "criu_opts.cgroup_yard: '%s' is not an absolute path",
				      m->cgroup_yard);
		o->cgroup_yard = m->cgroup_yard;
	}
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		const char *ctrl = m->cg_root[i]->ctrl, *path = m->cg_root[i]->path;

		if (!path || path[0] != '/')
			return refuse(err, size, -EINVAL,
				      "criu_opts.cg_root[%zu]: path '%s' is not absolute", i,
				      path ? path : "");
		bytes += (ctrl && *ctrl ? strlen(ctrl) + 1 : 0) + strlen(path) + 1;
	}
	o->cgroup_roots = malloc(bytes);
	if (!o->cgroup_roots)
		return refuse(err, size, -ENOMEM, "criu_opts.cg_root: out of memory");
	p = (char *)(o->cgroup_roots + n + 1);
	for (i = 0; i < n; i++) {
		const char *ctrl = m->cg_root[i]->ctrl, *path = m->cg_root[i]->path;
		/* runc sends "" as the controller of cgroup2's root: no controller */
		int len = ctrl && *ctrl ? sprintf(p, "%s:%s", ctrl, path) : sprintf(p, "%s", path);

		o->cgroup_roots[i] = p;
		p += len + 1;
	}
	o->cgroup_roots[n] = NULL;
	o->n_cgroup_roots = (int)n;
	return 0;
}

/*
 * inherit_fd: CRIU's --inherit-fd fd[N]:KEY, N one of criu-like's own fds (swrk
 * inherits them from the caller: runc's stdio pipes). One block, freed by
 * cr_options_fini().
 */
static int translate_inherit_fd(const CriuOpts *m, CriuReqType type, struct cr_options *o,
				char *err, size_t size)
{
	size_t n = m->n_inherit_fd, bytes = (n + 1) * sizeof(char *), i;
	char *p;

	if (!n)
		return 0;
	if (type != CRIU_REQ_TYPE__RESTORE)
		return refuse(err, size, -EINVAL,
			      "criu_opts.inherit_fd: applies to a restore only");
	for (i = 0; i < n; i++) {
		const InheritFd *e = m->inherit_fd[i];

		if (e->fd < 0 || !e->key || !*e->key)
			return refuse(err, size, -EINVAL,
				      "criu_opts.inherit_fd[%zu]: not a descriptor and a key", i);
		bytes += strlen(e->key) + sizeof("fd[2147483647]:");
	}
	o->inherit_fd = malloc(bytes);
	if (!o->inherit_fd)
		return refuse(err, size, -ENOMEM, "criu_opts.inherit_fd: out of memory");
	p = (char *)(o->inherit_fd + n + 1);
	for (i = 0; i < n; i++) {
		int len = sprintf(p, "fd[%d]:%s", m->inherit_fd[i]->fd, m->inherit_fd[i]->key);

		o->inherit_fd[i] = p;
		p += len + 1;
		/* pipe:[INO], or an external namespace's key (ns.c refuses an unknown one) */
		if (inherit_fd_parse(o->inherit_fd[i], NULL, NULL))
			return refuse(err, size, -EOPNOTSUPP,
				      "criu_opts.inherit_fd[%zu]: key '%s': only pipes "
				      "(pipe:[INO]) and external namespaces (a name) can be "
				      "inherited by this version yet",
				      i, m->inherit_fd[i]->key);
	}
	o->inherit_fd[n] = NULL;
	o->n_inherit_fd = (int)n;
	return 0;
}

/*
 * join_ns: CRIU's --join-ns NS:PID|PATH[,OPTS] at restore. The network
 * namespace can be joined (ns/ns.c: its dumped one is then not restored);
 * every other kind is made from its image, so joining one is refused.
 */
static int translate_join_ns(const CriuOpts *m, CriuReqType type, struct cr_options *o, char *err,
			     size_t size)
{
	size_t i;

	for (i = 0; i < m->n_join_ns; i++) {
		const JoinNamespace *j = m->join_ns[i];

		if (type != CRIU_REQ_TYPE__RESTORE)
			return refuse(err, size, -EINVAL,
				      "criu_opts.join_ns: applies to a restore only");
		if (!j->ns || strcmp(j->ns, "net"))
			return refuse(err, size, -EOPNOTSUPP,
				      "criu_opts.join_ns[%zu]: ns '%s': only net can be joined "
				      "by this version yet",
				      i, j->ns ? j->ns : "");
		if (!j->ns_file || !*j->ns_file || strchr(j->ns_file, ','))
			return refuse(err, size, -EINVAL,
				      "criu_opts.join_ns[%zu]: ns_file '%s' is not a pid or a path",
				      i, j->ns_file ? j->ns_file : "");
		if (j->extra_opt && *j->extra_opt)
			return refuse(err, size, -EOPNOTSUPP,
				      "criu_opts.join_ns[%zu]: extra_opt '%s': net takes none", i,
				      j->extra_opt);
		if (o->join_ns_net)
			return refuse(err, size, -EINVAL, "criu_opts.join_ns[%zu]: net given twice",
				      i);
		o->join_ns_net = j->ns_file;
	}
	return 0;
}

static bool is_dump(CriuReqType type)
{
	return type == CRIU_REQ_TYPE__DUMP || type == CRIU_REQ_TYPE__PRE_DUMP;
}

static bool is_page_server(CriuReqType type)
{
	return type == CRIU_REQ_TYPE__PAGE_SERVER || type == CRIU_REQ_TYPE__PAGE_SERVER_CHLD;
}

/*
 * The page server (Documentation/page-server.md): ps of a dump or pre-dump
 * is where its pages go (as --page-server --address --port), of PAGE_SERVER
 * where the server listens (no address: every one; port 0: an ephemeral
 * one, answered); ps.fd instead a connection the client made (swrk: an fd
 * of criu-like's own, checked by rpc.c). lazy_pages: a lazy restore (the
 * lazy-pages daemon, which a ps of the restore is for, is the client's), or
 * a lazy dump, which serves its pages at ps (mem/lazy-dump.c). status_fd:
 * the caller's fd written once the page server (or the lazy dump) listens. The TLS
 * fields as --tls and its files, for either end.
 */
static int translate_page_server(const CriuOpts *m, CriuReqType type, struct cr_options *o,
				 struct rpc_opts *ro, char *err, size_t size)
{
	const CriuPageServerInfo *ps = m->ps;
	bool lazy = m->has_lazy_pages && m->lazy_pages;

	if (lazy && type == CRIU_REQ_TYPE__PRE_DUMP)
		return refuse(err, size, -EINVAL,
			      "criu_opts.lazy_pages: a pre-dump lets the tree run again, so its "
			      "pages cannot be served from it later (a DUMP with lazy_pages can)");
	if (lazy && type != CRIU_REQ_TYPE__RESTORE && type != CRIU_REQ_TYPE__DUMP)
		return refuse(err, size, -EINVAL,
			      "criu_opts.lazy_pages: only a DUMP (the pages served from the "
			      "frozen tree) or a RESTORE is lazy");
	o->lazy_pages = lazy;
	/* CRIU's cpu_cap bits (cpuinfo.h): what CPUINFO_CHECK compares; only it compares CPUs */
	if (m->has_cpu_cap) {
		if (type == CRIU_REQ_TYPE__CPUINFO_CHECK)
			o->cpu_cap = m->cpu_cap & 7;
		else if (m->cpu_cap != 0)
			return refuse(
				err, size, -EOPNOTSUPP,
				"criu_opts.cpu_cap: CPU compatibility checks at restore (only "
				"cpu_cap 0, none, is; CPUINFO_CHECK compares) are not "
				"supported by this version yet");
	}
	if (m->has_status_fd) {
		if (!is_page_server(type) && !(lazy && type == CRIU_REQ_TYPE__DUMP))
			return refuse(err, size, -EOPNOTSUPP,
				      "criu_opts.status_fd: only a page server reports readiness "
				      "(PAGE_SERVER, or a DUMP with lazy_pages), as in CRIU");
		if (m->status_fd < 0)
			return refuse(err, size, -EINVAL,
				      "criu_opts.status_fd: %d is not a descriptor", m->status_fd);
		ro->status_fd = m->status_fd;
	}
	o->tls = m->has_tls && m->tls;
	o->tls_no_cn_verify = m->has_tls_no_cn_verify && m->tls_no_cn_verify;
	o->tls_cacert = m->tls_cacert;
	o->tls_cacrl = m->tls_cacrl;
	o->tls_cert = m->tls_cert;
	o->tls_key = m->tls_key;
	if (!ps) {
		if (is_page_server(type))
			return refuse(err, size, -EINVAL,
				      "criu_opts.ps: PAGE_SERVER needs it (port 0: any port)");
		if (lazy && type == CRIU_REQ_TYPE__DUMP)
			return refuse(err, size, -EINVAL,
				      "criu_opts.ps: a lazy DUMP needs the address and port where "
				      "its pages are served to the lazy-pages daemon");
		return 0;
	}
	if (type == CRIU_REQ_TYPE__RESTORE) {
		if (!lazy)
			return refuse(err, size, -EINVAL,
				      "criu_opts.ps: a restore takes no page server (only a lazy "
				      "one, whose lazy-pages daemon is the client's)");
		return 0;
	}
	if (!is_dump(type) && !is_page_server(type))
		return 0;
	if (ps->has_pid)
		return refuse(err, size, -EINVAL, "criu_opts.ps.pid: an answer, not an option");
	if (ps->has_port && (ps->port < 0 || ps->port > 65535))
		return refuse(err, size, -EINVAL, "criu_opts.ps.port: %d is not a port", ps->port);
	if (lazy && ps->has_fd)
		return refuse(err, size, -EINVAL,
			      "criu_opts.ps.fd: a lazy DUMP listens itself, at ps.address and "
			      "ps.port, for the lazy-pages daemon");
	if (ps->has_fd) {
		if (ps->fd < 0)
			return refuse(err, size, -EINVAL, "criu_opts.ps.fd: %d is not a descriptor",
				      ps->fd);
		ro->ps_fd = ps->fd;
	} else if (is_dump(type) && (!ps->address || !*ps->address || !ps->has_port || !ps->port)) {
		return refuse(err, size, -EINVAL,
			      "criu_opts.ps: a dump needs the page server's address and port "
			      "(or fd)");
	}
	o->address = ps->address && *ps->address ? ps->address : NULL;
	o->port = ps->has_port ? ps->port : 0;
	/* a lazy dump listens there (CRIU's, runc checkpoint --lazy-pages --page-server) */
	o->page_server = is_dump(type) && !lazy;
	return 0;
}

int rpc_opts_translate(const CriuOpts *m, CriuReqType type, struct cr_options *o,
		       struct rpc_opts *ro, char *err, size_t size)
{
	int ret;

	err[0] = '\0';
	ro->ps_fd = -1;
	ro->status_fd = -1;
	ret = check_fields(m, err, size);
	if (!ret)
		ret = translate_cgroups(m, o, err, size);
	if (!ret)
		ret = translate_dirs(m, o, ro, err, size);
	if (!ret)
		ret = translate_values(m, type, o, err, size);
	if (!ret)
		ret = translate_external(m, o, err, size);
	if (!ret)
		ret = translate_inherit_fd(m, type, o, err, size);
	if (!ret)
		ret = translate_join_ns(m, type, o, err, size);
	if (!ret)
		ret = translate_page_server(m, type, o, ro, err, size);
	if (ret)
		return ret;
	/* CRIU: CLONE_NEW* flags of namespaces restored empty; only the network's is */
	if (m->has_empty_ns && m->empty_ns) {
		if (m->empty_ns != CLONE_NEWNET)
			return refuse(
				err, size, -EOPNOTSUPP,
				"criu_opts.empty_ns: 0x%x: only CLONE_NEWNET (0x%x) is supported",
				m->empty_ns, CLONE_NEWNET);
		o->empty_ns_net = true;
	}
	/*
	 * CRIU: a pty slave whose master is outside the tree (runc's terminal,
	 * held by its console socket) is dumped, and at restore gets a new pair
	 * whose master goes to the client in the orphan-pts-master notification
	 * (SCM_RIGHTS), the slave the session's controlling terminal (files/chr.c).
	 */
	o->orphan_pts_master = m->has_orphan_pts_master && m->orphan_pts_master;
	/* CRIU: the root of the restored container's mount tree (a runtime's rootfs) */
	if (m->root && type == CRIU_REQ_TYPE__RESTORE)
		o->root = m->root;
	o->leave_running = m->has_leave_running && m->leave_running;
	o->ext_unix_sk = m->has_ext_unix_sk && m->ext_unix_sk;
	o->tcp_established = m->has_tcp_established && m->tcp_established;
	o->tcp_close = m->has_tcp_close && m->tcp_close;
	o->skip_in_flight = m->has_tcp_skip_in_flight && m->tcp_skip_in_flight;
	o->shell_job = m->has_shell_job && m->shell_job;
	o->file_locks = m->has_file_locks && m->file_locks;
	ro->notify = m->has_notify_scripts && m->notify_scripts;
	o->track_mem = m->has_track_mem && m->track_mem;
	/* CRIU: dedup the parents after a dump or pre-dump with a parent */
	if (m->has_auto_dedup && m->auto_dedup) {
		if (type != CRIU_REQ_TYPE__DUMP && type != CRIU_REQ_TYPE__PRE_DUMP)
			return refuse(err, size, -EOPNOTSUPP,
				      "criu_opts.auto_dedup: applies to a dump or a pre-dump only "
				      "(a restore does not punch its images)");
		o->auto_dedup = true;
	}
	o->display_stats = m->has_display_stats && m->display_stats;
	/* CRIU: relative to the images directory, as --prev-images-dir */
	if (m->parent_img) {
		if (type != CRIU_REQ_TYPE__DUMP && type != CRIU_REQ_TYPE__PRE_DUMP)
			return refuse(err, size, -EINVAL,
				      "criu_opts.parent_img: applies to a dump or a pre-dump only");
		o->prev_images_dir = m->parent_img;
	}
	/*
	 * As the command line's (cli/compat.c, Documentation/runtimes.md, "LXC"):
	 * link_remap links an unlinked opened name back (files/reg.c); allow_uprobes
	 * leaves the [uprobes] area out; ghost_fiemap asks for what ghosts always
	 * are (extents); force_irmap, ext_sharing and ext_masters ask for nothing
	 * criu-like needs; auto_ext_mnt finds no mount (each is refused, named);
	 * lsm_profile is checked at restore (proc/lsm.c); enable_fs as --enable-fs.
	 */
	o->link_remap = m->has_link_remap && m->link_remap;
	o->allow_uprobes = m->has_allow_uprobes && m->allow_uprobes;
	o->ext_mnt_auto = m->has_auto_ext_mnt && m->auto_ext_mnt;
	o->lsm_profile = m->lsm_profile;
	if (o->lsm_profile && !strchr(o->lsm_profile, ':'))
		return refuse(err, size, -EINVAL, "criu_opts.lsm_profile: '%s' is not TYPE:NAME",
			      o->lsm_profile);
	if (m->n_enable_fs) {
		size_t i;

		o->enable_fs = calloc(m->n_enable_fs + 1, sizeof(*o->enable_fs));
		if (!o->enable_fs)
			return refuse(err, size, -ENOMEM, "criu_opts.enable_fs: out of memory");
		for (i = 0; i < m->n_enable_fs; i++) {
			if (!m->enable_fs[i] || !*m->enable_fs[i])
				return refuse(err, size, -EINVAL, "criu_opts.enable_fs[%zu]: empty",
					      i);
			o->enable_fs[i] = m->enable_fs[i];
		}
		o->n_enable_fs = (int)m->n_enable_fs;
	}
	/* CRIU: a restore through RPC is always detached, the tree is the caller's to wait */
	o->restore_detached = type == CRIU_REQ_TYPE__RESTORE;
	/* CRIU: the restored root a child of the caller (runc waits for it), as CLONE_PARENT */
	o->restore_sibling = type == CRIU_REQ_TYPE__RESTORE && m->has_rst_sibling && m->rst_sibling;
	/* the file's options win over the request's, as in CRIU (runc's runc.conf) */
	if (m->config_file) {
		ret = cli_apply_config_file(o, m->config_file);
		if (ret)
			return refuse(err, size, ret,
				      "criu_opts.config_file: %s holds an option criu-like "
				      "refuses (its file and line are in the log)",
				      m->config_file);
	}
	return 0;
}
