/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_OPTIONS_H
#define CRIU_LIKE_OPTIONS_H

#include <stdbool.h>
#include <sys/types.h>

struct cr_notifier; /* notify.h */
struct vmas_ahead; /* vmas-ahead.h */
struct inet_scan; /* inet-scan.h */

/*
 * One options struct for every front end: the CLI fills it from argv, the
 * daemon (later) from an RPC request. Engine entry points take it const and
 * build their own context from it.
 */
struct cr_options {
	pid_t tree; /* -t: root of the tree to dump */
	const char *images_dir; /* -D, default "." */
	const char *work_dir; /* -W, default: images dir */
	const char *log_file; /* -o, relative to the work dir like CRIU */
	int log_level; /* -v/-vN */
	const char *pidfile; /* --pidfile */
	bool leave_running; /* -R */
	bool no_sync; /* images read once and removed (a migration's): never flushed to disk */
	bool leave_stopped; /* -s */
	bool restore_detached; /* -d */
	bool shell_job; /* -j */
	bool orphan_pts_master; /* RPC: a new pty for a terminal whose master was outside (chr.c) */
	bool ext_unix_sk; /* -x */
	bool tcp_established; /* --tcp-established */
	bool file_locks; /* -l */
	unsigned int timeout; /* --timeout, seconds; 0 = default */
	bool timeout_set; /* --timeout given (lazy-pages has a default of its own) */
	bool track_mem; /* --track-mem */
	bool snapshot; /* dump --snapshot (with -R): pages copied after the tree runs again */
	bool no_cow_share; /* dump --no-cow-share: save pages a child shares with its parent */
	bool auto_dedup; /* --auto-dedup: dump, pre-dump (mem/dedup.c) */
	const char *prev_images_dir; /* --prev-images-dir */
	bool page_server; /* --page-server */
	const char *address; /* --address */
	int port; /* --port */
	bool lazy_pages; /* --lazy-pages */
	bool online; /* migrate --online: pre-copy while the tree runs (migrate.h) */
	const char *migrate_to; /* migrate --to ADDRESS[:PORT] */
	unsigned int rounds; /* migrate --rounds: at most this many pre-copy rounds */
	const char *listen; /* service --listen ADDRESS[:PORT]: accept migrations */
	int ps_listen_fd; /* page server: a socket already listening, -1 = --address/--port */
	int ps_sock_fd; /* RPC ps.fd: a connection to (dump) or from (page server) it, or -1 */
	const char *root; /* -r */
	const char **external; /* --external, NULL-terminated */
	int n_external;
	bool ext_mnt_optional; /* RPC ext_mnt: a mnt[] naming no mount is skipped, as CRIU */
	const char **veth_pairs; /* --veth-pair IN=OUT[@BRIDGE], NULL-terminated */
	int n_veth_pairs;
	bool restore_sibling; /* -S, RPC rst_sibling: the root a child of criu-like's parent */
	bool ext_mnt_auto; /* --ext-mount-map auto: no external mount is detected (refused) */
	const char **enable_fs; /* --enable-fs FS[,FS]: made again at restore, NULL-terminated */
	int n_enable_fs;
	const char *lsm_profile; /* --lsm-profile, --external apparmor:P: TYPE:NAME (lsm.c) */
	const char **owned; /* strings made from the arguments (--ext-mount-map), freed at fini */
	int n_owned;
	bool empty_ns_net; /* --empty-ns net: a new network namespace with lo only */
	const char *join_ns_net; /* --join-ns net:PID|PATH: restore into that network namespace */
	const char **inherit_fd; /* --inherit-fd, NULL-terminated */
	int n_inherit_fd;
	const char *action_script; /* --action-script: run at every hook point (notify.h) */
	const struct cr_notifier *notifier; /* the RPC client's hook points (rpc/notify.c) */
	/* the tree's smaps read before the freeze (a migration's rounds: mem/vmas-ahead.c) */
	struct vmas_ahead *vmas_ahead;
	/* the fds of the processes outside the tree, read before the freeze (inet-scan.h) */
	struct inet_scan *inet_scan_ahead;
	const char *network_lock; /* --network-lock nftables|iptables|skip */
	bool no_packet_hold; /* --no-packet-hold: the lock drops instead of holding (nfq-hold.h) */
	const char *freeze_cgroup; /* --freeze-cgroup */
	const char *manage_cgroups; /* --manage-cgroups[=MODE]; NULL: soft (cgroup.h) */
	const char **cgroup_roots; /* --cgroup-root [CONTROLLER:]/PATH, NULL-terminated */
	int n_cgroup_roots;
	const char *cgroup_yard; /* --cgroup-yard DIR: the hierarchies mounted there */
	const char *cgroup_props; /* --cgroup-props SPEC (dump, cgroup.h) */
	const char *cgroup_props_file; /* --cgroup-props-file FILE */
	const char **cgroup_dump_ctrls; /* --cgroup-dump-controller NAME, NULL-terminated */
	int n_cgroup_dump_ctrls;
	bool check_all; /* check --all */
	bool json; /* check --json */
	const char *output; /* decode/encode: -O/--output file */
	bool decode_pages; /* decode --pages: dump page contents too */
	unsigned int cycles; /* infect-test --cycles */
	/* CRIU's options that need no engine support here (cli.c) */
	bool no_default_config; /* --no-default-config: only CRIU_CONFIG_FILE and --config read */
	const char *pre_dump_mode; /* --pre-dump-mode splice|read (pre-dump only) */
	bool link_remap; /* --link-remap: unlinked names of linked inodes linked back */
	bool allow_uprobes; /* --allow-uprobes: dump without the [uprobes] area */
	unsigned long long ghost_limit; /* --ghost-limit: largest unlinked file, 0 = any */
	bool tcp_close; /* --tcp-close: restore TCP connections closed (CRIU's) */
	bool skip_in_flight; /* --skip-in-flight: leave out connections not accepted yet */
	unsigned int cpu_cap; /* --cpu-cap (cpuinfo check): CPU_CAP_* bits (cpuinfo.h) */
	int status_fd; /* --status-fd (page-server, lazy-pages), -1 = none */
	bool tls; /* --tls: the page server connection (net/tls.c) */
	bool tls_no_cn_verify; /* --tls-no-cn-verify */
	const char *tls_cacert, *tls_cacrl, *tls_cert, *tls_key; /* NULL: CRIU's default paths */
	const char *check_feature; /* check --feature NAME */
	bool check_extra; /* check --extra (and --all) */
	bool check_experimental; /* check --experimental (and --all) */
	bool display_stats; /* --display-stats: print stats-dump/stats-restore (stats.c) */
	const char **close_fds; /* --close FD: closed before the command runs */
	int n_close_fds;
	/* CRIU options given whose feature criu-like lacks: one bit each (cli.c) */
	unsigned long long compat_refused[2];
	/* cli/config.c: the words of the configuration files read, where each option came from */
	struct cli_config *config;
};

#define CR_DEFAULT_TIMEOUT 10 /* seconds, like CRIU's --timeout default */
/* CRIU's default --ghost-limit: an unlinked file over 1 MiB (not a memfd) fails the dump */
#define CR_DEFAULT_GHOST_LIMIT (1ULL << 20)

void cr_options_init(struct cr_options *o);
void cr_options_fini(struct cr_options *o);

#endif
