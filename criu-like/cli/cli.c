// SPDX-License-Identifier: GPL-2.0
/*
 * The command line: a thin front end that turns argv into struct cr_options
 * and calls one engine function. Option names and short forms are CRIU's, so
 * scripts written for CRIU work unchanged. The commands are in commands.c,
 * the options in parse.c; here the usage, the privilege check, the log and
 * the run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_PREFIX "cli: "
#include "cli.h"
#include "cli-compat.h"
#include "cli-config.h"
#include "cli-int.h"
#include "config-int.h"
#include "cr.h"
#include "fault.h"
#include "log.h"
#include "rpc.h"
#include "util.h"

/* "cap_sys_admin cap_net_admin" into @buf, as capsh and getpcaps spell them. */
static const char *caps_str(uint64_t mask, char *buf, size_t size)
{
	size_t len = 0;
	char *name;
	int i;

	buf[0] = '\0';
	for (i = 0; i < 64; i++) {
		if (!(mask & (1ULL << i)))
			continue;
		name = cap_to_name(i);
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
					len ? " " : "", name ? name : "?");
		cap_free(name);
	}
	return buf;
}

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: criu-like COMMAND [OPTIONS]\n\n"
		   "Checkpoint and restore of Linux process trees, from userspace.\n\nCommands:\n");
	for (i = 0; i < cli_n_commands; i++)
		fprintf(f, "  %-12s %s%s\n", cli_commands[i].name, cli_commands[i].summary,
			cli_commands[i].run ? "" : " (not available yet)");
	fprintf(f,
		"\nCommon options:\n"
		"  -D, --images-dir DIR   image directory (default: .)\n"
		"  -W, --work-dir DIR     where logs and other files go (default: -D)\n"
		"  -o, --log-file FILE    log to FILE, relative to the work dir\n"
		"  -v[N], --verbosity     more logging; -v4 is debug (default 2: warnings)\n"
		"  -h, --help             this text; `criu-like COMMAND --help` for one command\n"
		"  -V, --version          print the version\n"
		"  --config FILE          options from FILE, after /etc/criu/default.conf,\n"
		"                         ~/.criu/default.conf (not read with --config or\n"
		"                         --no-default-config) and $CRIU_CONFIG_FILE; one option\n"
		"                         per line without its --; the command line wins\n"
		"  --display-stats        print stats-dump/stats-restore as CRIU does (dump and\n"
		"                         restore write them into the work dir anyway)\n"
		"Every option of CRIU 4.x parses with CRIU's syntax; one whose feature is\n"
		"missing here is refused by name, in the log file too (see criu-like(8)).\n"
		"\nExit status: 0 success, 1 failure, %d when the command needs root\n"
		"(capabilities the caller lacks; nothing was done). restore without -d\n"
		"exits with the restored root's status.\n"
		"\nSee criu-like(8) for every option.\n",
		CLI_EXIT_NOPRIV);
}

