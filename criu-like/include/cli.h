/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CLI_H
#define CRIU_LIKE_CLI_H

#include <stdint.h>
#include <linux/capability.h>

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
	OPT_NO_PACKET_HOLD,
	OPT_FREEZE_CGROUP,
	OPT_MANAGE_CGROUPS,
	OPT_SNAPSHOT,
	OPT_NO_COW_SHARE,
	OPT_ALL,
	OPT_JSON,
	OPT_OUTPUT,
	OPT_PAGES,
	OPT_CYCLES,
	OPT_ONLINE,
	OPT_TO,
	OPT_ROUNDS,
	OPT_LISTEN,
	OPT_HELP,
	OPT_VERSION,
	OPT__MAX,
};

#define OPTB(x) (1ULL << (OPT_##x))
/* Options every command accepts. */
#define OPTS_COMMON (OPTB(LOG_FILE) | OPTB(VERBOSE) | OPTB(WORK_DIR) | OPTB(HELP) | OPTB(VERSION))

/* One bit per capability (CAP_SYS_ADMIN...), all below 64. */
#define CAPB(x) (1ULL << (CAP_##x))

/*
 * Exit status of a command refused because the caller lacks a capability
 * it needs (one message names them; nothing was done). 1 is any other failure.
 */
#define CLI_EXIT_NOPRIV 3

struct cli_command {
	const char *name;
	const char *summary;
	const char *usage; /* arguments after the command name */
	const char *help; /* paragraphs printed by `COMMAND --help` */
	uint64_t options; /* OPTB() bits this command takes */
	int min_args, max_args; /* positional arguments */
	/* NULL: the command is planned but does not exist yet; it is refused. */
	int (*run)(struct cr_options *o, int argc, char **argv);
	/*
	 * CAPB() bits of the capabilities the command needs in its effective
	 * set; checked before it does anything (cli_missing_caps()).
	 */
	uint64_t caps;
	/* OPTB() bits of options refused elsewhere (opt_missing[]) that this command provides */
	uint64_t provides;
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

/*
 * Refuse, by name, CRIU options given whose feature criu-like lacks (those
 * without an OPT_ bit). 0 or -EOPNOTSUPP. Called once the log file is open.
 */
int cli_validate_compat(const struct cr_options *o);
/* A size as CRIU writes them: N, NK, NM, NG (k, m, g too, B or iB after); -EINVAL, -ERANGE. */
int cli_parse_size(const char *arg, unsigned long long *ret);

/*
 * The CAPB() bits @cmd needs with options @o that are missing from @have
 * (a mask of effective capabilities). 0 when it may run.
 */
uint64_t cli_missing_caps(const struct cli_command *cmd, const struct cr_options *o, uint64_t have);

/* The effective capabilities of this process as CAPB() bits (libcap). */
uint64_t cli_effective_caps(void);

#endif
