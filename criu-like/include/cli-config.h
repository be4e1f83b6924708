/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CLI_CONFIG_H
#define CRIU_LIKE_CLI_CONFIG_H

/*
 * CRIU's configuration files (cli/config.c, Documentation/config.md): one
 * option per line without its leading "--" ("tcp-established",
 * "log-file /x", "verbosity 4"), "#" comments and blank lines, words quoted
 * with "..." (\" inside for a quote). Each line is parsed as the command line
 * is, with the same option table, into the same struct cr_options; a value
 * read from a file stays valid until cr_options_fini().
 */
#include <stdint.h>

#include "options.h"

#define CLI_GLOBAL_CONFIG "/etc/criu/default.conf"
#define CLI_USER_CONFIG ".criu/default.conf" /* under $HOME */
#define CLI_CONFIG_ENV "CRIU_CONFIG_FILE"

/*
 * Apply the configuration file @path on top of what @o holds (a later file,
 * or the caller's own settings applied after, win over it). For the RPC's
 * config_file (runc sends /etc/criu/runc.conf): a missing file is no error,
 * as in CRIU. Every option is checked at once, and one that criu-like refuses
 * (unknown, a bad value, or a feature this version lacks) is refused by name
 * with the file and line number: 0, -EINVAL (unknown, bad value, stray word),
 * -EOPNOTSUPP (missing feature) or -errno (unreadable file).
 */
int cli_apply_config_file(struct cr_options *o, const char *path);

/*
 * The command line's files, in CRIU's order, before argv is parsed:
 * /etc/criu/default.conf, then $HOME/.criu/default.conf (neither with
 * --no-default-config or --config), then $CRIU_CONFIG_FILE, then
 * --config FILE. Nothing with -h/--help in @argv. Errors in a file
 * (unknown option, bad value) are refused with the file and line: -EINVAL;
 * options whose feature is missing are refused later by
 * cli_config_validate(), once the log file is open.
 */
int cli_config_load(struct cr_options *o, int argc, char **argv);
/* The same with another global file (@global NULL: none), for the tests. */
int cli_config_load_from(struct cr_options *o, int argc, char **argv, const char *global);

/*
 * Refuse, with its file and line, an option that a configuration file gave
 * (and the command line did not override) whose feature is missing: 0 or
 * -EOPNOTSUPP. @seen: the OPTB() bits cli_parse() returned.
 */
int cli_config_validate(const struct cr_options *o, uint64_t seen);

struct cli_config;
void cli_config_free(struct cli_config *c);

#endif
