// SPDX-License-Identifier: GPL-2.0
/*
 * The options of a request: each setter fills one field of the criu_opts
 * message that goes to criu-like as it is. Nothing is checked here beyond
 * what the field can hold: what criu-like refuses, it refuses by the
 * field's name when the request arrives (Documentation/rpc.md, "Options").
 * The criu_set_*() of the global options are the criu_local_set_*() of
 * lib_global_opts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib-int.h"

const char *criu_lib_version = CRIU_LIKE_LIB_VERSION;

criu_opts *lib_global_opts;

int lib_fail(criu_opts *opts, int err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(opts->errmsg, sizeof(opts->errmsg), fmt, ap);
	va_end(ap);
	errno = saved;
	return err;
}

const char *criu_like_local_get_errmsg(criu_opts *opts)
{
	return opts ? opts->errmsg : "the options are not initialized (criu_init_opts())";
}

const char *criu_like_get_errmsg(void)
{
	return criu_like_local_get_errmsg(lib_global_opts);
}

/* ---- life of the options ---------------------------------------------------- */

static void free_service(criu_opts *opts)
{
	free(opts->service_address);
	free(opts->service_binary);
	opts->service_address = NULL;
	opts->service_binary = NULL;
	opts->service_fd = -1;
}

void criu_local_free_opts(criu_opts *opts)
{
	if (!opts)
		return;
	/* every pointer in the message is malloc()ed: protobuf-c frees the tree */
	if (opts->rpc)
		criu_opts__free_unpacked(opts->rpc, NULL);
	free_service(opts);
	free(opts);
}

int criu_local_init_opts(criu_opts **ret)
{
	criu_opts *opts;

	criu_local_free_opts(*ret);
	*ret = NULL;
	opts = calloc(1, sizeof(*opts));
	if (!opts)
		return -1;
	opts->rpc = malloc(sizeof(*opts->rpc));
	if (!opts->rpc) {
		free(opts);
		return -1;
	}
	criu_opts__init(opts->rpc);
	opts->comm = CRIU_COMM_BIN;
	opts->service_fd = -1;
	*ret = opts;
	return 0;
}

int criu_init_opts(void)
{
	return criu_local_init_opts(&lib_global_opts);
}

void criu_free_opts(void)
{
	criu_local_free_opts(lib_global_opts);
	lib_global_opts = NULL;
}

/* ---- how to reach criu-like --------------------------------------------------- */

static int set_service(criu_opts *opts, enum criu_service_comm comm, const char *str)
{
	char *s = NULL;

	if (str) {
		s = strdup(str);
		if (!s)
			return -ENOMEM;
	}
	free_service(opts);
	opts->comm = comm;
	if (comm == CRIU_COMM_SK)
		opts->service_address = s;
	else
		opts->service_binary = s;
	return 0;
}

int criu_local_set_service_address(criu_opts *opts, const char *path)
{
	return set_service(opts, CRIU_COMM_SK, path);
}

int criu_set_service_address(const char *path)
{
	return criu_local_set_service_address(lib_global_opts, path);
}

int criu_local_set_service_binary(criu_opts *opts, const char *path)
{
	return set_service(opts, CRIU_COMM_BIN, path);
}

int criu_set_service_binary(const char *path)
{
	return criu_local_set_service_binary(lib_global_opts, path);
}

void criu_local_set_service_fd(criu_opts *opts, int fd)
{
	free_service(opts);
	opts->comm = CRIU_COMM_FD;
	opts->service_fd = fd;
}

void criu_set_service_fd(int fd)
{
	criu_local_set_service_fd(lib_global_opts, fd);
}

void criu_local_set_notify_cb(criu_opts *opts, int (*cb)(char *action, criu_notify_arg_t na))
{
	opts->notify = cb;
	/* criu-like tells the hook points only to a client that asks */
	opts->rpc->has_notify_scripts = true;
	opts->rpc->notify_scripts = cb != NULL;
}

void criu_set_notify_cb(int (*cb)(char *action, criu_notify_arg_t na))
{
	criu_local_set_notify_cb(lib_global_opts, cb);
}

int criu_notify_pid(criu_notify_arg_t na)
{
	return na && na->has_pid ? na->pid : 0;
}

/* ---- scalar fields ------------------------------------------------------------- */

