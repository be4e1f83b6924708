// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU's command-line options that criu-like has no OPT_ bit for: each parsed
 * with CRIU's syntax, then given CRIU's meaning, or refused by name once the
 * log file is open (cli_validate_compat()). cli.c parses the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_PREFIX "cli: "
#include "cgroup.h"
#include "cli.h"
#include "cli-compat.h"
#include "log.h"
#include "util.h"

struct compat_opt {
	const char *name;
	int has_arg;
	bool neg;
	const char *missing;
};

#define CO(id_, name_, arg_, neg_, missing_) \
	[CO_##id_] = { .name = name_, .has_arg = arg_, .neg = neg_, .missing = missing_ }

static const struct compat_opt compat_opts[CO__MAX] = {
	CO(NO_DEFAULT_CONFIG, "no-default-config", no_argument, false, NULL),
	CO(PRE_DUMP_MODE, "pre-dump-mode", required_argument, false, NULL),
	CO(GHOST_LIMIT, "ghost-limit", required_argument, false, NULL),
	CO(STATUS_FD, "status-fd", required_argument, false, NULL),
	CO(FEATURE, "feature", required_argument, false, NULL),
	CO(EXTRA, "extra", no_argument, true, NULL),
	CO(EXPERIMENTAL, "experimental", no_argument, true, NULL),
	CO(DEPRECATED, "deprecated", no_argument, true, NULL),
	CO(CLOSE, "close", required_argument, false, NULL),
	CO(DAEMON, "daemon", no_argument, true, NULL),
	CO(CPU_CAP, "cpu-cap", optional_argument, false,
	   "CPU compatibility checks at dump and restore (only --cpu-cap=none is; "
	   "`cpuinfo check` compares CPUs)"),
	CO(EXT_UNIX_SK_INODE, NULL, 0, false, "naming external unix sockets by inode"),
	CO(CONFIG, "config", required_argument, false, NULL),
	CO(RESTORE_SIBLING, "restore-sibling", no_argument, true, NULL),
	CO(LOG_PID, "log-pid", no_argument, true, "a log file per task"),
	CO(EVASIVE_DEVICES, "evasive-devices", no_argument, true, "evasive devices"),
	CO(VETH_PAIR, "veth-pair", required_argument, false, NULL),
	CO(LINK_REMAP, "link-remap", no_argument, true, NULL),
	CO(AUTO_DEDUP, "auto-dedup", no_argument, true, NULL),
	CO(LIBDIR, "libdir", required_argument, false, "plugins"),
	CO(FORCE_IRMAP, "force-irmap", no_argument, true, NULL),
	CO(EXT_MOUNT_MAP, "ext-mount-map", required_argument, false, NULL),
	CO(EXEC_CMD, "exec-cmd", no_argument, false, "running a command after the restore"),
	CO(CGROUP_ROOT, "cgroup-root", required_argument, false, NULL),
	CO(SKIP_MNT, "skip-mnt", required_argument, false, "mount namespaces"),
	CO(ENABLE_FS, "enable-fs", required_argument, false, NULL),
	CO(ENABLE_EXTERNAL_SHARING, "enable-external-sharing", no_argument, false, NULL),
	CO(ENABLE_EXTERNAL_MASTERS, "enable-external-masters", no_argument, false, NULL),
	CO(IRMAP_SCAN_PATH, "irmap-scan-path", required_argument, false,
	   "the inotify path map (irmap)"),
	CO(LSM_PROFILE, "lsm-profile", required_argument, false, NULL),
	CO(EMPTY_NS, "empty-ns", required_argument, false, NULL),
	CO(CGROUP_PROPS, "cgroup-props", required_argument, false, NULL),
	CO(CGROUP_PROPS_FILE, "cgroup-props-file", required_argument, false, NULL),
	CO(CGROUP_DUMP_CONTROLLER, "cgroup-dump-controller", required_argument, false, NULL),
	CO(SKIP_IN_FLIGHT, "skip-in-flight", no_argument, true, NULL),
	CO(DISPLAY_STATS, "display-stats", no_argument, true, NULL),
	CO(WEAK_SYSCTLS, "weak-sysctls", no_argument, true, "sysctls"),
	CO(TCP_CLOSE, "tcp-close", no_argument, true, NULL),
	CO(PS_SOCKET, "ps-socket", required_argument, false, "the page server"),
	CO(STREAM, "stream", no_argument, true, "streaming images"),
	CO(TLS_CACERT, "tls-cacert", required_argument, false, NULL),
	CO(TLS_CACRL, "tls-cacrl", required_argument, false, NULL),
	CO(TLS_CERT, "tls-cert", required_argument, false, NULL),
	CO(TLS_KEY, "tls-key", required_argument, false, NULL),
	CO(TLS, "tls", no_argument, true, NULL),
	CO(TLS_NO_CN_VERIFY, "tls-no-cn-verify", no_argument, false, NULL),
	CO(CGROUP_YARD, "cgroup-yard", required_argument, false, NULL),
	CO(FILE_VALIDATION, "file-validation", required_argument, false, "file validation methods"),
	CO(SKIP_FILE_RWX_CHECK, "skip-file-rwx-check", no_argument, true,
	   "skipping the file permission check"),
	CO(LSM_MOUNT_CONTEXT, "lsm-mount-context", required_argument, false, "LSM mount contexts"),
	CO(MNTNS_COMPAT_MODE, "mntns-compat-mode", no_argument, true, "mount namespaces"),
	CO(UNPRIVILEGED, "unprivileged", no_argument, true, "running without root"),
	CO(GHOST_FIEMAP, "ghost-fiemap", no_argument, true, NULL),
	CO(JOIN_NS, "join-ns", required_argument, false,
	   "joining namespaces other than net at restore"),
	CO(MS, "ms", no_argument, false, "--ms (deprecated in CRIU too)"),
	CO(ALLOW_UPROBES, "allow-uprobes", no_argument, true, NULL),
};

size_t compat_long_opts(struct option *out)
{
	static char no_names[CO__MAX][40];
	size_t n = 0, i;

	for (i = 0; i < CO__MAX; i++) {
		if (!compat_opts[i].name)
			continue;
		out[n++] = (struct option){ compat_opts[i].name, compat_opts[i].has_arg, NULL,
					    CODE_COMPAT + (int)i };
		if (!compat_opts[i].neg)
			continue;
		snprintf(no_names[i], sizeof(no_names[i]), "no-%s", compat_opts[i].name);
		out[n++] = (struct option){ no_names[i], no_argument, NULL,
					    CODE_NO_COMPAT + (int)i };
	}
	return n;
}

/*
 * CRIU's sizes: a number, then K, M or G multiplies (CRIU reads its first such
 * capital anywhere and ignores the rest). Here the suffix is also taken in
 * lower case (CRIU would read "1k" as 1 byte), and B or iB may follow it.
 */
int cli_parse_size(const char *arg, unsigned long long *ret)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || arg[0] == '-' || arg[0] == '+' || arg[0] == ' ')
		return -EINVAL;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	default:
		break;
	}
	if (shift) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B") || !strcmp(end, "b"))
			end += strlen(end);
	}
	if (*end)
		return -EINVAL;
	if (shift && v > (~0ULL >> shift))
		return -ERANGE;
	*ret = v << shift;
	return 0;
}

