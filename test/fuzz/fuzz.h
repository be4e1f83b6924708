/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_FUZZ_H
#define CRIU_LIKE_FUZZ_H

/*
 * What the libFuzzer harnesses share: each input is written into one memfd,
 * which the code under test opens by name (/proc/self/fd/N) as it would open
 * a file of an image directory. Logging is off: the readers log one error per
 * bad input, and printing them would slow the run down a hundredfold.
 */
#include <stddef.h>
#include <stdint.h>

/* Create the memfd (once); returns its path, "/proc/self/fd/N". */
const char *fuzz_file_init(void);
/* Replace the memfd's contents with @data. Aborts on failure: not a finding. */
void fuzz_file_set(const uint8_t *data, size_t size);
/* A scratch directory on tmpfs, created once, for files the code writes. */
const char *fuzz_scratch_dir(void);

#endif
