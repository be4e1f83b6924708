/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_RESTORE_TASK_INT_H
#define CRIU_LIKE_RESTORE_TASK_INT_H

/*
 * Between restore-task.c (the restorer area, VMAs, fds, the jump) and
 * restore-task-state.c (threads, signals, timers, creds, mm fields of the
 * restorer's arguments). Everything runs in the restored task.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "restore-mem.h"

#define MAX_FDS 512 /* fds handed to the blob: files of mappings, shmem, pages, exe, log */

struct finish {
	struct restore_ctx *ctx;
	struct rst_task *t;
	struct rst_mem_plan *p;
	CoreEntry *core;
	pid_t pid;
	struct rst_special specials[RST_MAX_SPECIALS];
	unsigned int nr_specials;
	struct rst_range *busy; /* current mappings, saved VMAs, the shared area */
	size_t nr_busy;
	int fds[MAX_FDS]; /* kept for the blob, which closes them */
	unsigned int nr_fds;
	struct { /* rst_file_open() results, one per file id and mode */
		uint32_t id;
		int flags, fd;
	} files[MAX_FDS];
	unsigned int nr_files;
	int pages_fd, exe_fd, log_fd;
	struct rst_layout lay;
	uint64_t seccomp_off, seccomp_size; /* the seccomp filters, from struct rst_args */
	char *area;
	struct rst_args *a;
};

/* A kept fd for file @id opened with @flags (one per id and mode), closed by the blob. */
int task_file_fd(struct finish *f, uint32_t id, int flags, int *ret);
int task_keep_fd(struct finish *f, int fd);

/* restore-task-state.c: fill f->a from the core and creds images. */
int task_plan_thread(struct finish *f, uint32_t i, uint64_t xfeatures);
int task_plan_process(struct finish *f);
int task_plan_creds(struct finish *f);
int task_plan_mm(struct finish *f);
/*
 * restore-seccomp.c: check the seccomp state of the core image and size the
 * filters; then lay them out at f->seccomp_off and fill every thread's
 * seccomp fields (after task_plan_thread()).
 */
int task_seccomp_size(struct finish *f, uint64_t *ret);
int task_plan_seccomp(struct finish *f);
/* Process attributes set before the jump: subreaper, oom_score_adj, loginuid. */
int task_restore_misc(struct finish *f);

#endif
