// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like/mem/vdso-gone.c: which special areas a task unmapped (dump), and
 * what the restore does with each kind (move, unmap, refuse).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mm.pb-c.h"
#include "vdso-gone.h"

static struct vdso_layout kernel(bool vclock)
{
	struct vdso_layout l;

	memset(&l, 0, sizeof(l));
	l.area[VDSO_AREA_VVAR].present = true;
	l.area[VDSO_AREA_VVAR_VCLOCK].present = vclock;
	l.area[VDSO_AREA_VDSO].present = true;
	l.area[VDSO_AREA_VSYSCALL].present = true;
	return l;
}

static void test_unmapped_kinds(void **state)
{
	struct vma_entry v[4];
	struct vma_list vl = { .nr = 0, .vmas = v };
	struct vdso_layout k = kernel(true);
	uint32_t out[3];

	(void)state;
	memset(v, 0, sizeof(v));
	v[0].kind = VMA_ANON;
	v[1].kind = VMA_VVAR;
	v[2].kind = VMA_VVAR_VCLOCK;
	v[3].kind = VMA_VDSO;
	/* everything kept */
	vl.nr = 4;
	assert_int_equal(vdso_unmapped_kinds(&k, &vl, out), 0);
	/* everything gone, in [vvar], [vvar_vclock], [vdso] order; [vsyscall] is never counted */
	vl.nr = 1;
	assert_int_equal(vdso_unmapped_kinds(&k, &vl, out), 3);
	assert_int_equal(out[0], VMA_KIND__VMA_VVAR);
	assert_int_equal(out[1], VMA_KIND__VMA_VVAR_VCLOCK);
	assert_int_equal(out[2], VMA_KIND__VMA_VDSO);
	/* only the [vdso] gone */
	vl.nr = 3;
	assert_int_equal(vdso_unmapped_kinds(&k, &vl, out), 1);
	assert_int_equal(out[0], VMA_KIND__VMA_VDSO);
	/* a kernel without [vvar_vclock]: its absence is no unmapping */
	k = kernel(false);
	v[2].kind = VMA_ANON;
	vl.nr = 4;
	assert_int_equal(vdso_unmapped_kinds(&k, &vl, out), 0);
}

static void test_special_act(void **state)
{
	(void)state;
	assert_int_equal(vdso_special_act(0, 0, false), SPECIAL_NONE);
	assert_int_equal(vdso_special_act(0, 0, true), SPECIAL_NONE);
	assert_int_equal(vdso_special_act(8192, 8192, false), SPECIAL_MOVE);
	/* the task had unmapped it: the current area goes */
	assert_int_equal(vdso_special_act(0, 8192, true), SPECIAL_UNMAP);
	/* absent from the image without a record of the unmapping: another kernel */
	assert_int_equal(vdso_special_act(0, 8192, false), SPECIAL_REFUSE);
	/* in the image but not here, or of another size */
	assert_int_equal(vdso_special_act(8192, 0, false), SPECIAL_REFUSE);
	assert_int_equal(vdso_special_act(8192, 4096, false), SPECIAL_REFUSE);
	assert_int_equal(vdso_special_act(8192, 4096, true), SPECIAL_REFUSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unmapped_kinds),
		cmocka_unit_test(test_special_act),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
