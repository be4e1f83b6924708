// SPDX-License-Identifier: GPL-2.0
/*
 * The RPC's pure logic: criu_opts -> cr_options (every field honoured or
 * refused by name), the framing of requests (size limit, malformed and
 * truncated messages, a conversation over a socketpair), and the hook
 * points of --action-script (order of calls through a notifier).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "notify.h"
#include "options.h"
#include "restore.h"
#include "rpc.h"
#include "util.h"

struct tr {
	struct cr_options o;
	struct rpc_opts ro;
	char err[256];
	int ret;
};

static void translate(struct tr *t, const CriuOpts *m, CriuReqType type)
{
	cr_options_init(&t->o);
	t->ret = rpc_opts_translate(m, type, &t->o, &t->ro, t->err, sizeof(t->err));
}

static void test_opts_honoured(void **state)
{
	CriuOpts m = CRIU_OPTS__INIT;
	struct tr t;

	(void)state;
	m.images_dir_fd = 7;
	m.has_pid = m.has_leave_running = m.has_tcp_established = m.has_shell_job = true;
	m.pid = 1234;
	m.leave_running = m.tcp_established = m.shell_job = true;
	m.has_ext_unix_sk = m.ext_unix_sk = m.has_file_locks = m.file_locks = true;
	m.has_log_level = true;
	m.log_level = 4;
	m.log_file = "dump.log";
	m.has_work_dir_fd = true;
	m.work_dir_fd = 9;
	m.has_notify_scripts = m.notify_scripts = true;
	m.has_network_lock = true;
	m.network_lock = CRIU_NETWORK_LOCK_METHOD__SKIP;
	m.has_ghost_limit = true;
	m.ghost_limit = 4096;
	m.has_timeout = true;
	m.timeout = 30;
	/* false bools of missing features, cpu_cap none and cgroups IGNORE ask for nothing */
	m.has_track_mem = m.has_lazy_pages = m.has_tcp_close = true;
	m.has_cpu_cap = true;
	m.cpu_cap = 0;
	m.has_manage_cgroups_mode = true;
	m.manage_cgroups_mode = CRIU_CG_MODE__IGNORE;
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.o.tree, 1234);
	assert_true(t.o.leave_running && t.o.tcp_established && t.o.shell_job);
	assert_true(t.o.ext_unix_sk && t.o.file_locks);
	assert_int_equal(t.o.log_level, 4);
	assert_string_equal(t.o.log_file, "dump.log");
	assert_string_equal(t.o.network_lock, "skip");
	assert_int_equal(t.o.ghost_limit, 4096);
	assert_int_equal(t.o.timeout, 30);
	assert_int_equal(t.ro.images_dir_fd, 7);
	assert_int_equal(t.ro.work_dir_fd, 9);
	assert_true(t.ro.notify);
	assert_false(t.o.restore_detached);
	assert_false(t.o.auto_dedup);

	/* auto_dedup: honoured on a dump and a pre-dump (mem/dedup.c) */
	m.has_auto_dedup = m.auto_dedup = true;
	translate(&t, &m, CRIU_REQ_TYPE__PRE_DUMP);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.auto_dedup);
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.auto_dedup);
	m.has_auto_dedup = m.auto_dedup = false;

	/* a restore is always detached, as CRIU's; images_dir when images_dir_fd is -1 */
	m.images_dir_fd = -1;
	m.images_dir = "/var/lib/img";
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.restore_detached);
	assert_string_equal(t.o.images_dir, "/var/lib/img");
	assert_int_equal(t.ro.images_dir_fd, -1);
}

/* One field at a time: the refusal names it. */
static void expect_refused(CriuOpts *m, CriuReqType type, int ret, const char *needle)
{
	struct tr t;

	translate(&t, m, type);
	assert_int_equal(t.ret, ret);
	if (!strstr(t.err, needle))
		fail_msg("'%s' does not name '%s'", t.err, needle);
}

