/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CLI_H
#define CRIU_LIKE_CLI_H

#include <stdint.h>

#include "options.h"

/* One bit per option, so each command says which ones it takes. */
enum cli_opt {
	OPT_TREE,
	OPT_IMAGES_DIR,
	OPT_WORK_DIR,
	OPT_LOG_FILE,
	OPT_VERBOSE,
	OPT_PIDFILE,
	OPT_LEAVE_RUNNING,
	OPT_LEAVE_STOPPED,
	OPT_RESTORE_DETACHED,
	OPT_SHELL_JOB,
	OPT_EXT_UNIX_SK,
	OPT_TCP_ESTABLISHED,
	OPT_FILE_LOCKS,
	OPT_TIMEOUT,
	OPT_TRACK_MEM,
	OPT_PREV_IMAGES_DIR,
	OPT_PAGE_SERVER,
	OPT_ADDRESS,
	OPT_PORT,
	OPT_LAZY_PAGES,
	OPT_ROOT,
	OPT_EXTERNAL,
	OPT_INHERIT_FD,
	OPT_ACTION_SCRIPT,
	OPT_NETWORK_LOCK,
	OPT_FREEZE_CGROUP,
	OPT_MANAGE_CGROUPS,
	OPT_ALL,
	OPT_JSON,
	OPT_OUTPUT,
	OPT_PAGES,
	OPT_CYCLES,
	OPT_HELP,
	OPT_VERSION,
	OPT__MAX,
};

#define OPTB(x) (1ULL << (OPT_##x))
/* Options every command accepts. */
#define OPTS_COMMON (OPTB(LOG_FILE) | OPTB(VERBOSE) | OPTB(WORK_DIR) | OPTB(HELP) | OPTB(VERSION))

struct cli_command {
	const char *name;
	const char *summary;
	const char *usage; /* arguments after the command name */
	const char *help; /* paragraphs printed by `COMMAND --help` */
	uint64_t options; /* OPTB() bits this command takes */
	int min_args, max_args; /* positional arguments */
	/* NULL: the command is planned but does not exist yet; it is refused. */
	int (*run)(struct cr_options *o, int argc, char **argv);
};

/* Parse argv, run the command, return the process exit status. */
int cli_main(int argc, char **argv);

/*
 * Parse argv into @o without running anything. *ret_cmd is NULL when no
 * command was given; *ret_optind indexes the first positional argument and
 * *ret_seen has one OPTB() bit per option given. Returns 0 or -EINVAL.
 */
int cli_parse(int argc, char **argv, struct cr_options *o, const struct cli_command **ret_cmd,
	      int *ret_optind, uint64_t *ret_seen);

/* Refuse options @cmd does not take, options whose feature is missing, and a
 * wrong number of positional arguments. Returns 0, -EINVAL or -EOPNOTSUPP. */
int cli_validate(const struct cli_command *cmd, uint64_t seen, int nargs);

#endif
