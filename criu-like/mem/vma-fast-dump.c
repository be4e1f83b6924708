// SPDX-License-Identifier: GPL-2.0
/*
 * smaps' page table walk out of the freeze for a tree with much memory
 * (include/vma-fast.h, Documentation/memory.md "The VMAs without smaps'
 * walk"). Indexing the kernel's BTF, loading the iterator and checking the
 * flags' table cost 2-4 ms here, more than the walk of a small tree costs:
 * only a tree whose root and first children hold VMA_FAST_MIN of anonymous
 * memory takes that way,
 * and the setup runs in a thread beside the pages image's room (made at the
 * same time, before the seize), so the freeze waits for neither.
 */
#define LOG_PREFIX "mem: "

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "log.h"
#include "mem-int.h"
#include "options.h"
#include "smaps-reader.h"
#include "util.h"
#include "vma-fast.h"

#define VMA_FAST_MIN (64UL << 20)
/* the children of the root looked at for it, at most */
#define VMA_FAST_KIDS 64

struct vma_fast_setup {
	pthread_t th;
	struct vma_bpf *bpf;
	int err;
	bool joined;
};

/* CRIU_LIKE_TEST_VMA_FAST_MIN (zdtm's leave-running modes: 0): bytes instead. */
static uint64_t vma_fast_min(void)
{
	const char *e = getenv("CRIU_LIKE_TEST_VMA_FAST_MIN");

	return e ? strtoull(e, NULL, 10) : VMA_FAST_MIN;
}

/* The root's RssAnon and its children's, until @min is reached. */
static bool tree_big(pid_t root, uint64_t min)
{
	_cleanup_free_ char *kids = NULL;
	uint64_t sum = mem_rss_anon(root);
	char path[64], *p, *end;
	unsigned int n = 0;

	if (sum >= min)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", root, root);
	kids = read_file_at(AT_FDCWD, path, NULL);
	for (p = kids; p && *p && n < VMA_FAST_KIDS && sum < min; p = end, n++) {
		long pid = strtol(p, &end, 10);

		if (end == p || pid <= 0)
			break;
		sum += mem_rss_anon((pid_t)pid);
	}
	return sum >= min;
}

static void *setup_thread(void *arg)
{
	struct vma_fast_setup *s = arg;

	s->err = vma_bpf_open(&s->bpf);
	if (!s->err)
		s->err = vma_fast_verify(s->bpf);
	return NULL;
}

void vma_fast_begin(struct dump_ctx *ctx)
{
	struct vma_fast_setup *s;

	if (!tree_big(ctx->opts->tree, vma_fast_min()))
		return;
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	if (pthread_create(&s->th, NULL, setup_thread, s)) {
		free(s);
		return;
	}
	ctx->vma_fast = s;
}

void vma_fast_ready(struct dump_ctx *ctx)
{
	struct vma_fast_setup *s = ctx->vma_fast;

	if (!s || s->joined)
		return;
	pthread_join(s->th, NULL);
	s->joined = true;
	if (s->err) {
		pr_debug("smaps read in full: %s\n", strerror(-s->err));
		vma_bpf_close(s->bpf);
		free(s);
		ctx->vma_fast = NULL;
		return;
	}
	pr_debug("the VMAs read without smaps' walk\n");
	smaps_fast_use(s->bpf);
}

void vma_fast_end(struct dump_ctx *ctx)
{
	struct vma_fast_setup *s = ctx->vma_fast;

	if (!s)
		return;
	if (!s->joined)
		pthread_join(s->th, NULL);
	smaps_fast_use(NULL);
	vma_bpf_close(s->bpf);
	free(s);
	ctx->vma_fast = NULL;
}