/* external as is, ext_mnt as mnt[KEY]:VAL (runc 1.1), root on a restore only. */
static void test_opts_external(void **state)
{
	static char *ext[] = { "mnt[/data]:data" };
	ExtMountMap em = EXT_MOUNT_MAP__INIT, *ems[] = { &em };
	CriuVethPair vp = CRIU_VETH_PAIR__INIT, *vps[] = { &vp };
	CriuOpts m = CRIU_OPTS__INIT;
	struct tr t;

	(void)state;
	m.images_dir_fd = 3;
	m.n_external = 1;
	m.external = ext;
	em.key = "/etc/hosts";
	em.val = "/etc/hosts";
	m.n_ext_mnt = 1;
	m.ext_mnt = ems;
	m.root = "/run/rootfs";
	vp.if_in = "eth0";
	vp.if_out = "veth-c1";
	m.n_veths = 1;
	m.veths = vps;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.o.n_external, 3);
	assert_string_equal(t.o.external[0], "mnt[/data]:data");
	assert_string_equal(t.o.external[1], "mnt[/etc/hosts]:/etc/hosts");
	assert_string_equal(t.o.external[2], "veth[eth0]:veth-c1"); /* CRIU's veth pairs */
	assert_null(t.o.external[3]);
	assert_string_equal(t.o.root, "/run/rootfs");
	cr_options_fini(&t.o);
	m.has_pid = true;
	m.pid = 5;
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_null(t.o.root);
	cr_options_fini(&t.o);
	em.key = "bad]key";
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, -EINVAL);
	assert_non_null(strstr(t.err, "criu_opts.ext_mnt[0]"));
}

/* join_ns: the network namespace only, on a restore, a pid or a path without options. */
static void test_opts_join_ns(void **state)
{
	JoinNamespace j = JOIN_NAMESPACE__INIT, j2 = JOIN_NAMESPACE__INIT, *js[] = { &j, &j2 };
	CriuOpts m = CRIU_OPTS__INIT;
	struct tr t;

	(void)state;
	m.images_dir_fd = 3;
	j.ns = "net";
	j.ns_file = "/run/netns/c1";
	m.n_join_ns = 1;
	m.join_ns = js;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_string_equal(t.o.join_ns_net, "/run/netns/c1");
	cr_options_fini(&t.o);
	j.ns_file = "4242"; /* CRIU's NS:PID form */
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_string_equal(t.o.join_ns_net, "4242");
	cr_options_fini(&t.o);
	m.has_pid = true;
	m.pid = 5;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.join_ns");
	m.has_pid = false;
	j.extra_opt = "user:0,0";
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EOPNOTSUPP, "criu_opts.join_ns[0]: extra_opt");
	j.extra_opt = NULL;
	j.ns_file = "";
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EINVAL, "criu_opts.join_ns[0]: ns_file");
	j.ns_file = "/run/netns/c1";
	j.ns = "uts";
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EOPNOTSUPP, "criu_opts.join_ns[0]: ns 'uts'");
	j.ns = "net";
	j2.ns = "net";
	j2.ns_file = "/run/netns/c2";
	m.n_join_ns = 2;
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EINVAL,
		       "criu_opts.join_ns[1]: net given twice");
}

/* freeze_cgroup: a dump and a pre-dump seize the tree the same way (runc sends it to both). */
static void test_opts_freeze_cgroup(void **state)
{
	CriuOpts m = CRIU_OPTS__INIT;
	struct tr t;

	(void)state;
	m.images_dir_fd = 3;
	m.has_pid = true;
	m.pid = 5;
	m.freeze_cgroup = "/sys/fs/cgroup/c1";
	translate(&t, &m, CRIU_REQ_TYPE__PRE_DUMP);
	assert_int_equal(t.ret, 0);
	assert_string_equal(t.o.freeze_cgroup, "/sys/fs/cgroup/c1");
	cr_options_fini(&t.o);
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	cr_options_fini(&t.o);
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EOPNOTSUPP, "criu_opts.freeze_cgroup");
}