/* --cpu-cap's list: fpu, cpu, ins, all, none, each optionally after ^, by commas. */
static int parse_cpu_cap(const char *arg, bool *none, unsigned int *bits)
{
	static const char *const caps[] = { "fpu", "cpu", "ins", "all", "none" };
	static const unsigned int cap_bits[] = { 1, 2, 4, 7, 0 };
	size_t i, len;
	bool only_none = true, neg = false;
	unsigned int v = 0;

	while (*arg) {
		if (*arg == '^' || *arg == ',') {
			neg = *arg == '^';
			arg++;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(caps); i++) {
			len = strlen(caps[i]);
			if (!strncmp(arg, caps[i], len))
				break;
		}
		if (i == ARRAY_SIZE(caps))
			return -EINVAL;
		if (strcmp(caps[i], "none"))
			only_none = false;
		if (!strcmp(caps[i], "none"))
			v = 0;
		else if (neg)
			v &= ~cap_bits[i];
		else
			v |= cap_bits[i];
		neg = false;
		arg += len;
	}
	*none = only_none;
	*bits = v;
	return 0;
}

static bool compat_refused(const struct cr_options *o, int id)
{
	return o->compat_refused[id / 64] & (1ULL << (id % 64));
}

void compat_set(struct cr_options *o, int id, bool on)
{
	if (on)
		o->compat_refused[id / 64] |= 1ULL << (id % 64);
	else
		o->compat_refused[id / 64] &= ~(1ULL << (id % 64));
}

/*
 * -M/--ext-mount-map KEY:VAL, CRIU's older spelling of --external mnt[KEY]:VAL
 * (dump: the mount point and its name; restore: the name and the path); a pair
 * with no VAL gives no path (LXC's "console:" without a console): a mount of
 * the image of that name is then "not given". "auto": external mounts found
 * by themselves, which criu-like does not do: each is refused, naming it.
 */