static void print_command_help(const struct cli_command *cmd)
{
	int i;

	printf("Usage: criu-like %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
	if (cmd->help && *cmd->help)
		printf("\n%s", cmd->help);
	if (!cmd->run)
		printf("\nThis command is not available in this version yet.\n");
	if (cmd->caps) {
		char names[512];

		printf("\nNeeds root: without %s in the effective set it exits %d at once.\n",
		       caps_str(cmd->caps, names, sizeof(names)), CLI_EXIT_NOPRIV);
	}
	printf("\nOptions it takes:");
	for (i = 0; i < OPT__MAX; i++) {
		if (!(cmd->options & (1ULL << i)) && !(OPTS_COMMON & (1ULL << i)))
			continue;
		printf(" --%s", cli_opt_name(i));
		if (cli_opt_missing(i) && !(cmd->provides & (1ULL << i)))
			printf("(n/a)");
	}
	printf("\n");
}

uint64_t cli_effective_caps(void)
{
	cap_t caps = cap_get_proc();
	cap_flag_value_t v;
	uint64_t have = 0;
	int i;

	if (!caps)
		return 0;
	for (i = 0; i < 64 && CAP_IS_SUPPORTED(i); i++)
		if (!cap_get_flag(caps, i, CAP_EFFECTIVE, &v) && v == CAP_SET)
			have |= 1ULL << i;
	cap_free(caps);
	return have;
}

/* One message naming the command and what it lacks; CLI_EXIT_NOPRIV. */
static int check_privileges(const struct cli_command *cmd, const struct cr_options *o)
{
	uint64_t missing = cli_missing_caps(cmd, o, cli_effective_caps());
	char names[512];

	if (!missing)
		return 0;
	if (geteuid())
		pr_err("'%s' needs root: uid %u lacks %s; nothing was done\n", cmd->name,
		       (unsigned int)geteuid(), caps_str(missing, names, sizeof(names)));
	else
		pr_err("'%s' needs root's capabilities: this process lacks %s; nothing was done\n",
		       cmd->name, caps_str(missing, names, sizeof(names)));
	return CLI_EXIT_NOPRIV;
}

/*
 * With -v4 and no -o, dump and restore log into the work (image) directory
 * as dump.log / restore.log, so a failure inside a task can be read later.
 */
static int setup_logging(const struct cr_options *o, const struct cli_command *cmd)
{
	_cleanup_free_ char *path = NULL, *deflt = NULL;
	const char *dir = o->work_dir ? o->work_dir : o->images_dir;
	const char *file = o->log_file;
	int ret;

	log_set_level(o->log_level);
	if (!file && o->log_level >= LOG_DEBUG &&
	    (!strcmp(cmd->name, "dump") || !strcmp(cmd->name, "restore"))) {
		if (asprintf(&deflt, "%s.log", cmd->name) < 0)
			return -ENOMEM;
		file = deflt;
	}
	if (!file)
		return 0;
	if (file[0] != '/' && strcmp(file, "-") && dir) {
		/* dump creates the directory anyway; the log is its first file. */
		if (!strcmp(cmd->name, "dump") && mkdir(dir, 0700) && errno != EEXIST) {
			pr_perror("cannot create directory %s", dir);
			return neg_errno();
		}
		if (asprintf(&path, "%s/%s", dir, file) < 0)
			return -ENOMEM;
	}
	ret = log_set_file(path ? path : file);
	if (ret)
		pr_errno(ret, "cannot open log file %s", path ? path : file);
	return ret;
}

/* --close FD, as CRIU: closed before the command runs (never the log's fd). */
static void close_fds(const struct cr_options *o)
{
	int i, fd;

	for (i = 0; i < o->n_close_fds; i++) {
		fd = atoi(o->close_fds[i]);
		if (fd == log_get_fd())
			continue;
		pr_info("closing fd %d\n", fd);
		close(fd);
	}
}

int cli_main(int argc, char **argv)
{
	const struct cli_command *cmd;
	struct cr_options o;
	uint64_t seen;
	int first, ret;

	cr_options_init(&o);
	/* CRIU's configuration files first: the command line wins over them */
	ret = cli_config_load(&o, argc, argv);
	if (!ret)
		ret = cli_parse(argc, argv, &o, &cmd, &first, &seen);
	if (ret) {
		cr_options_fini(&o);
		return 1;
	}

	if (seen & OPTB(VERSION)) {
		/*
		 * CRIU's first line, with the CRIU version the RPC answers: LXC
		 * reads "Version: X.Y" from `criu --version` and wants 2.0 or more.
		 */
		printf("Version: %d.%d.%d\ncriu-like version %s\n", RPC_CRIU_MAJOR, RPC_CRIU_MINOR,
		       RPC_CRIU_SUBLEVEL, CRIU_LIKE_VERSION);
		ret = 0;
	} else if (!cmd) {
		print_usage((seen & OPTB(HELP)) ? stdout : stderr);
		ret = (seen & OPTB(HELP)) ? 0 : 1;
	} else if (seen & OPTB(HELP)) {
		print_command_help(cmd);
		ret = 0;
	} else if ((ret = check_privileges(cmd, &o))) {
		/*
		 * First, before anything is created: no log file either, as
		 * nothing was done (test/integration/nonroot.sh checks that).
		 */
	} else if (setup_logging(&o, cmd)) {
		ret = 1;
	} else if (!cmd->run) {
		/* from here on, every refusal lands in --log-file too */
		pr_err("command '%s' is not available in this version yet\n", cmd->name);
		ret = 1;
	} else if ((!strcmp(cmd->name, "cpuinfo") && (compat_set(&o, CO_CPU_CAP, false), 0)) ||
		   cli_config_validate(&o, seen) || cli_validate(cmd, seen, argc - first) ||
		   cli_validate_compat(&o)) {
		ret = 1;
	} else {
		close_fds(&o);
		fault_init(); /* before any fork: one count for the whole run */
		ret = cmd->run(&o, argc - first, argv + first);
		if (ret < 0) {
			pr_debug("%s failed: %s\n", cmd->name, strerror(-ret));
			ret = 1;
		}
	}
	cr_options_fini(&o);
	log_close();
	return ret;
}