static void test_opts_refused(void **state)
{
	static char *strs[] = { "x" };
	struct tr t;
	CriuOpts m;

	(void)state;
#define RESET()                                \
	do {                                   \
		m = (CriuOpts)CRIU_OPTS__INIT; \
		m.images_dir_fd = 3;           \
		m.has_pid = true;              \
		m.pid = 10;                    \
	} while (0)
	RESET();
	m.has_auto_dedup = m.auto_dedup = true;
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EOPNOTSUPP, "criu_opts.auto_dedup");
	RESET();
	m.parent_img = "../pre";
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EINVAL, "criu_opts.parent_img");
	/* lazy_pages: a lazy restore; a lazy dump needs ps (test_opts_page_server) */
	RESET();
	m.has_lazy_pages = m.lazy_pages = true;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.lazy_pages);
	cr_options_fini(&t.o);
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.ps: a lazy DUMP");
	expect_refused(&m, CRIU_REQ_TYPE__PRE_DUMP, -EINVAL, "criu_opts.lazy_pages: a pre-dump");
	RESET();
	m.n_external = 1;
	m.external = strs;
	strs[0] = "";
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.external[0]");
	strs[0] = "x";
	RESET();
	m.has_manage_cgroups_mode = true;
	m.manage_cgroups_mode = CRIU_CG_MODE__FULL;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_string_equal(t.o.manage_cgroups, "full");
	cr_options_fini(&t.o);
	m.manage_cgroups_mode = 7;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.manage_cgroups_mode");
	/* manage_cgroups alone: true is SOFT, false IGNORE (CRIU's) */
	RESET();
	m.has_manage_cgroups = true;
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_string_equal(t.o.manage_cgroups, "ignore");
	cr_options_fini(&t.o);
	/* runc's: SOFT, a mode overriding the bool */
	RESET();
	m.has_manage_cgroups = m.manage_cgroups = true;
	m.has_manage_cgroups_mode = true;
	m.manage_cgroups_mode = CRIU_CG_MODE__STRICT;
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_string_equal(t.o.manage_cgroups, "strict");
	cr_options_fini(&t.o);
	RESET();
	m.cgroup_yard = "/run/yard";
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_string_equal(t.o.cgroup_yard, "/run/yard");
	cr_options_fini(&t.o);
	m.cgroup_yard = "yard";
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EINVAL, "criu_opts.cgroup_yard");
	RESET();
	m.cgroup_props = "x";
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.cgroup_props");
	m.cgroup_props = "memory: - strategy: replace - properties: [memory.swappiness]";
	m.cgroup_props_file = "/etc/criu/cg.yaml";
	m.n_cgroup_dump_controller = 2;
	m.cgroup_dump_controller = (char *[]){ "memory", "unified" };
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_string_equal(t.o.cgroup_props, m.cgroup_props);
	assert_string_equal(t.o.cgroup_props_file, "/etc/criu/cg.yaml");
	assert_int_equal(t.o.n_cgroup_dump_ctrls, 2);
	assert_string_equal(t.o.cgroup_dump_ctrls[1], "unified");
	assert_null(t.o.cgroup_dump_ctrls[2]);
	cr_options_fini(&t.o);
	RESET();
	m.has_orphan_pts_master = m.orphan_pts_master = true;
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.orphan_pts_master);
	cr_options_fini(&t.o);
	/* with shell_job (runc's terminal): the new master goes to the client (files/chr.c) */
	m.has_shell_job = m.shell_job = true;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.orphan_pts_master && t.o.shell_job);
	cr_options_fini(&t.o);
	/* LXC's options (Documentation/runtimes.md, "LXC") */
	RESET();
	m.has_link_remap = m.link_remap = true;
	m.has_force_irmap = m.force_irmap = true;
	m.has_ext_sharing = m.ext_sharing = true;
	m.has_ext_masters = m.ext_masters = true;
	m.has_auto_ext_mnt = m.auto_ext_mnt = true;
	m.has_allow_uprobes = m.allow_uprobes = true;
	m.has_ghost_fiemap = m.ghost_fiemap = true;
	m.lsm_profile = "apparmor:unconfined";
	m.n_enable_fs = 1;
	m.enable_fs = strs;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.ext_mnt_auto);
	assert_true(t.o.link_remap && t.o.allow_uprobes);
	assert_string_equal(t.o.lsm_profile, "apparmor:unconfined");
	assert_int_equal(t.o.n_enable_fs, 1);
	assert_string_equal(t.o.enable_fs[0], "x");
	cr_options_fini(&t.o);
	m.n_enable_fs = 0;
	m.lsm_profile = "unconfined";
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EINVAL, "criu_opts.lsm_profile");
	RESET();
	m.has_rst_sibling = m.rst_sibling = true;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.restore_sibling);
	cr_options_fini(&t.o);
	{
		InheritFd ifd = INHERIT_FD__INIT, *ifds[] = { &ifd };
		CgroupRoot cg = CGROUP_ROOT__INIT, *cgs[] = { &cg };

		RESET();
		ifd.key = "pipe:[1234]";
		ifd.fd = 7;
		m.n_inherit_fd = 1;
		m.inherit_fd = ifds;
		translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
		assert_int_equal(t.ret, 0);
		assert_int_equal(t.o.n_inherit_fd, 1);
		assert_string_equal(t.o.inherit_fd[0], "fd[7]:pipe:[1234]");
		assert_int_equal(rst_inherited_fd(&t.o, "pipe:[1234]"), 7);
		assert_int_equal(rst_inherited_fd(&t.o, "pipe:[1235]"), -ENOENT);
		cr_options_fini(&t.o);
		expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.inherit_fd");
		/* runc's key of an external network namespace (ns.c checks it against the images) */
		ifd.key = "extRootNetNS";
		translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
		assert_int_equal(t.ret, 0);
		assert_int_equal(rst_inherited_fd(&t.o, "extRootNetNS"), 7);
		cr_options_fini(&t.o);
		ifd.key = "tmp/file"; /* a file by path: not yet */
		expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EOPNOTSUPP, "criu_opts.inherit_fd[0]");
		ifd.fd = -1;
		expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EINVAL, "criu_opts.inherit_fd[0]");
		RESET();
		/* cg_root: --cgroup-root [CTRL:]/PATH, "" as no controller (runc's v2) */
		cg.path = "/new/root";
		cg.ctrl = "memory";
		m.n_cg_root = 1;
		m.cg_root = cgs;
		translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
		assert_int_equal(t.ret, 0);
		assert_int_equal(t.o.n_cgroup_roots, 1);
		assert_string_equal(t.o.cgroup_roots[0], "memory:/new/root");
		cr_options_fini(&t.o);
		cg.ctrl = "";
		translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
		assert_int_equal(t.ret, 0);
		assert_string_equal(t.o.cgroup_roots[0], "/new/root");
		cr_options_fini(&t.o);
		cg.path = "relative";
		expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EINVAL, "criu_opts.cg_root[0]");
	}
	RESET();
	m.has_status_fd = true;
	m.status_fd = 5;
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EOPNOTSUPP, "criu_opts.status_fd");
	RESET();
	m.config_file = "/nonexistent/criu-like/runc.conf"; /* a missing file is no error */
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	/* the TLS fields as --tls and its files */
	RESET();
	m.has_tls = m.tls = true;
	m.has_tls_no_cn_verify = m.tls_no_cn_verify = true;
	m.tls_cacert = "/ca.pem";
	m.tls_cacrl = "/ca.crl";
	m.tls_cert = "/cert.pem";
	m.tls_key = "/key.pem";
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.tls && t.o.tls_no_cn_verify);
	assert_string_equal(t.o.tls_cacert, "/ca.pem");
	assert_string_equal(t.o.tls_cacrl, "/ca.crl");
	assert_string_equal(t.o.tls_cert, "/cert.pem");
	assert_string_equal(t.o.tls_key, "/key.pem");
	cr_options_fini(&t.o);
	RESET();
	m.has_empty_ns = true;
	m.empty_ns = 0x40000000; /* CLONE_NEWNET: accepted */
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.empty_ns_net);
	RESET();
	m.has_empty_ns = true;
	m.empty_ns = 0x04000000; /* CLONE_NEWUTS */
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EOPNOTSUPP, "criu_opts.empty_ns: 0x4000000");
	/* out of range or malformed values */
	RESET();
	m.has_pid = false;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EOPNOTSUPP, "criu_opts.pid: not set");
	RESET();
	m.pid = -3;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.pid: -3");
	RESET();
	m.images_dir_fd = -7;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.images_dir_fd: -7");
	RESET();
	m.images_dir_fd = -1;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "no image directory");
	RESET();
	m.log_file = "../x.log";
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.log_file");
	RESET();
	m.has_log_level = true;
	m.log_level = -1;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.log_level");
	RESET();
	m.has_network_lock = true;
	m.network_lock = 9;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.network_lock: 9");
	RESET();
	m.has_timeout = true;
	m.timeout = 100000;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.timeout");