static int store_ext_mount_map(struct cr_options *o, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char *ext;
	int err;

	if (!strcmp(arg, "auto")) {
		o->ext_mnt_auto = true;
		return 0;
	}
	if (!colon || colon == arg) {
		pr_err("-M/--ext-mount-map: '%s' is not KEY:VAL or auto\n", arg);
		return -EINVAL;
	}
	if (!colon[1])
		return 0;
	if (asprintf(&ext, "mnt[%.*s]:%s", (int)(colon - arg), arg, colon + 1) < 0)
		return -ENOMEM;
	err = cli_append_str(&o->owned, &o->n_owned, ext);
	if (err) {
		free(ext);
		return err;
	}
	return cli_append_str(&o->external, &o->n_external, ext);
}

/* A CRIU option of compat_opts[]: check its syntax as CRIU does, store it. */
int compat_store(struct cr_options *o, int id, const char *arg)
{
	unsigned long long ull;
	bool none;
	long l;

	switch (id) {
	case CO_NO_DEFAULT_CONFIG:
		o->no_default_config = true; /* cli_config_load() saw it before the parse */
		return 0;
	case CO_DISPLAY_STATS:
		o->display_stats = true;
		return 0;
	case CO_SKIP_IN_FLIGHT:
		o->skip_in_flight = true; /* dump: connections not accepted yet are left out */
		return 0;
	case CO_TCP_CLOSE:
		o->tcp_close = true; /* restore: TCP connections come back closed */
		return 0;
	case CO_AUTO_DEDUP:
		o->auto_dedup = true; /* dump and pre-dump; refused elsewhere (cli.c) */
		return 0;
	case CO_CONFIG:
		return 0; /* read before the command line, by cli_config_load() */
	case CO_PRE_DUMP_MODE:
		if (strcmp(arg, "splice") && strcmp(arg, "read")) {
			pr_err("--pre-dump-mode: '%s' is not splice or read\n", arg);
			return -EINVAL;
		}
		o->pre_dump_mode = arg;
		return 0;
	case CO_GHOST_LIMIT:
		if (cli_parse_size(arg, &ull)) {
			pr_err("--ghost-limit: '%s' is not a size (N, NK, NM or NG)\n", arg);
			return -EINVAL;
		}
		o->ghost_limit = ull;
		return 0;
	case CO_STATUS_FD:
		if (parse_long(arg, &l) || l < 0 || l > 0x7fffffff) {
			pr_err("--status-fd: '%s' is not a file descriptor\n", arg);
			return -EINVAL;
		}
		o->status_fd = (int)l;
		return 0;
	case CO_FEATURE:
		o->check_feature = arg;
		return 0;
	case CO_TLS:
		o->tls = true;
		return 0;
	case CO_TLS_NO_CN_VERIFY:
		o->tls_no_cn_verify = true;
		return 0;
	case CO_TLS_CACERT:
		o->tls_cacert = arg;
		return 0;
	case CO_TLS_CACRL:
		o->tls_cacrl = arg;
		return 0;
	case CO_TLS_CERT:
		o->tls_cert = arg;
		return 0;
	case CO_TLS_KEY:
		o->tls_key = arg;
		return 0;
	case CO_EXTRA:
		o->check_extra = true;
		return 0;
	case CO_EXPERIMENTAL:
		o->check_experimental = true;
		return 0;
	case CO_DEPRECATED:
		return 0; /* criu-like has no deprecated behaviour to turn on */
	case CO_CLOSE:
		if (parse_long(arg, &l) || l < 0 || l > 0x7fffffff) {
			pr_err("--close: '%s' is not a file descriptor\n", arg);
			return -EINVAL;
		}
		return cli_append_str(&o->close_fds, &o->n_close_fds, arg);
	case CO_CPU_CAP:
		if (arg && parse_cpu_cap(arg, &none, &o->cpu_cap)) {
			pr_err("--cpu-cap: unknown mode '%s'\n", arg);
			return -EINVAL;
		}
		if (!arg)
			o->cpu_cap = 7; /* CRIU: all */
		/* only `cpuinfo check` compares CPUs (cli.c): elsewhere that is "none" */
		compat_set(o, id, !arg || !none);
		return 0;
	case CO_VETH_PAIR:
		if (!strchr(arg, '=')) {
			pr_err("--veth-pair: '%s' is not IN=OUT\n", arg);
			return -EINVAL;
		}
		return cli_append_str(&o->veth_pairs, &o->n_veth_pairs, arg);
	case CO_EXT_MOUNT_MAP:
		return store_ext_mount_map(o, arg);
	case CO_RESTORE_SIBLING:
		o->restore_sibling = true; /* restore -d only (cli.c) */
		return 0;
	case CO_ALLOW_UPROBES:
		o->allow_uprobes = true; /* dump: the [uprobes] area is left out */
		return 0;
	case CO_GHOST_FIEMAP:
		/* unlinked files are always saved by their data extents (SEEK_DATA/SEEK_HOLE) */
		return 0;
	case CO_LINK_REMAP:
		o->link_remap =
			true; /* dump: a hidden link for an opened name gone (files/reg.c) */
		return 0;
	case CO_FORCE_IRMAP:
		/* watches are always named at dump, by their handle (files/inotify.c) */
		return 0;
	case CO_ENABLE_EXTERNAL_SHARING:
	case CO_ENABLE_EXTERNAL_MASTERS:
		/* they widen --ext-mount-map auto, which detects none here */
		return 0;
	case CO_ENABLE_FS:
		if (!*arg || strchr(arg, ' ')) {
			pr_err("--enable-fs: '%s' is not FS[,FS...] or all\n", arg);
			return -EINVAL;
		}
		return cli_append_str(&o->enable_fs, &o->n_enable_fs, arg);
	case CO_LSM_PROFILE:
		if (!strchr(arg, ':')) {
			pr_err("--lsm-profile: '%s' is not TYPE:NAME\n", arg);
			return -EINVAL;
		}
		o->lsm_profile = arg;
		return 0;
	case CO_JOIN_NS:
		if (!strchr(arg, ':')) {
			pr_err("-J/--join-ns: '%s' is not NS:PID|FILE[,OPTS]\n", arg);
			return -EINVAL;
		}
		/* the network namespace only: the others are made from their images */
		if (!strncmp(arg, "net:", 4)) {
			o->join_ns_net = arg + 4;
			return 0;
		}
		break;
	case CO_CGROUP_ROOT: {
		_cleanup_free_ char *ctrl = NULL;
		const char *path;

		if (cg_root_parse(arg, &ctrl, &path)) {
			pr_err("--cgroup-root: '%s' is not [CONTROLLER:]/PATH\n", arg);
			return -EINVAL;
		}
		return cli_append_str(&o->cgroup_roots, &o->n_cgroup_roots, arg);
	}
	case CO_CGROUP_PROPS: {
		struct cg_spec spec = { 0 };
		/* checked now, parsed again by the dump */
		int err = cg_spec_parse(&spec, arg, "--cgroup-props");

		cg_spec_fini(&spec);
		if (err)
			return err;
		o->cgroup_props = arg;
		return 0;
	}
	case CO_CGROUP_PROPS_FILE:
		o->cgroup_props_file = arg;
		return 0;
	case CO_CGROUP_DUMP_CONTROLLER:
		return cli_append_str(&o->cgroup_dump_ctrls, &o->n_cgroup_dump_ctrls, arg);
	case CO_CGROUP_YARD:
		if (arg[0] != '/') {
			pr_err("--cgroup-yard: '%s' is not an absolute path\n", arg);
			return -EINVAL;
		}
		o->cgroup_yard = arg;
		return 0;
	case CO_EMPTY_NS:
		if (strcmp(arg, "net")) {
			pr_err("--empty-ns: unsupported namespace '%s' (only net)\n", arg);
			return -EINVAL;
		}
		o->empty_ns_net = true;
		return 0;
	case CO_FILE_VALIDATION:
		if (strcmp(arg, "filesize") && strcmp(arg, "buildid")) {
			pr_err("--file-validation: '%s' is not filesize or buildid\n", arg);
			return -EINVAL;
		}
		break;
	case CO_PS_SOCKET:
		if (parse_long(arg, &l) || l < 0) {
			pr_err("--ps-socket: '%s' is not a file descriptor\n", arg);
			return -EINVAL;
		}
		break;
	}
	compat_set(o, id, true);
	return 0;
}

/* The first CRIU option given whose feature is missing, refused by name. */
int cli_validate_compat(const struct cr_options *o)
{
	int i;

	for (i = 0; i < CO__MAX; i++) {
		if (!compat_refused(o, i))
			continue;
		pr_err("option --%s: %s is not supported by this version yet\n",
		       compat_opts[i].name ? compat_opts[i].name : "ext-unix-sk=INODE",
		       compat_opts[i].missing);
		return -EOPNOTSUPP;
	}
	return 0;
}

const char *compat_name(int id)
{
	if (id < 0 || id >= CO__MAX)
		return NULL;
	return compat_opts[id].name ? compat_opts[id].name : "ext-unix-sk=INODE";
}

const char *compat_missing(const struct cr_options *o, int id)
{
	if (id < 0 || id >= CO__MAX || !compat_refused(o, id))
		return NULL;
	return compat_opts[id].missing;
}

int cli_append_str(const char ***arr, int *n, const char *s)
{
	const char **na = realloc(*arr, sizeof(**arr) * (*n + 2));

	if (!na)
		return -ENOMEM;
	na[(*n)++] = s;
	na[*n] = NULL;
	*arr = na;
	return 0;
}
