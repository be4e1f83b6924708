// SPDX-License-Identifier: GPL-2.0
/* The tool's log captured in a memfd: see logcap.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "logcap.h"

static int cap_fd = -1;
static int old_level;

void logcap_start(int level)
{
	cap_fd = memfd_create("log", MFD_CLOEXEC);
	assert_true(cap_fd >= 0);
	assert_int_equal(log_set_fd(cap_fd), 0);
	old_level = log_get_level();
	if (level >= 0)
		log_set_level(level);
}

const char *logcap_stop(void)
{
	static char buf[65536];
	ssize_t n;

	buf[0] = '\0';
	if (cap_fd < 0)
		return buf;
	log_set_fd(STDERR_FILENO);
	log_set_level(old_level);
	n = pread(cap_fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(cap_fd);
	cap_fd = -1;
	return buf;
}

void assert_in_log(const char *log, const char *expect)
{
	if (!strstr(log, expect))
		fail_msg("expected \"%s\" in the log:\n%s", expect, log);
}