#undef RESET
}

/* ps, status_fd, cpu_cap: the page server's and cpuinfo's fields by request type. */
static void test_opts_page_server(void **state)
{
	CriuPageServerInfo ps = CRIU_PAGE_SERVER_INFO__INIT;
	CriuOpts m = CRIU_OPTS__INIT;
	struct tr t;

	(void)state;
	m.images_dir_fd = 3;
	m.has_pid = true;
	m.pid = 10;
	m.ps = &ps;
	ps.address = "127.0.0.1";
	ps.has_port = true;
	ps.port = 27000;
	/* a dump's pages go there, as --page-server --address --port */
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.page_server);
	assert_string_equal(t.o.address, "127.0.0.1");
	assert_int_equal(t.o.port, 27000);
	assert_int_equal(t.ro.ps_fd, -1);
	cr_options_fini(&t.o);
	translate(&t, &m, CRIU_REQ_TYPE__PRE_DUMP);
	assert_int_equal(t.ret, 0);
	assert_true(t.o.page_server);
	cr_options_fini(&t.o);
	/* the page server listens there; it is no dump */
	translate(&t, &m, CRIU_REQ_TYPE__PAGE_SERVER);
	assert_int_equal(t.ret, 0);
	assert_false(t.o.page_server);
	assert_int_equal(t.o.port, 27000);
	cr_options_fini(&t.o);
	/* a connection instead (swrk's fd) */
	ps.has_fd = true;
	ps.fd = 9;
	ps.address = NULL;
	ps.has_port = false;
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.ro.ps_fd, 9);
	assert_true(t.o.page_server);
	cr_options_fini(&t.o);
	ps.fd = -2;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.ps.fd: -2");
	ps.has_fd = false;
	/* a dump without the server's address and port */
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.ps: a dump needs");
	ps.address = "127.0.0.1";
	ps.has_port = true;
	ps.port = 70000;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.ps.port: 70000");
	ps.port = 0;
	/* port 0: an ephemeral one, for a page server only */
	translate(&t, &m, CRIU_REQ_TYPE__PAGE_SERVER_CHLD);
	assert_int_equal(t.ret, 0);
	cr_options_fini(&t.o);
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.ps: a dump needs");
	ps.has_pid = true;
	expect_refused(&m, CRIU_REQ_TYPE__PAGE_SERVER, -EINVAL, "criu_opts.ps.pid");
	ps.has_pid = false;
	/* a restore takes none, but for a lazy one (its daemon is the client's) */
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EINVAL, "criu_opts.ps: a restore");
	m.has_lazy_pages = m.lazy_pages = true;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	assert_false(t.o.page_server);
	assert_true(t.o.lazy_pages);
	cr_options_fini(&t.o);
	/* a lazy dump (runc checkpoint --lazy-pages --page-server): it listens at ps */
	ps.port = 27000;
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_false(t.o.page_server);
	assert_true(t.o.lazy_pages);
	assert_string_equal(t.o.address, "127.0.0.1");
	assert_int_equal(t.o.port, 27000);
	cr_options_fini(&t.o);
	/* its status_fd is written once it serves (CRIU's) */
	m.has_status_fd = true;
	m.status_fd = 6;
	translate(&t, &m, CRIU_REQ_TYPE__DUMP);
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.ro.status_fd, 6);
	cr_options_fini(&t.o);
	m.has_status_fd = false;
	/* it listens itself: no connection of the client's */
	ps.has_fd = true;
	ps.fd = 9;
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EINVAL, "criu_opts.ps.fd: a lazy DUMP");
	ps.has_fd = false;
	ps.port = 0;
	m.has_lazy_pages = m.lazy_pages = false;
	/* status_fd: the page server's readiness */
	m.has_status_fd = true;
	m.status_fd = 6;
	translate(&t, &m, CRIU_REQ_TYPE__PAGE_SERVER);
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.ro.status_fd, 6);
	cr_options_fini(&t.o);
	expect_refused(&m, CRIU_REQ_TYPE__DUMP, -EOPNOTSUPP, "criu_opts.status_fd");
	m.has_status_fd = false;
	/* PAGE_SERVER needs ps */
	m.ps = NULL;
	expect_refused(&m, CRIU_REQ_TYPE__PAGE_SERVER, -EINVAL, "criu_opts.ps: PAGE_SERVER");
	/* cpu_cap: what CPUINFO_CHECK compares; elsewhere only none */
	m.has_cpu_cap = true;
	m.cpu_cap = 0xffffffff; /* CRIU's default: all */
	translate(&t, &m, CRIU_REQ_TYPE__CPUINFO_CHECK);
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.o.cpu_cap, 7);
	cr_options_fini(&t.o);
	m.cpu_cap = 1;
	translate(&t, &m, CRIU_REQ_TYPE__CPUINFO_CHECK);
	assert_int_equal(t.ret, 0);
	assert_int_equal(t.o.cpu_cap, 1);
	cr_options_fini(&t.o);
	expect_refused(&m, CRIU_REQ_TYPE__RESTORE, -EOPNOTSUPP, "criu_opts.cpu_cap");
	m.cpu_cap = 0;
	translate(&t, &m, CRIU_REQ_TYPE__RESTORE);
	assert_int_equal(t.ret, 0);
	cr_options_fini(&t.o);
}

