/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CLI_INT_H
#define CRIU_LIKE_CLI_INT_H

/* Between cli.c (usage, privileges, the run), commands.c (the table) and parse.c (options). */
#include <stddef.h>

#include "cli.h"

/* commands.c: every command, in the order the usage lists them. */
extern const struct cli_command cli_commands[];
extern const size_t cli_n_commands;
/* The command called @name, or NULL. */
const struct cli_command *cli_command_find(const char *name);

#endif
