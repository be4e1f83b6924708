/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_LOG_H
#define CRIU_LIKE_LOG_H

#include <errno.h>
#include <stdarg.h>

/*
 * Log levels follow CRIU's -vN: 0 nothing but errors that end the command,
 * 1 errors, 2 warnings (default), 3 info, 4 debug.
 */
enum log_level {
	LOG_MSG = 0, /* always printed; command results go to stdout, not here */
	LOG_ERROR = 1,
	LOG_WARN = 2,
	LOG_INFO = 3,
	LOG_DEBUG = 4,
};

#define DEFAULT_LOGLEVEL LOG_WARN

/* Each .c file may define LOG_PREFIX before including this header. */
#ifndef LOG_PREFIX
#define LOG_PREFIX ""
#endif

void log_set_level(int level);
int log_get_level(void);
/*
 * Send log lines to @path (appended), or to stderr when @path is NULL; errors are
 * printed on stderr too. Returns 0 or -errno.
 */
int log_set_file(const char *path);
/* Send log lines to an already open fd (dup'ed). Returns 0 or -errno. */
int log_set_fd(int fd);
int log_get_fd(void);
void log_close(void);
/*
 * Where errors are repeated while the log goes elsewhere: stderr, until a
 * restoring task's fd table (whose fd 2 is the restored program's) replaces
 * it. log_move_echo() moves it to a dup at @min or above (0 or -errno);
 * log_no_echo() stops the repeating (the log alone has the errors).
 */
int log_move_echo(int min);
void log_no_echo(void);

/*
 * The first error logged since log_error_reset(), without time stamp nor
 * "Error (file:line):" (the cause, where later errors are its consequences);
 * "" when none. The RPC answers it as cr_errmsg.
 */
const char *log_first_error(void);
void log_error_reset(void);

void print_on_level(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vprint_on_level(int level, const char *fmt, va_list ap);

/* All macros preserve errno, so pr_perror() after pr_err() still sees the original error. */
#define pr_msg(fmt, ...) print_on_level(LOG_MSG, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) print_on_level(LOG_INFO, LOG_PREFIX fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) print_on_level(LOG_DEBUG, LOG_PREFIX fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)                                                              \
	print_on_level(LOG_WARN, "Warn  (%s:%d): " LOG_PREFIX fmt, __FILE__, __LINE__, \
		       ##__VA_ARGS__)
#define pr_err(fmt, ...)                                                                \
	print_on_level(LOG_ERROR, "Error (%s:%d): " LOG_PREFIX fmt, __FILE__, __LINE__, \
		       ##__VA_ARGS__)
/* Like pr_err, with ": strerror(errno)" appended. The format must end with no newline. */
#define pr_perror(fmt, ...) pr_err(fmt ": %m\n", ##__VA_ARGS__)
/* For -errno values returned by helpers. */
#define pr_errno(err, fmt, ...)                      \
	do {                                         \
		errno = -(err);                      \
		pr_err(fmt ": %m\n", ##__VA_ARGS__); \
	} while (0)

#endif