/* The fields given a meaning; every other one must be refused when it asks. */
static const char *const handled[] = {
	"images_dir_fd",
	"images_dir",
	"pid",
	"leave_running",
	"ext_unix_sk",
	"tcp_established",
	"tcp_close",
	"tcp_skip_in_flight",
	"shell_job",
	"file_locks",
	"log_level",
	"log_file",
	"notify_scripts",
	"work_dir_fd",
	"timeout",
	"freeze_cgroup",
	"ghost_limit",
	"network_lock",
	"pre_dump_mode",
	"log_to_stderr",
	"track_mem",
	"display_stats",
	"config_file",
	"parent_img",
	"root",
	"external",
	"ext_mnt",
	"veths",
	"empty_ns",
	"evasive_devices",
	"manage_cgroups",
	"manage_cgroups_mode",
	"orphan_pts_master",
	"rst_sibling",
	"inherit_fd",
	"cg_root",
	"cgroup_props_file", /* read at dump: Documentation/cgroups.md */
	"cgroup_dump_controller",
	"join_ns",
	/* LXC's: accepted (criu-like needs none of them) or given --enable-fs's meaning */
	"link_remap",
	"allow_uprobes", /* the [uprobes] area left out (Documentation/memory.md) */
	"ghost_fiemap", /* ghosts are saved by their extents anyway */
	"force_irmap",
	"ext_sharing",
	"ext_masters",
	"auto_ext_mnt",
	"lsm_profile",
	"enable_fs",
	/* the page server's and lazy restore's (test_opts_page_server) */
	"lazy_pages",
	"tls",
	"tls_no_cn_verify",
	"tls_cacert",
	"tls_cacrl",
	"tls_cert",
	"tls_key",
};

