// SPDX-License-Identifier: GPL-2.0
/*
 * A client of libcriu-like, for test/integration/libcriu.sh: built against
 * the static library (libcriu-test) and through pkg-config against the
 * shared one (libcriu-test-so).
 *
 *   libcriu-test SERVICE version|check|feature
 *   libcriu-test SERVICE dump DIR PID [PARENT]	the global options (criu_set_*()),
 *				on top of the pre-dump in PARENT (track_mem)
 *   libcriu-test SERVICE pre-dump DIR PID
 *   libcriu-test SERVICE dump-iters DIR PID	criu_dump_iters(): a pre-dump in
 *				DIR/1, then the dump in DIR/2 on top of it
 *   libcriu-test SERVICE restore DIR
 *   libcriu-test SERVICE local-dump DIR PID	an options object (criu_local_*())
 *   libcriu-test SERVICE local-restore DIR
 *   libcriu-test SERVICE restore-child DIR	(criu-like refuses rst_sibling)
 *   libcriu-test SERVICE dump-cap DIR PID	criu_set_cpu_cap(): refused by criu-like
 *
 * SERVICE: "swrk" (criu-like from PATH), "swrk:BINARY", or "unix:SOCKET"
 * (criu-like service). Each request prints "NAME ret=R errno=E msg=M", each
 * notification "notify ACTION PID"; the exit status is 0 when ret >= 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "criu.h"

static int on_notify(char *action, criu_notify_arg_t na)
{
	printf("notify %s %d\n", action, criu_notify_pid(na));
	fflush(stdout);
	return 0;
}

static int open_dir(const char *dir)
{
	int fd = open(dir, O_DIRECTORY | O_RDONLY);

	if (fd < 0) {
		perror(dir);
		exit(2);
	}
	return fd;
}

static char *iter_dir;

/* criu_dump_iters(): after the pre-dump in DIR/1, the dump goes to DIR/2 */
static int more(criu_predump_info pi)
{
	char path[4096];

	(void)pi;
	printf("more\n");
	snprintf(path, sizeof(path), "%s/2", iter_dir);
	criu_set_images_dir_fd(open_dir(path));
	criu_set_parent_images("../1");
	return 0;
}

static int set_service(criu_opts *opts, const char *s)
{
	if (!strcmp(s, "swrk"))
		return 0; /* the default: criu-like swrk, from PATH */
	if (!strncmp(s, "swrk:", 5))
		return criu_local_set_service_binary(opts, s + 5);
	if (!strncmp(s, "unix:", 5))
		return criu_local_set_service_address(opts, s + 5);
	fprintf(stderr, "unknown service %s\n", s);
	return -EINVAL;
}

static int report(const char *name, int ret, const char *msg)
{
	int err = errno;

	printf("%s ret=%d errno=%d msg=%s\n", name, ret, ret < 0 ? err : 0, msg);
	return ret < 0 ? 1 : 0;
}

/* The global options: what most programs written for libcriu use. */
static int global(const char *service, const char *cmd, char **argv)
{
	struct criu_feature_check f = { .mem_track = true, .lazy_pages = true };
	int ret;

	if (criu_init_opts())
		return 2;
	if (!strncmp(service, "swrk:", 5) && criu_set_service_binary(service + 5))
		return 2;
	if (!strncmp(service, "unix:", 5) && criu_set_service_address(service + 5))
		return 2;
	if (!strcmp(cmd, "version")) {
		ret = criu_get_version();
		printf("version %d at-least-31100 %d\n", ret, criu_check_version(31100));
		return report(cmd, ret, criu_like_get_errmsg());
	}
	if (!strcmp(cmd, "check"))
		return report(cmd, criu_check(), criu_like_get_errmsg());
	if (!strcmp(cmd, "feature")) {
		ret = criu_feature_check(&f, sizeof(f));
		printf("features mem_track=%d lazy_pages=%d pidfd_store=%d\n", f.mem_track,
		       f.lazy_pages, f.pidfd_store);
		return report(cmd, ret, criu_like_get_errmsg());
	}
	criu_set_images_dir_fd(open_dir(argv[0]));
	criu_set_log_level(CRIU_LOG_DEBUG);
	criu_set_notify_cb(on_notify);
	if (strstr(cmd, "dump")) {
		criu_set_pid(atoi(argv[1]));
		criu_set_log_file("lib-dump.log");
		criu_set_leave_running(false);
		criu_set_ghost_limit(1 << 20);
	}
	if (!strcmp(cmd, "dump") || !strcmp(cmd, "dump-cap")) {
		if (!strcmp(cmd, "dump-cap"))
			criu_set_cpu_cap(
				1); /* CRIU's CPU_CAP_FPU: criu-like has no cpuinfo checks */
		if (argv[2]) {
			criu_set_track_mem(true);
			if (criu_set_parent_images(argv[2]))
				return 2;
		}
		return report(cmd, criu_dump(), criu_like_get_errmsg());
	}
	if (!strcmp(cmd, "pre-dump")) {
		criu_set_track_mem(true);
		return report(cmd, criu_pre_dump(), criu_like_get_errmsg());
	}
	if (!strcmp(cmd, "dump-iters")) {
		char path[4096];

		iter_dir = argv[0];
		snprintf(path, sizeof(path), "%s/1", iter_dir);
		criu_set_images_dir_fd(open_dir(path));
		criu_set_track_mem(true);
		return report(cmd, criu_dump_iters(more), criu_like_get_errmsg());
	}
	criu_set_log_file("lib-restore.log");
	if (!strcmp(cmd, "restore"))
		return report(cmd, criu_restore(), criu_like_get_errmsg());
	if (!strcmp(cmd, "restore-child"))
		return report(cmd, criu_restore_child(), criu_like_get_errmsg());
	fprintf(stderr, "unknown command %s\n", cmd);
	return 2;
}

/* An options object of one's own, and a work directory apart. */
static int local(const char *service, const char *cmd, char **argv)
{
	criu_opts *opts = NULL;
	int ret;

	if (criu_local_init_opts(&opts) || set_service(opts, service))
		return 2;
	criu_local_set_images_dir_fd(opts, open_dir(argv[0]));
	criu_local_set_work_dir_fd(opts, open_dir(argv[0]));
	criu_local_set_log_level(opts, CRIU_LOG_INFO);
	criu_local_set_notify_cb(opts, on_notify);
	if (!strcmp(cmd, "local-dump")) {
		criu_local_set_pid(opts, atoi(argv[1]));
		criu_local_set_log_file(opts, "lib-dump.log");
		ret = criu_local_dump(opts);
	} else {
		criu_local_set_log_file(opts, "lib-restore.log");
		ret = criu_local_restore(opts);
	}
	ret = report(cmd, ret, criu_like_local_get_errmsg(opts));
	criu_local_free_opts(opts);
	return ret;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: %s SERVICE COMMAND [DIR [PID]]\n", argv[0]);
		return 2;
	}
	/* DIR, and PID for a dump */
	if (strcmp(argv[2], "version") && strcmp(argv[2], "check") && strcmp(argv[2], "feature") &&
	    argc < (strstr(argv[2], "dump") ? 5 : 4))
		return 2;
	if (!strncmp(argv[2], "local-", 6))
		return local(argv[1], argv[2], argv + 3);
	return global(argv[1], argv[2], argv + 3);
}
