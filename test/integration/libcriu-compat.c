// SPDX-License-Identifier: GPL-2.0
/*
 * A program written for CRIU's libcriu, built unchanged against libcriu-like
 * (`pkg-config --cflags --libs criu-like`, the header as <criu/criu.h>):
 * every call of libcriu's API that criu-like has must compile and link. Run
 * as `libcriu-compat [BINARY]`, it sets every option on options it never
 * sends, then asks criu-like's version (swrk) and checks the kernel.
 */
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criu/criu.h>

static int cb(char *action, criu_notify_arg_t na)
{
	printf("%s %d\n", action, criu_notify_pid(na));
	return 0;
}

static int more(criu_predump_info pi)
{
	(void)pi;
	return 0;
}

/* The request functions, referenced so that they must link. */
static int (*requests[])(void) = { criu_check,	 criu_dump,	     criu_pre_dump,
				   criu_restore, criu_restore_child, criu_get_version };
static int (*local_requests[])(criu_opts *) = { criu_local_check,	  criu_local_dump,
						criu_local_pre_dump,	  criu_local_restore,
						criu_local_restore_child, criu_local_get_version };
static int (*iters[])(int (*)(criu_predump_info)) = { criu_dump_iters };
static int (*local_iters[])(criu_opts *, int (*)(criu_predump_info)) = { criu_local_dump_iters };
static int (*features[])(criu_opts *, struct criu_feature_check *,
			 size_t) = { criu_local_feature_check };
static int (*versions[])(criu_opts *, int) = { criu_local_check_version };
static int (*mores[])(criu_predump_info) = { more };

static int set_all(criu_opts *o)
{
	char *argv[] = { "true", NULL };
	int ret = 0;

	criu_local_set_service_fd(o, -1);
	ret |= criu_local_set_service_address(o, "/run/criu-like.sock");
	ret |= criu_local_set_service_binary(o, "criu-like");
	criu_local_set_pid(o, 1);
	criu_local_set_images_dir_fd(o, 0);
	ret |= criu_local_set_parent_images(o, "../parent");
	criu_local_set_work_dir_fd(o, 0);
	criu_local_set_leave_running(o, true);
	criu_local_set_ext_unix_sk(o, true);
	ret |= criu_local_add_unix_sk(o, 12345);
	criu_local_set_tcp_established(o, true);
	criu_local_set_tcp_skip_in_flight(o, true);
	criu_local_set_tcp_close(o, true);
	criu_local_set_weak_sysctls(o, true);
	criu_local_set_evasive_devices(o, true);
	criu_local_set_shell_job(o, true);
	criu_local_set_skip_file_rwx_check(o, true);
	criu_local_set_unprivileged(o, true);
	criu_local_set_orphan_pts_master(o, true);
	criu_local_set_file_locks(o, true);
	criu_local_set_track_mem(o, true);
	criu_local_set_auto_dedup(o, true);
	criu_local_set_force_irmap(o, true);
	criu_local_set_link_remap(o, true);
	criu_local_set_log_level(o, CRIU_LOG_DEBUG);
	ret |= criu_local_set_log_file(o, "x.log");
	criu_local_set_cpu_cap(o, 0);
	ret |= criu_local_set_root(o, "/");
	criu_local_set_manage_cgroups(o, true);
	criu_local_set_manage_cgroups_mode(o, CRIU_CG_MODE_SOFT);
	ret |= criu_local_set_freeze_cgroup(o, "/sys/fs/cgroup/x");
	ret |= criu_local_set_lsm_profile(o, "apparmor:x");
	ret |= criu_local_set_lsm_mount_context(o, "x");
	criu_local_set_timeout(o, 10);
	criu_local_set_auto_ext_mnt(o, true);
	criu_local_set_ext_sharing(o, true);
	criu_local_set_ext_masters(o, true);
	ret |= criu_local_set_exec_cmd(o, 1, argv);
	ret |= criu_local_add_ext_mount(o, "/a", "/b");
	ret |= criu_local_add_veth_pair(o, "veth0", "veth1");
	ret |= criu_local_add_cg_root(o, NULL, "/x");
	ret |= criu_local_add_enable_fs(o, "nfs");
	ret |= criu_local_add_skip_mnt(o, "/mnt");
	criu_local_set_ghost_limit(o, 1 << 20);
	ret |= criu_local_add_irmap_path(o, "/");
	ret |= criu_local_add_cg_props(o, "x");
	ret |= criu_local_add_cg_props_file(o, "x");
	ret |= criu_local_add_cg_dump_controller(o, "cpu");
	ret |= criu_local_add_cg_yard(o, "/x");
	ret |= criu_local_add_inherit_fd(o, 0, "pipe:[1]");
	ret |= criu_local_add_external(o, "mnt[]:m");
	ret |= criu_local_set_page_server_address_port(o, "127.0.0.1", 1234);
	ret |= criu_local_set_pre_dump_mode(o, CRIU_PRE_DUMP_READ);
	criu_local_set_pidfd_store_sk(o, -1);
	ret |= criu_local_set_network_lock(o, CRIU_NETWORK_LOCK_NFTABLES);
	ret |= criu_local_join_ns_add(o, "net", "/proc/1/ns/net", NULL);
	criu_local_set_mntns_compat_mode(o, true);
	ret |= criu_local_set_config_file(o, "/etc/criu/runc.conf");
	criu_local_set_empty_ns(o, 0);
	criu_local_set_notify_cb(o, cb);
	return ret;
}

int main(int argc, char **argv)
{
	struct criu_feature_check f = { .mem_track = true };
	criu_opts *o = NULL;
	int version;

	if (criu_local_init_opts(&o) || set_all(o)) {
		printf("setting the options failed\n");
		return 1;
	}
	criu_local_free_opts(o);
	if (!requests[0] || !local_requests[0] || !iters[0] || !local_iters[0] || !features[0] ||
	    !versions[0] || !mores[0])
		return 1;

	if (criu_init_opts())
		return 1;
	if (argc > 1)
		criu_set_service_binary(argv[1]);
	criu_set_log_level(CRIU_LOG_WARN);
	version = criu_get_version();
	printf("criu_lib_version %s, CRIU %d (%s in the header), check_version(30000) %d, "
	       "orphan pts fd %d\n",
	       criu_lib_version, version, CRIU_VERSION, criu_check_version(30000),
	       criu_get_orphan_pts_master_fd());
	if (version < 30000 || criu_check() || criu_feature_check(&f, sizeof(f)))
		return 1;
	printf("check: ok, mem_track %d\n", f.mem_track);
	criu_free_opts();
	return 0;
}