static bool is_handled(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(handled); i++)
		if (!strcmp(handled[i], name))
			return true;
	return false;
}

/* Every field of the schema is either translated or refused naming itself. */
static void test_opts_every_field(void **state)
{
	const ProtobufCMessageDescriptor *d = &criu_opts__descriptor;
	unsigned int i;

	(void)state;
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		uint8_t buf[64];
		CriuOpts m = CRIU_OPTS__INIT;
		struct tr t;
		size_t len;
		CriuOpts *u;

		/* a request carrying field f alone, with a non-default value, via the wire */
		m.images_dir_fd = 3;
		if (f->label == PROTOBUF_C_LABEL_REQUIRED)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED || f->type == PROTOBUF_C_TYPE_MESSAGE)
			continue; /* covered by test_opts_refused (external) and the table */
		if (f->type == PROTOBUF_C_TYPE_STRING) {
			*(char **)((char *)&m + f->offset) = "a";
		} else {
			*(protobuf_c_boolean *)((char *)&m + f->quantifier_offset) = 1;
			if (f->type == PROTOBUF_C_TYPE_BOOL)
				*(protobuf_c_boolean *)((char *)&m + f->offset) = 1;
			else
				*(int32_t *)((char *)&m + f->offset) = 1;
		}
		len = criu_opts__pack(&m, buf);
		u = criu_opts__unpack(NULL, len, buf);
		assert_non_null(u);
		translate(&t, u, CRIU_REQ_TYPE__RESTORE);
		/* refused ones name themselves; the others were given a meaning */
		if (t.ret && !strstr(t.err, f->name))
			fail_msg("field %s: refusal '%s' does not name it", f->name, t.err);
		if (!t.ret && !is_handled(f->name))
			fail_msg("field %s: neither given a meaning nor refused", f->name);
		criu_opts__free_unpacked(u, NULL);
	}
}

