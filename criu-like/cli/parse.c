// SPDX-License-Identifier: GPL-2.0
/*
 * The options of the command line: CRIU's names and short forms, read with
 * getopt_long into struct cr_options (also for the lines of CRIU's
 * configuration files, config.c), then checked against what the command
 * takes (commands.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define LOG_PREFIX "cli: "
#include "cgroup.h"
#include "cli.h"
#include "cli-compat.h"
#include "cli-int.h"
#include "config-int.h"
#include "log.h"
#include "net-lock.h"
#include "restore.h"
#include "util.h"

/* Options whose feature is not there yet: refused, never silently ignored. */
static const char *const opt_missing[OPT__MAX] = {
	[OPT_LEAVE_STOPPED] = "leaving the tree stopped",
	[OPT_PAGE_SERVER] = "the page server",
	[OPT_INHERIT_FD] = "inherited fds",
	[OPT_ADDRESS] = "network endpoints",
	[OPT_PORT] = "network endpoints",
};

static const struct option long_opts[] = {
	{ "tree", required_argument, NULL, 't' },
	{ "images-dir", required_argument, NULL, 'D' },
	{ "work-dir", required_argument, NULL, 'W' },
	{ "log-file", required_argument, NULL, 'o' },
	{ "verbosity", optional_argument, NULL, 'v' },
	{ "pidfile", required_argument, NULL, 1000 + OPT_PIDFILE },
	{ "leave-running", no_argument, NULL, 'R' },
	{ "leave-stopped", no_argument, NULL, 's' },
	{ "restore-detached", no_argument, NULL, 'd' },
	{ "shell-job", no_argument, NULL, 'j' },
	{ "ext-unix-sk", optional_argument, NULL, 'x' },
	{ "tcp-established", no_argument, NULL, 1000 + OPT_TCP_ESTABLISHED },
	{ "file-locks", no_argument, NULL, 'l' },
	{ "timeout", required_argument, NULL, 1000 + OPT_TIMEOUT },
	{ "track-mem", no_argument, NULL, 1000 + OPT_TRACK_MEM },
	{ "snapshot", no_argument, NULL, 1000 + OPT_SNAPSHOT },
	{ "no-cow-share", no_argument, NULL, 1000 + OPT_NO_COW_SHARE },
	{ "prev-images-dir", required_argument, NULL, 1000 + OPT_PREV_IMAGES_DIR },
	{ "page-server", no_argument, NULL, 1000 + OPT_PAGE_SERVER },
	{ "address", required_argument, NULL, 1000 + OPT_ADDRESS },
	{ "port", required_argument, NULL, 1000 + OPT_PORT },
	{ "lazy-pages", no_argument, NULL, 1000 + OPT_LAZY_PAGES },
	{ "root", required_argument, NULL, 'r' },
	{ "external", required_argument, NULL, 1000 + OPT_EXTERNAL },
	{ "inherit-fd", required_argument, NULL, 1000 + OPT_INHERIT_FD },
	{ "action-script", required_argument, NULL, 1000 + OPT_ACTION_SCRIPT },
	{ "network-lock", required_argument, NULL, 1000 + OPT_NETWORK_LOCK },
	{ "no-packet-hold", no_argument, NULL, 1000 + OPT_NO_PACKET_HOLD },
	{ "freeze-cgroup", required_argument, NULL, 1000 + OPT_FREEZE_CGROUP },
	{ "manage-cgroups", optional_argument, NULL, 1000 + OPT_MANAGE_CGROUPS },
	{ "all", no_argument, NULL, 1000 + OPT_ALL },
	{ "json", no_argument, NULL, 1000 + OPT_JSON },
	{ "output", required_argument, NULL, 'O' },
	{ "pages", no_argument, NULL, 1000 + OPT_PAGES },
	{ "cycles", required_argument, NULL, 1000 + OPT_CYCLES },
	{ "online", no_argument, NULL, 1000 + OPT_ONLINE },
	{ "to", required_argument, NULL, 1000 + OPT_TO },
	{ "rounds", required_argument, NULL, 1000 + OPT_ROUNDS },
	{ "listen", required_argument, NULL, 1000 + OPT_LISTEN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

/* CRIU's short options, and -O of decode/encode */
static const char short_opts[] = "t:D:W:o:v::Rsdjx::lr:O:hVSL:M:J:";

/* OPT_ booleans CRIU negates with --no-NAME */
static const struct {
	const char *name;
	int opt;
} no_opts[] = {
	{ "no-restore-detached", OPT_RESTORE_DETACHED },
	{ "no-tcp-established", OPT_TCP_ESTABLISHED },
	{ "no-shell-job", OPT_SHELL_JOB },
	{ "no-file-locks", OPT_FILE_LOCKS },
	{ "no-page-server", OPT_PAGE_SERVER },
	{ "no-track-mem", OPT_TRACK_MEM },
};

/* long_opts, the compat options and every --no- form, for getopt_long */
static struct option all_opts[64 + 2 * CO__MAX];

static const struct option *all_long_opts(void)
{
	size_t n = 0, i;

	if (all_opts[0].name)
		return all_opts;
	for (i = 0; long_opts[i].name; i++)
		all_opts[n++] = long_opts[i];
	for (i = 0; i < ARRAY_SIZE(no_opts); i++)
		all_opts[n++] = (struct option){ no_opts[i].name, no_argument, NULL,
						 CODE_NO_OPT + no_opts[i].opt };
	compat_long_opts(all_opts + n);
	return all_opts;
}

static const char *opt_name(int opt)
{
	const struct option *lo;
	int code;

	for (lo = long_opts; lo->name; lo++) {
		code = lo->val >= 1000 ? lo->val - 1000 : -1;
		if (code == opt)
			return lo->name;
	}
	switch (opt) {
	case OPT_TREE:
		return "tree";
	case OPT_IMAGES_DIR:
		return "images-dir";
	case OPT_WORK_DIR:
		return "work-dir";
	case OPT_LOG_FILE:
		return "log-file";
	case OPT_VERBOSE:
		return "verbosity";
	case OPT_LEAVE_RUNNING:
		return "leave-running";
	case OPT_LEAVE_STOPPED:
		return "leave-stopped";
	case OPT_RESTORE_DETACHED:
		return "restore-detached";
	case OPT_SHELL_JOB:
		return "shell-job";
	case OPT_EXT_UNIX_SK:
		return "ext-unix-sk";
	case OPT_FILE_LOCKS:
		return "file-locks";
	case OPT_ROOT:
		return "root";
	case OPT_OUTPUT:
		return "output";
	case OPT_HELP:
		return "help";
	case OPT_VERSION:
		return "version";
	}
	return "?";
}

/*
 * As CRIU's getopt reads -v: bare, one more; "-vvv" (optarg "vv"), one per v;
 * anything else is atoi()'d, so -verbosity=0 (optarg "erbosity=0") is level 0.
 */
static int parse_verbosity(const char *arg, int level)
{
	if (!arg)
		return level + 1;
	if (arg[0] == 'v')
		return level + 1 + (int)strlen(arg);
	level = atoi(arg);
	return level < 0 ? 0 : level;
}

/* Store one parsed option. Returns its enum cli_opt, or -EINVAL. */
static int store_opt(struct cr_options *o, int c, const char *arg)
{
	unsigned long ul;
	long l;
	int err;

	switch (c) {
	case 't':
		if (parse_long(arg, &l) || l <= 0 || l > 0x3fffffff) {
			pr_err("-t/--tree: '%s' is not a pid\n", arg);
			return -EINVAL;
		}
		o->tree = (pid_t)l;
		return OPT_TREE;
	case 'D':
		o->images_dir = arg;
		return OPT_IMAGES_DIR;
	case 'W':
		o->work_dir = arg;
		return OPT_WORK_DIR;
	case 'o':
		o->log_file = arg;
		return OPT_LOG_FILE;
	case 'v':
		o->log_level = parse_verbosity(arg, o->log_level);
		return OPT_VERBOSE;
	case 'R':
		o->leave_running = true;
		return OPT_LEAVE_RUNNING;
	case 's':
		o->leave_stopped = true;
		return OPT_LEAVE_STOPPED;
	case 'd':
		o->restore_detached = true;
		return OPT_RESTORE_DETACHED;
	case 'j':
		o->shell_job = true;
		return OPT_SHELL_JOB;
	case 'x':
		o->ext_unix_sk = true;
		if (arg)
			compat_set(o, CO_EXT_UNIX_SK_INODE, true);
		return OPT_EXT_UNIX_SK;
	case 'l':
		o->file_locks = true;
		return OPT_FILE_LOCKS;
	case 'r':
		o->root = arg;
		return OPT_ROOT;
	case 'O':
		o->output = arg;
		return OPT_OUTPUT;
	case 'h':
		return OPT_HELP;
	case 'V':
		return OPT_VERSION;
	}

	switch (c - 1000) {
	case OPT_PIDFILE:
		o->pidfile = arg;
		break;
	case OPT_TCP_ESTABLISHED:
		o->tcp_established = true;
		break;
	case OPT_TIMEOUT:
		if (parse_ulong(arg, &ul) || ul == 0 || ul > 86400) {
			pr_err("--timeout: '%s' is not a number of seconds\n", arg);
			return -EINVAL;
		}
		o->timeout = (unsigned int)ul;
		o->timeout_set = true;
		break;
	case OPT_TRACK_MEM:
		o->track_mem = true;
		break;
	case OPT_SNAPSHOT:
		o->snapshot = true;
		break;
	case OPT_NO_COW_SHARE:
		o->no_cow_share = true;
		break;
	case OPT_PREV_IMAGES_DIR:
		o->prev_images_dir = arg;
		break;
	case OPT_PAGE_SERVER:
		o->page_server = true;
		break;
	case OPT_ADDRESS:
		o->address = arg;
		break;
	case OPT_PORT:
		if (parse_ulong(arg, &ul) || ul > 65535) {
			pr_err("--port: '%s' is not a port\n", arg);
			return -EINVAL;
		}
		o->port = (int)ul;
		break;
	case OPT_LAZY_PAGES:
		o->lazy_pages = true;
		break;
	case OPT_EXTERNAL:
		if (cli_append_str(&o->external, &o->n_external, arg))
			return -ENOMEM;
		break;
	case OPT_INHERIT_FD:
		err = inherit_fd_parse(arg, NULL, NULL);
		if (err) {
			pr_err("--inherit-fd: '%s' %s\n", arg,
			       err == -EINVAL ? "is not fd[N]:KEY"
					      : "is not a pipe (fd[N]:pipe:[INO]) nor an external "
						"namespace (fd[N]:NAME): other keys cannot be "
						"inherited by this version yet");
			return err;
		}
		if (cli_append_str(&o->inherit_fd, &o->n_inherit_fd, arg))
			return -ENOMEM;
		break;
	case OPT_ACTION_SCRIPT:
		o->action_script = arg;
		break;
	case OPT_NETWORK_LOCK: {
		enum netlock_kind kind;

		if (netlock_parse_kind(arg, &kind)) {
			pr_err("--network-lock: '%s' is not nftables, iptables or skip\n", arg);
			return -EINVAL;
		}
		o->network_lock = arg;
		break;
	}
	case OPT_NO_PACKET_HOLD:
		o->no_packet_hold = true;
		break;
	case OPT_FREEZE_CGROUP:
		o->freeze_cgroup = arg;
		break;
	case OPT_MANAGE_CGROUPS: {
		enum cg_mode m;

		/* CRIU's bare --manage-cgroups is soft, its default */
		o->manage_cgroups = arg ? arg : "soft";
		if (cg_mode_parse(o->manage_cgroups, &m)) {
			pr_err("--manage-cgroups: unknown mode '%s' (none, props, soft, full, "
			       "strict or ignore)\n",
			       arg);
			return -EINVAL;
		}
		break;
	}
	case OPT_ALL: /* CRIU: --extra and --experimental */
		o->check_all = true;
		o->check_extra = true;
		o->check_experimental = true;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_PAGES:
		o->decode_pages = true;
		break;
	case OPT_CYCLES:
		if (parse_ulong(arg, &ul) || ul == 0 || ul > 10000000) {
			pr_err("--cycles: '%s' is not a positive count\n", arg);
			return -EINVAL;
		}
		o->cycles = (unsigned int)ul;
		break;
	case OPT_ONLINE:
		o->online = true;
		break;
	case OPT_TO:
		o->migrate_to = arg;
		break;
	case OPT_ROUNDS:
		if (parse_ulong(arg, &ul) || ul > 1000) {
			pr_err("--rounds: '%s' is not a number of rounds (0 to 1000)\n", arg);
			return -EINVAL;
		}
		o->rounds = (unsigned int)ul;
		break;
	case OPT_LISTEN:
		o->listen = arg;
		break;
	default:
		return -EINVAL;
	}
	return c - 1000;
}

/* An --no-X of an OPT_ boolean: clear it. */
static void store_no_opt(struct cr_options *o, int opt)
{
	if (opt == OPT_RESTORE_DETACHED)
		o->restore_detached = false;
	else if (opt == OPT_TCP_ESTABLISHED)
		o->tcp_established = false;
	else if (opt == OPT_SHELL_JOB)
		o->shell_job = false;
	else if (opt == OPT_FILE_LOCKS)
		o->file_locks = false;
	else if (opt == OPT_PAGE_SERVER)
		o->page_server = false;
	else if (opt == OPT_TRACK_MEM)
		o->track_mem = false;
}

int cli_parse_words(int argc, char **argv, struct cr_options *o, uint64_t *seen, const char *file,
		    unsigned int line)
{
	int c, opt, err;

	optind = 0; /* full re-initialisation, so unit tests can parse many times */
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, all_long_opts(), NULL)) != -1) {
		if (c == '?') {
			if (optopt)
				pr_err("unknown or incomplete option '-%c'\n", optopt);
			else
				pr_err("unknown option '%s'\n", argv[optind - 1]);
			return -EINVAL;
		}
		if (c == ':') {
			pr_err("option '%s' needs an argument\n", argv[optind - 1]);
			return -EINVAL;
		}
		if (c == 'S' || c == 'L' || c == 'M' || c == 'J')
			c = CODE_COMPAT + (c == 'S'   ? CO_RESTORE_SIBLING
					   : c == 'L' ? CO_LIBDIR
					   : c == 'M' ? CO_EXT_MOUNT_MAP
						      : CO_JOIN_NS);
		if (c == CODE_COMPAT + CO_DAEMON)
			c = 'd';
		if (c >= CODE_NO_OPT) {
			opt = c - CODE_NO_OPT;
			*seen &= ~(1ULL << opt);
			store_no_opt(o, opt);
			err = cfg_note(o, file, line, opt, -1, true);
		} else if (c >= CODE_NO_COMPAT) {
			/* --no-X of a feature criu-like lacks asks for what it does */
			opt = c - CODE_NO_COMPAT;
			compat_set(o, opt, false);
			if (opt == CO_EXTRA)
				o->check_extra = false;
			else if (opt == CO_EXPERIMENTAL)
				o->check_experimental = false;
			else if (opt == CO_DISPLAY_STATS)
				o->display_stats = false;
			else if (opt == CO_AUTO_DEDUP)
				o->auto_dedup = false;
			else if (opt == CO_TLS)
				o->tls = false;
			else if (opt == CO_ALLOW_UPROBES)
				o->allow_uprobes = false;
			else if (opt == CO_LINK_REMAP)
				o->link_remap = false;
			else if (opt == CO_DAEMON) {
				o->restore_detached = false;
				*seen &= ~OPTB(RESTORE_DETACHED);
			}
			err = cfg_note(o, file, line, -1, opt, true);
		} else if (c >= CODE_COMPAT) {
			err = compat_store(o, c - CODE_COMPAT, optarg);
			if (!err)
				err = cfg_note(o, file, line, -1, c - CODE_COMPAT, false);
		} else {
			opt = store_opt(o, c, optarg);
			if (opt < 0)
				return opt;
			*seen |= 1ULL << opt;
			/* -x INODE also sets a compat bit: its origin is this option's */
			err = cfg_note(o, file, line, opt, c == 'x' ? CO_EXT_UNIX_SK_INODE : -1,
				       false);
		}
		if (err)
			return err;
	}
	return optind;
}

