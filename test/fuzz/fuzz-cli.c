// SPDX-License-Identifier: GPL-2.0
/*
 * The command-line parser (criu-like/cli/parse.c): the input is argv, its
 * arguments separated by NUL bytes; parsed into options, validated against
 * the command, privileges computed. Nothing is run.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"
#include "log.h"
#include "options.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *buf, *p, *end;
	const struct cli_command *cmd;
	struct cr_options o;
	int argc = 1, first;
	uint64_t seen;

	log_set_level(-1);
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "criu-like";
	for (p = buf, end = buf + size; p <= end && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	/* "a\0b" is two arguments, "a\0" one: a trailing NUL ends the last one */
	if (argc > 1 && size && data[size - 1] == '\0')
		argc--;
	argv[argc] = NULL;

	cr_options_init(&o);
	if (!cli_parse(argc, argv, &o, &cmd, &first, &seen) && cmd) {
		cli_validate(cmd, seen, argc - first);
		cli_missing_caps(cmd, &o, 0);
	}
	cr_options_fini(&o);
	free(buf);
	return 0;
}
