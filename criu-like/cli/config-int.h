/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CLI_CONFIG_INT_H
#define CRIU_LIKE_CLI_CONFIG_INT_H

/* Between cli.c (the option table, getopt) and config.c (the files). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

/*
 * getopt over @argv (argv[0] skipped) into @o with the command line's table;
 * *@seen gets OPTB() bits set (and cleared by --no-X). Every option stored is
 * noted with @file and @line (@file NULL: the command line). Returns the index
 * of the first word that is not an option (getopt permutes them to the end),
 * or -EINVAL after logging what is wrong.
 */
int cli_parse_words(int argc, char **argv, struct cr_options *o, uint64_t *seen, const char *file,
		    unsigned int line);
/* The feature option @opt (enum cli_opt) lacks, or NULL; its long name. */
const char *cli_opt_missing(int opt);
const char *cli_opt_name(int opt);

/*
 * config.c: note that @file:@line (NULL: the command line) set, or with @neg
 * cleared, OPT_ @opt (-1: none) and compat option @compat (-1: none). The
 * command line is noted only once some file was read. 0 or -ENOMEM.
 */
int cfg_note(struct cr_options *o, const char *file, unsigned int line, int opt, int compat,
	     bool neg);
/* The OPTB() bits the files left set (0 without files). */
uint64_t cfg_seen(const struct cr_options *o);
/* @seen without the bits only files gave that are not in @takes. */
uint64_t cfg_filter_seen(const struct cr_options *o, uint64_t seen, uint64_t takes);

/*
 * Split one line of a configuration file into words as CRIU does; the first
 * word gets "--" in front. *@ret_words (each word and the array malloc'ed)
 * is NULL with *@ret_n 0 for a blank or comment line. 0 or -ENOMEM.
 */
int cfg_split_line(const char *line, char ***ret_words, size_t *ret_n);

#endif