static void test_decode(void **state)
{
	CriuReq req = CRIU_REQ__INIT, *out = NULL;
	uint8_t buf[64], junk[32];
	char err[128];
	size_t len;

	(void)state;
	req.type = CRIU_REQ_TYPE__VERSION;
	len = criu_req__pack(&req, buf);
	assert_int_equal(rpc_decode_req(buf, len, &out, err, sizeof(err)), 0);
	assert_int_equal(out->type, CRIU_REQ_TYPE__VERSION);
	criu_req__free_unpacked(out, NULL);
	/* no required type */
	assert_int_equal(rpc_decode_req(buf, 0, &out, err, sizeof(err)), -EBADMSG);
	memset(junk, 0xff, sizeof(junk));
	assert_int_equal(rpc_decode_req(junk, sizeof(junk), &out, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "malformed or truncated message (32 bytes)"));
	assert_int_equal(rpc_decode_req(junk, RPC_MAX_MSG + 1, &out, err, sizeof(err)), -EMSGSIZE);
	assert_non_null(strstr(err, "over the limit"));
}

static void test_recv(void **state)
{
	CriuReq req = CRIU_REQ__INIT, *out = NULL;
	CriuOpts o = CRIU_OPTS__INIT;
	uint8_t buf[256];
	char err[128];
	uint8_t *big;
	size_t len;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	/* a truncated request, an oversized one, then a good one: each on its own */
	req.type = CRIU_REQ_TYPE__DUMP;
	req.opts = &o;
	o.log_file = "some-log-file-name.log";
	len = criu_req__pack(&req, buf);
	assert_int_equal(send(sv[1], buf, len - 4, 0), (ssize_t)(len - 4));
	big = calloc(1, RPC_MAX_MSG + 100);
	assert_int_equal(send(sv[1], big, RPC_MAX_MSG + 100, 0), RPC_MAX_MSG + 100);
	free(big);
	assert_int_equal(send(sv[1], buf, len, 0), (ssize_t)len);
	assert_int_equal(rpc_recv_req(sv[0], &out, err, sizeof(err)), -EBADMSG);
	assert_int_equal(rpc_recv_req(sv[0], &out, err, sizeof(err)), -EMSGSIZE);
	assert_int_equal(rpc_recv_req(sv[0], &out, err, sizeof(err)), 0);
	assert_string_equal(out->opts->log_file, "some-log-file-name.log");
	criu_req__free_unpacked(out, NULL);
	close(sv[1]);
	assert_int_equal(rpc_recv_req(sv[0], &out, err, sizeof(err)), 1);
	close(sv[0]);
}

