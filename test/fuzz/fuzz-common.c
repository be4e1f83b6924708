// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "log.h"

static int fuzz_fd = -1;
static char fuzz_path[64];

const char *fuzz_file_init(void)
{
	if (fuzz_fd >= 0)
		return fuzz_path;
	log_set_level(-1);
	fuzz_fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (fuzz_fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(fuzz_path, sizeof(fuzz_path), "/proc/self/fd/%d", fuzz_fd);
	return fuzz_path;
}

void fuzz_file_set(const uint8_t *data, size_t size)
{
	fuzz_file_init();
	if (ftruncate(fuzz_fd, 0) || (size && pwrite(fuzz_fd, data, size, 0) != (ssize_t)size)) {
		perror("fuzz input");
		abort();
	}
}

/* Under $FUZZ_SCRATCH when set (run.sh's scratch directory, removed after the run). */
const char *fuzz_scratch_dir(void)
{
	static char dir[512];
	static int made;

	if (!made) {
		const char *base = getenv("FUZZ_SCRATCH");

		snprintf(dir, sizeof(dir), "%s/criu-like-fuzz.XXXXXX",
			 base && *base ? base : "/dev/shm");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
		made = 1;
	}
	return dir;
}