int cli_parse(int argc, char **argv, struct cr_options *o, const struct cli_command **ret_cmd,
	      int *ret_optind, uint64_t *ret_seen)
{
	const struct cli_command *cmd = NULL;
	uint64_t seen = cfg_seen(o); /* what the configuration files gave, if any */
	int first;

	first = cli_parse_words(argc, argv, o, &seen, NULL, 0);
	if (first < 0)
		return first;
	if (first < argc) {
		cmd = cli_command_find(argv[first]);
		if (!cmd) {
			pr_err("unknown command '%s' (try --help)\n", argv[first]);
			return -EINVAL;
		}
		first++;
	}
	*ret_cmd = cmd;
	*ret_optind = first;
	/* an option of a configuration file that this command does not take is not for it */
	*ret_seen = cfg_filter_seen(o, seen, cmd ? cmd->options | OPTS_COMMON : ~0ULL);
	return 0;
}

const char *cli_opt_missing(int opt)
{
	return opt >= 0 && opt < OPT__MAX ? opt_missing[opt] : NULL;
}

const char *cli_opt_name(int opt)
{
	return opt_name(opt);
}

/* Refuse options the command does not take or whose feature is missing. */
int cli_validate(const struct cli_command *cmd, uint64_t seen, int nargs)
{
	int i;

	for (i = 0; i < OPT__MAX; i++) {
		if (!(seen & (1ULL << i)))
			continue;
		if (i == OPT_LAZY_PAGES && !strcmp(cmd->name, "pre-dump")) {
			/* CRIU's lazy source is a dump's frozen tree (mem/lazy-dump.c) */
			pr_err("option --lazy-pages: a pre-dump lets the tree run again, so its "
			       "pages cannot be served from it later; pre-dump, then `dump "
			       "--lazy-pages --prev-images-dir` (Documentation/lazy-pages.md)\n");
			return -EINVAL;
		}
		if (!(cmd->options & (1ULL << i)) && !(OPTS_COMMON & (1ULL << i))) {
			pr_err("option --%s does not apply to '%s'\n", opt_name(i), cmd->name);
			return -EINVAL;
		}
		if (opt_missing[i] && !(cmd->provides & (1ULL << i))) {
			pr_err("option --%s: %s is not supported by this version yet\n",
			       opt_name(i), opt_missing[i]);
			return -EOPNOTSUPP;
		}
	}
	if (nargs < cmd->min_args || nargs > cmd->max_args) {
		pr_err("'%s' takes %s (got %d argument%s); see criu-like %s --help\n", cmd->name,
		       cmd->usage, nargs, nargs == 1 ? "" : "s", cmd->name);
		return -EINVAL;
	}
	return 0;
}
