// SPDX-License-Identifier: GPL-2.0
/*
 * proc/smaps-reader.c: smaps read, the parasite's area dropped, and the
 * layout check against /proc/PID/maps (vma_layout_same()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "smaps-reader.h"
#include "util.h"

static struct vma_entry va[] = {
	{ .start = 0x1000, .end = 0x3000, .prot = 3, .kind = VMA_ANON },
	{ .start = 0x5000, .end = 0x6000, .prot = 1, .kind = VMA_FILE, .ino = 7, .pgoff = 0x1000 },
};

static void test_same(void **state)
{
	struct vma_entry vb[2];
	struct vma_list a = { 2, 2, va }, b = { 2, 2, vb };

	(void)state;
	memcpy(vb, va, sizeof(vb));
	vb[0].rss = 8; /* counters and flags are smaps', not the layout */
	vb[0].vm_flags = 0x3;
	assert_true(vma_layout_same(&a, &b));
	vb[0].end = 0x4000;
	assert_false(vma_layout_same(&a, &b));
	vb[0].end = 0x3000;
	vb[1].prot = 3;
	assert_false(vma_layout_same(&a, &b));
	vb[1].prot = 1;
	vb[1].pgoff = 0;
	assert_false(vma_layout_same(&a, &b));
	b.nr = 1;
	assert_false(vma_layout_same(&a, &b));
}

static bool listed(const struct vma_list *l, const struct vma_entry *v)
{
	for (unsigned int i = 0; i < l->nr; i++)
		if (l->vmas[i].start == v->start && l->vmas[i].end == v->end)
			return true;
	return false;
}

/* Our own smaps, two extra mappings dropped (two tasks' parasite areas, CLONE_VM). */
static void test_live(void **state)
{
	struct vma_list maps = { 0 }, got = { 0 };
	size_t len = 16 * PAGE_SIZE;
	unsigned long skip[4];
	char *extra[2];

	(void)state;
	/* shared mappings, as the parasites' areas: not merged with anything */
	for (int k = 0; k < 2; k++) {
		extra[k] = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		assert_true(extra[k] != MAP_FAILED);
		skip[2 * k] = (unsigned long)extra[k];
		skip[2 * k + 1] = (unsigned long)extra[k] + len;
	}
	assert_int_equal(smaps_read(getpid(), skip, 2, &got), 0);
	assert_int_equal(proc_parse_maps(getpid(), false, &maps), 0);
	assert_true(got.nr > 2);
	assert_int_equal(got.nr + 2, maps.nr);
	for (unsigned int i = 0; i < got.nr; i++) {
		const struct vma_entry *v = &got.vmas[i];

		assert_true(v->has_smaps);
		for (int k = 0; k < 2; k++)
			assert_false(v->start >= skip[2 * k] && v->end <= skip[2 * k + 1]);
		/* the heap may grow meanwhile; the rest is where maps has it */
		if (v->kind != VMA_HEAP && v->kind != VMA_STACK)
			assert_true(listed(&maps, v));
	}
	for (int k = 0; k < 2; k++)
		munmap(extra[k], len);
	vma_list_fini(&got);
	vma_list_fini(&maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