static char calls[256];

static int record(void *priv, const char *action, pid_t root)
{
	(void)priv;
	snprintf(calls + strlen(calls), sizeof(calls) - strlen(calls), "%s:%d ", action, root);
	return strcmp(action, CR_ACT_POST_DUMP) ? 0 : -ECANCELED;
}

/* cr_notify: the notifier first, its failure fails the hook (no script run then). */
static void test_notify(void **state)
{
	struct cr_notifier n = { .notify = record };
	struct cr_options o;

	(void)state;
	cr_options_init(&o);
	o.notifier = &n;
	o.action_script = "/nonexistent/script";
	calls[0] = '\0';
	assert_int_equal(cr_notify(&o, CR_ACT_POST_DUMP, 42, -1), -ECANCELED);
	assert_string_equal(calls, "post-dump:42 ");
	/* then the script: it does not exist, exec fails, the hook fails */
	assert_int_equal(cr_notify(&o, CR_ACT_PRE_DUMP, 42, -1), -ECANCELED);
	o.action_script = "/bin/true";
	assert_int_equal(cr_notify(&o, CR_ACT_PRE_DUMP, 42, -1), 0);
	assert_string_equal(calls, "post-dump:42 pre-dump:42 pre-dump:42 ");
	/* a descriptor goes to a notifier that takes one, never to a script */
	assert_int_equal(cr_notify_fd(&o, CR_ACT_ORPHAN_PTS_MASTER, 42, 0), -ENOTCONN);
	o.notifier = NULL;
	assert_int_equal(cr_notify_fd(&o, CR_ACT_ORPHAN_PTS_MASTER, 42, 0), -ENOTCONN);
}

/* rpc_send_resp_fd: the message and the descriptor (SCM_RIGHTS) in one datagram. */
static void test_send_fd(void **state)
{
	CriuResp resp = CRIU_RESP__INIT, *got;
	CriuNotify cn = CRIU_NOTIFY__INIT;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	uint8_t buf[256];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int sk[2], p[2], fd;
	ssize_t n;
	char c = 0;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sk), 0);
	assert_int_equal(pipe(p), 0);
	resp.type = CRIU_REQ_TYPE__NOTIFY;
	resp.success = true;
	resp.notify = &cn;
	cn.script = CR_ACT_ORPHAN_PTS_MASTER;
	assert_int_equal(rpc_send_resp_fd(sk[0], &resp, p[1]), 0);
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	n = recvmsg(sk[1], &mh, 0);
	assert_true(n > 0);
	got = criu_resp__unpack(NULL, (size_t)n, buf);
	assert_non_null(got);
	assert_string_equal(got->notify->script, "orphan-pts-master");
	criu_resp__free_unpacked(got, NULL);
	cm = CMSG_FIRSTHDR(&mh);
	assert_non_null(cm);
	assert_int_equal(cm->cmsg_type, SCM_RIGHTS);
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	/* the same pipe: a byte written through it comes out of p[0] */
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	close(fd);
	/* without one: a plain message */
	assert_int_equal(rpc_send_resp_fd(sk[0], &resp, -1), 0);
	mh.msg_controllen = sizeof(ctl.buf);
	assert_true(recvmsg(sk[1], &mh, 0) > 0);
	assert_null(CMSG_FIRSTHDR(&mh));
	close(p[0]);
	close(p[1]);
	close(sk[0]);
	close(sk[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_honoured),
		cmocka_unit_test(test_opts_refused),
		cmocka_unit_test(test_opts_page_server),
		cmocka_unit_test(test_opts_external),
		cmocka_unit_test(test_opts_every_field),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_recv),
		cmocka_unit_test(test_notify),
		cmocka_unit_test(test_send_fd),
		cmocka_unit_test(test_opts_join_ns),
		cmocka_unit_test(test_opts_freeze_cgroup),
	};

	log_set_level(0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
