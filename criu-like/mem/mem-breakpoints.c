// SPDX-License-Identifier: GPL-2.0
/*
 * Breakpoints in code. uprobes (and a debugger that left) write an int3 into
 * a task's private, read-only code mapping: the page becomes an anonymous
 * copy of the file's page that differs from it by those bytes only. Saved as
 * written, the restore would put back breakpoints that no uprobe of the new
 * mm answers (a SIGTRAP kills the task on the next hit, Documentation/memory.md,
 * "uprobes"). Such pages are left out: the restore maps the file's code, and
 * the kernel writes in the breakpoints of the uprobes registered then.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define LOG_PREFIX "mem: "
#include "log.h"
#include "mem-scan.h"
#include "util.h"

#define BREAKPOINT_INSN 0xcc /* x86 int3, what uprobes write */

bool mem_page_only_breakpoints(const uint8_t *task, const uint8_t *file, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		if (task[i] == file[i])
			continue;
		if (task[i] != BREAKPOINT_INSN)
			return false;
		n++;
	}
	return n > 0;
}

bool mem_vma_may_hold_breakpoints(const struct vma_entry *v)
{
	return v->kind == VMA_FILE && !v->shared && (v->prot & PROT_EXEC) &&
	       !(v->prot & PROT_WRITE) && !v->deleted && !v->memfd;
}

/* Page @addr of @v: the task's copy (/proc/PID/mem) and the file's (its map_files link). */
static int read_pair(int mem, int file, const struct vma_entry *v, unsigned long addr,
		     uint8_t *task, uint8_t *orig)
{
	ssize_t n = pread(mem, task, PAGE_SIZE, (off_t)addr);

	if (n != PAGE_SIZE)
		return n < 0 ? neg_errno() : -EIO;
	memset(orig, 0, PAGE_SIZE); /* past the end of the file: zeroes */
	n = pread(file, orig, PAGE_SIZE, (off_t)(v->pgoff + (addr - v->start)));
	return n < 0 ? neg_errno() : 0;
}

int mem_drop_breakpoint_pages(pid_t pid, const struct vma_entry *v, const struct mem_runs *in,
			      struct mem_runs *out, uint64_t *dropped)
{
	_cleanup_close_ int mem = -1, file = -1;
	_cleanup_free_ uint8_t *buf = malloc(2 * PAGE_SIZE);
	char path[96];
	unsigned int i;
	int err = 0;

	*dropped = 0;
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, v->start, v->end);
	file = open(path, O_RDONLY | O_CLOEXEC);
	for (i = 0; i < in->nr && !err; i++) {
		const struct mem_run *r = &in->runs[i];
		unsigned long a, keep = r->start, end = r->start + r->nr_pages * PAGE_SIZE;

		for (a = r->start; a < end && !err; a += PAGE_SIZE) {
			if (mem < 0 || file < 0 ||
			    read_pair(mem, file, v, a, buf, buf + PAGE_SIZE) ||
			    !mem_page_only_breakpoints(buf, buf + PAGE_SIZE, PAGE_SIZE))
				continue;
			pr_info("pid %d: page %lx of %s: breakpoints only (uprobes), the file's "
				"page is restored\n",
				pid, a, v->path ?: "?");
			if (a > keep)
				err = mem_runs_append(out, keep, (a - keep) / PAGE_SIZE, r->policy);
			keep = a + PAGE_SIZE;
			(*dropped)++;
		}
		if (!err && end > keep)
			err = mem_runs_append(out, keep, (end - keep) / PAGE_SIZE, r->policy);
	}
	return err;
}
