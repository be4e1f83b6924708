/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CR_H
#define CRIU_LIKE_CR_H

/*
 * The engine: every command is a function over the options, returning 0 or
 * -errno. The CLI (cli.c) and the daemon call these and nothing deeper.
 */
#include "options.h"

#define CRIU_LIKE_VERSION "0.1.0"

/* Probe the kernel. Returns 0 when dump and restore can work, -ENOTSUP otherwise. */
int cr_check(const struct cr_options *o);

/* Print image @path (a file or a directory) as JSON to @o->output or stdout. */
int cr_decode(const struct cr_options *o, const char *path);
/* Read JSON from @in ("-" for stdin) and write the image it describes to @o->output. */
int cr_encode(const struct cr_options *o, const char *in);

/*
 * Check the image directory @path against the inventory's list of images and
 * every page run against its crc32c; each problem logged naming its file.
 * 0 when everything matches, -errno otherwise.
 */
int cr_check_images(const struct cr_options *o, const char *path);

/* Seize the tree at o->tree, infect, query, cure, release; o->cycles times. */
int cr_infect_test(const struct cr_options *o);

#endif