/* An optional scalar field: has_FIELD and FIELD, set by the local and the global setter. */
#define SCALAR_OPT(name, field, type, ctype)                  \
	void criu_local_set_##name(criu_opts *opts, type val) \
	{                                                     \
		opts->rpc->has_##field = true;                \
		opts->rpc->field = (ctype)val;                \
	}                                                     \
	void criu_set_##name(type val)                        \
	{                                                     \
		criu_local_set_##name(lib_global_opts, val);  \
	}

SCALAR_OPT(pid, pid, int, int32_t)
SCALAR_OPT(work_dir_fd, work_dir_fd, int, int32_t)
SCALAR_OPT(leave_running, leave_running, bool, bool)
SCALAR_OPT(ext_unix_sk, ext_unix_sk, bool, bool)
SCALAR_OPT(tcp_established, tcp_established, bool, bool)
SCALAR_OPT(tcp_skip_in_flight, tcp_skip_in_flight, bool, bool)
SCALAR_OPT(tcp_close, tcp_close, bool, bool)
SCALAR_OPT(weak_sysctls, weak_sysctls, bool, bool)
SCALAR_OPT(evasive_devices, evasive_devices, bool, bool)
SCALAR_OPT(shell_job, shell_job, bool, bool)
SCALAR_OPT(skip_file_rwx_check, skip_file_rwx_check, bool, bool)
SCALAR_OPT(unprivileged, unprivileged, bool, bool)
SCALAR_OPT(orphan_pts_master, orphan_pts_master, bool, bool)
SCALAR_OPT(file_locks, file_locks, bool, bool)
SCALAR_OPT(track_mem, track_mem, bool, bool)
SCALAR_OPT(auto_dedup, auto_dedup, bool, bool)
SCALAR_OPT(force_irmap, force_irmap, bool, bool)
SCALAR_OPT(link_remap, link_remap, bool, bool)
SCALAR_OPT(log_level, log_level, int, int32_t)
SCALAR_OPT(cpu_cap, cpu_cap, unsigned int, uint32_t)
SCALAR_OPT(manage_cgroups, manage_cgroups, bool, bool)
SCALAR_OPT(manage_cgroups_mode, manage_cgroups_mode, enum criu_cg_mode, CriuCgMode)
SCALAR_OPT(timeout, timeout, unsigned int, uint32_t)
SCALAR_OPT(auto_ext_mnt, auto_ext_mnt, bool, bool)
SCALAR_OPT(ext_sharing, ext_sharing, bool, bool)
SCALAR_OPT(ext_masters, ext_masters, bool, bool)
SCALAR_OPT(ghost_limit, ghost_limit, unsigned int, uint32_t)
SCALAR_OPT(pidfd_store_sk, pidfd_store_sk, int, int32_t)
SCALAR_OPT(mntns_compat_mode, mntns_compat_mode, bool, bool)
SCALAR_OPT(empty_ns, empty_ns, int, uint32_t)

/* images_dir_fd is a required field: no has_ */
void criu_local_set_images_dir_fd(criu_opts *opts, int fd)
{
	opts->rpc->images_dir_fd = fd;
}

void criu_set_images_dir_fd(int fd)
{
	criu_local_set_images_dir_fd(lib_global_opts, fd);
}

int criu_local_set_pre_dump_mode(criu_opts *opts, enum criu_pre_dump_mode mode)
{
	if (mode != CRIU_PRE_DUMP_SPLICE && mode != CRIU_PRE_DUMP_READ)
		return -EINVAL;
	opts->rpc->has_pre_dump_mode = true;
	opts->rpc->pre_dump_mode = (CriuPreDumpMode)mode;
	return 0;
}

int criu_set_pre_dump_mode(enum criu_pre_dump_mode mode)
{
	return criu_local_set_pre_dump_mode(lib_global_opts, mode);
}

int criu_local_set_network_lock(criu_opts *opts, enum criu_network_lock_method method)
{
	if (method != CRIU_NETWORK_LOCK_IPTABLES && method != CRIU_NETWORK_LOCK_NFTABLES &&
	    method != CRIU_NETWORK_LOCK_SKIP)
		return -EINVAL;
	opts->rpc->has_network_lock = true;
	opts->rpc->network_lock = (CriuNetworkLockMethod)method;
	return 0;
}

