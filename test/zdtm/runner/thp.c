// SPDX-License-Identifier: GPL-2.0
/*
 * --thp MODE: the machine's transparent huge page mode (always, madvise,
 * never) for the run, the one it had put back at the end, also after
 * SIGINT/SIGTERM/SIGHUP (not after SIGKILL: then write it back by hand). A
 * few restore paths only meet a huge page under "always" (zdtm thp_restore
 * in the mode lazy: Documentation/lazy-pages.md, "Transparent huge pages");
 * the mode is the whole machine's, so other tests running meanwhile see it.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

static int thp_write(const char *mode)
{
	int fd = open(THP_ENABLED, O_WRONLY | O_CLOEXEC), err = 0;
	size_t len = strlen(mode);

	if (fd < 0)
		return neg_errno();
	if (write(fd, mode, len) != (ssize_t)len)
		err = neg_errno();
	close(fd);
	return err;
}

int thp_set(const char *mode, char *saved, size_t size)
{
	char buf[128], *l, *r;
	int fd = open(THP_ENABLED, O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0) {
		err = neg_errno();
		pr_perror("--thp: cannot open %s", THP_ENABLED);
		return err;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? neg_errno() : 0;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	/* "always [madvise] never": the current one is in brackets */
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (err || !r || (size_t)(r - l - 1) >= size) {
		pr_err("--thp: cannot tell the current mode from %s ('%s')\n", THP_ENABLED, buf);
		return err ?: -EINVAL;
	}
	snprintf(saved, size, "%.*s", (int)(r - l - 1), l + 1);
	err = thp_write(mode);
	if (err)
		pr_err("--thp: cannot write '%s' to %s: %s\n", mode, THP_ENABLED, strerror(-err));
	return err;
}

void thp_put_back(const char *saved)
{
	int err;

	if (!saved[0])
		return;
	err = thp_write(saved);
	if (err)
		pr_err("--thp: cannot put '%s' back in %s: %s: do it by hand\n", saved, THP_ENABLED,
		       strerror(-err));
	else
		printf("zdtm-run: transparent huge pages back to \"%s\"\n", saved);
}
