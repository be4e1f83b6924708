// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* The only globals of the tool: where log lines go and how many of them. */
static int log_level = DEFAULT_LOGLEVEL;
static int log_fd = STDERR_FILENO;
static struct timespec log_start;
static char first_error[512]; /* log_first_error() */
static pthread_mutex_t first_error_lock = PTHREAD_MUTEX_INITIALIZER;
static int echo_fd = STDERR_FILENO; /* log_move_echo(), log_no_echo() */

const char *log_first_error(void)
{
	return first_error;
}

void log_error_reset(void)
{
	first_error[0] = '\0';
}

/* "Error (file:line): text\n" of pr_err() into first_error as "text". */
static void keep_first_error(const char *line)
{
	const char *p = strncmp(line, "Error (", 7) ? NULL : strstr(line, "): ");
	size_t n;

	line = p ? p + 3 : line;
	n = strcspn(line, "\n");
	if (n >= sizeof(first_error))
		n = sizeof(first_error) - 1;
	memcpy(first_error, line, n);
	first_error[n] = '\0';
}

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

int log_get_fd(void)
{
	return log_fd;
}

int log_set_fd(int fd)
{
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (nfd < 0)
		return -errno;
	log_close();
	log_fd = nfd;
	return 0;
}

int log_set_file(const char *path)
{
	int fd;

	if (!path || !strcmp(path, "-")) {
		log_close();
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	log_close();
	log_fd = fd;
	return 0;
}

int log_move_echo(int min)
{
	int nfd;

	if (echo_fd < 0 || echo_fd >= min)
		return 0;
	nfd = fcntl(echo_fd, F_DUPFD_CLOEXEC, min);
	if (nfd < 0)
		return -errno;
	if (echo_fd != STDERR_FILENO)
		close(echo_fd);
	echo_fd = nfd;
	return 0;
}

void log_no_echo(void)
{
	if (echo_fd > STDERR_FILENO)
		close(echo_fd);
	echo_fd = -1;
}

void log_close(void)
{
	if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = STDERR_FILENO;
}

void vprint_on_level(int level, const char *fmt, va_list ap)
{
	int saved_errno = errno;
	struct timespec ts;
	char buf[4096];
	int n = 0, m;
	bool quiet = level > log_level; /* formatted only to be kept as the first error */

	if (quiet && (level != LOG_ERROR || first_error[0]))
		return;

	/* Every line carries the time since the first line, as CRIU's logs do. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!log_start.tv_sec && !log_start.tv_nsec)
		log_start = ts;
	ts.tv_sec -= log_start.tv_sec;
	ts.tv_nsec -= log_start.tv_nsec;
	if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += 1000000000L;
	}
	/* One write() per line, so lines from parallel tasks do not interleave. */
	n = snprintf(buf, sizeof(buf), "(%02ld.%06ld) ", (long)ts.tv_sec, ts.tv_nsec / 1000);
	errno = saved_errno; /* for %m */
	m = vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n >= (int)sizeof(buf)) {
		n = sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	if (level == LOG_ERROR) {
		/* the workers of a parallel dump log side by side (dump/dump-par.c) */
		pthread_mutex_lock(&first_error_lock);
		if (!first_error[0])
			keep_first_error(buf + strcspn(buf, " ") + 1);
		pthread_mutex_unlock(&first_error_lock);
	}
	if (quiet)
		return;
	if (write(log_fd, buf, n) < 0) {
		/* Nowhere left to report it. */
	}
	/* With the log in a file, errors still reach the user (without the time stamp). */
	if (level <= LOG_ERROR && log_fd != STDERR_FILENO && echo_fd >= 0) {
		char *msg = memchr(buf, ' ', n);

		if (msg && write(echo_fd, msg + 1, n - (msg + 1 - buf)) < 0) {
			/* Nowhere left to report it. */
		}
	}
	errno = saved_errno;
}

void print_on_level(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_on_level(level, fmt, ap);
	va_end(ap);
}