int criu_set_network_lock(enum criu_network_lock_method method)
{
	return criu_local_set_network_lock(lib_global_opts, method);
}

/* ---- string fields -------------------------------------------------------------- */

static int set_str(char **field, const char *val)
{
	char *s;

	if (!val)
		return -EINVAL;
	s = strdup(val);
	if (!s)
		return -ENOMEM;
	free(*field);
	*field = s;
	return 0;
}

/* A string field: a copy of the value replaces the one set before. */
#define STRING_OPT(name, field)                                 \
	int criu_local_##name(criu_opts *opts, const char *val) \
	{                                                       \
		return set_str(&opts->rpc->field, val);         \
	}                                                       \
	int criu_##name(const char *val)                        \
	{                                                       \
		return criu_local_##name(lib_global_opts, val); \
	}

STRING_OPT(set_parent_images, parent_img)
STRING_OPT(set_log_file, log_file)
STRING_OPT(set_root, root)
STRING_OPT(set_freeze_cgroup, freeze_cgroup)
STRING_OPT(set_lsm_profile, lsm_profile)
STRING_OPT(set_lsm_mount_context, lsm_mount_context)
STRING_OPT(set_config_file, config_file)
STRING_OPT(add_cg_props, cgroup_props)
STRING_OPT(add_cg_props_file, cgroup_props_file)
STRING_OPT(add_cg_yard, cgroup_yard)

/* ---- repeated fields --------------------------------------------------------------- */

/* Appends item to the array *arr of *n pointers. */
static int append(void *arr, size_t *n, void *item)
{
	void **a = realloc(*(void ***)arr, (*n + 1) * sizeof(void *));

	if (!a)
		return -ENOMEM;
	a[(*n)++] = item;
	*(void ***)arr = a;
	return 0;
}

static int append_str(char ***arr, size_t *n, const char *val)
{
	char *s;
	int ret;

	if (!val)
		return -EINVAL;
	s = strdup(val);
	if (!s)
		return -ENOMEM;
	ret = append(arr, n, s);
	if (ret)
		free(s);
	return ret;
}

/* A repeated string field: the value is added to the list. */
#define STRINGS_OPT(name, field)                                                  \
	int criu_local_##name(criu_opts *opts, const char *val)                   \
	{                                                                         \
		return append_str(&opts->rpc->field, &opts->rpc->n_##field, val); \
	}                                                                         \
	int criu_##name(const char *val)                                          \
	{                                                                         \
		return criu_local_##name(lib_global_opts, val);                   \
	}

STRINGS_OPT(add_enable_fs, enable_fs)
STRINGS_OPT(add_skip_mnt, skip_mnt)
STRINGS_OPT(add_irmap_path, irmap_scan_paths)
STRINGS_OPT(add_cg_dump_controller, cgroup_dump_controller)
STRINGS_OPT(add_external, external)

int criu_local_set_exec_cmd(criu_opts *opts, int argc, char *argv[])
{
	CriuOpts *r = opts->rpc;
	int i, ret;

	for (i = 0; i < argc; i++) {
		ret = append_str(&r->exec_cmd, &r->n_exec_cmd, argv[i]);
		if (ret)
			return ret;
	}
	return 0;
}

int criu_set_exec_cmd(int argc, char *argv[])
{
	return criu_local_set_exec_cmd(lib_global_opts, argc, argv);
}

int criu_local_add_unix_sk(criu_opts *opts, unsigned int inode)
{
	UnixSk *u = malloc(sizeof(*u));

	if (!u)
		return -ENOMEM;
	unix_sk__init(u);
	u->inode = inode;
	if (append(&opts->rpc->unix_sk_ino, &opts->rpc->n_unix_sk_ino, u)) {
		free(u);
		return -ENOMEM;
	}
	return 0;
}

int criu_add_unix_sk(unsigned int inode)
{
	return criu_local_add_unix_sk(lib_global_opts, inode);
}

/* A pair of strings in a sub-message; b may be optional (NULL). */
static int dup2str(const char *a, const char *b, bool b_required, char **ra, char **rb)
{
	if (!a || (b_required && !b))
		return -EINVAL;
	*ra = strdup(a);
	*rb = b ? strdup(b) : NULL;
	if (!*ra || (b && !*rb)) {
		free(*ra);
		free(*rb);
		return -ENOMEM;
	}
	return 0;
}

int criu_local_add_ext_mount(criu_opts *opts, const char *key, const char *val)
{
	ExtMountMap *m = malloc(sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	ext_mount_map__init(m);
	ret = dup2str(key, val, true, &m->key, &m->val);
	if (!ret)
		ret = append(&opts->rpc->ext_mnt, &opts->rpc->n_ext_mnt, m);
	if (ret)
		ext_mount_map__free_unpacked(m, NULL);
	return ret;
}

int criu_add_ext_mount(const char *key, const char *val)
{
	return criu_local_add_ext_mount(lib_global_opts, key, val);
}

int criu_local_add_veth_pair(criu_opts *opts, const char *in, const char *out)
{
	CriuVethPair *p = malloc(sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	criu_veth_pair__init(p);
	ret = dup2str(in, out, true, &p->if_in, &p->if_out);
	if (!ret)
		ret = append(&opts->rpc->veths, &opts->rpc->n_veths, p);
	if (ret)
		criu_veth_pair__free_unpacked(p, NULL);
	return ret;
}

int criu_add_veth_pair(const char *in, const char *out)
{
	return criu_local_add_veth_pair(lib_global_opts, in, out);
}

int criu_local_add_cg_root(criu_opts *opts, const char *ctrl, const char *path)
{
	CgroupRoot *r = malloc(sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	cgroup_root__init(r);
	ret = dup2str(path, ctrl, false, &r->path, &r->ctrl);
	if (!ret)
		ret = append(&opts->rpc->cg_root, &opts->rpc->n_cg_root, r);
	if (ret)
		cgroup_root__free_unpacked(r, NULL);
	return ret;
}

int criu_add_cg_root(const char *ctrl, const char *path)
{
	return criu_local_add_cg_root(lib_global_opts, ctrl, path);
}

int criu_local_add_inherit_fd(criu_opts *opts, int fd, const char *key)
{
	InheritFd *f;
	int ret;

	/* as libcriu: only swrk runs with the caller's descriptors */
	if (opts->comm != CRIU_COMM_BIN)
		return -EINVAL;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	inherit_fd__init(f);
	f->fd = fd;
	ret = set_str(&f->key, key);
	if (!ret)
		ret = append(&opts->rpc->inherit_fd, &opts->rpc->n_inherit_fd, f);
	if (ret)
		inherit_fd__free_unpacked(f, NULL);
	return ret;
}

int criu_add_inherit_fd(int fd, const char *key)
{
	return criu_local_add_inherit_fd(lib_global_opts, fd, key);
}

int criu_local_join_ns_add(criu_opts *opts, const char *ns, const char *ns_file,
			   const char *extra_opt)
{
	JoinNamespace *j = malloc(sizeof(*j));
	int ret;

	if (!j)
		return -ENOMEM;
	join_namespace__init(j);
	ret = dup2str(ns, ns_file, true, &j->ns, &j->ns_file);
	if (!ret && extra_opt)
		ret = set_str(&j->extra_opt, extra_opt);
	if (!ret)
		ret = append(&opts->rpc->join_ns, &opts->rpc->n_join_ns, j);
	if (ret)
		join_namespace__free_unpacked(j, NULL);
	return ret;
}

int criu_join_ns_add(const char *ns, const char *ns_file, const char *extra_opt)
{
	return criu_local_join_ns_add(lib_global_opts, ns, ns_file, extra_opt);
}

int criu_local_set_page_server_address_port(criu_opts *opts, const char *address, int port)
{
	CriuPageServerInfo *ps = malloc(sizeof(*ps));
	int ret;

	if (!ps)
		return -ENOMEM;
	criu_page_server_info__init(ps);
	ret = set_str(&ps->address, address);
	if (ret) {
		free(ps);
		return ret;
	}
	ps->has_port = true;
	ps->port = port;
	if (opts->rpc->ps)
		criu_page_server_info__free_unpacked(opts->rpc->ps, NULL);
	opts->rpc->ps = ps;
	return 0;
}

int criu_set_page_server_address_port(const char *address, int port)
{
	return criu_local_set_page_server_address_port(lib_global_opts, address, port);
}
