// SPDX-License-Identifier: GPL-2.0
/*
 * cpuinfo_compare(): what an image records that this CPU lacks, each named
 * (x86's names, or the word and bit), by --cpu-cap; and this CPU against
 * itself (arch_cpuinfo_read()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cpuinfo.h"

struct ent {
	CpuinfoEntry e;
	CpuinfoWord w[3];
	CpuinfoWord *wp[3];
};

/* leaf 7.0 ebx, leaf 1 ecx, and an unnamed word */
static void make(struct ent *x, uint32_t ebx7, uint32_t ecx1, uint32_t other, uint64_t xf,
		 uint32_t xsize)
{
	static const uint32_t leaf[] = { 0x7, 0x1, 0x7 }, sub[] = { 0, 0, 1 }, reg[] = { 1, 2, 0 };
	uint32_t bits[] = { ebx7, ecx1, other };
	int i;

	cpuinfo_entry__init(&x->e);
	x->e.arch = "x86_64";
	for (i = 0; i < 3; i++) {
		cpuinfo_word__init(&x->w[i]);
		x->w[i].leaf = leaf[i];
		x->w[i].subleaf = sub[i];
		x->w[i].reg = reg[i];
		x->w[i].bits = bits[i];
		x->wp[i] = &x->w[i];
	}
	x->e.n_words = 3;
	x->e.words = x->wp;
	x->e.has_xfeatures = true;
	x->e.xfeatures = xf;
	x->e.has_xsave_size = true;
	x->e.xsave_size = xsize;
}

static void test_same(void **state)
{
	struct ent a, b;
	char out[256];

	(void)state;
	make(&a, 0x20, 1u << 28, 0, 0x7, 832);
	make(&b, 0x20, 1u << 28, 0, 0x7, 832);
	assert_int_equal(cpuinfo_compare(&a.e, &b.e, CPU_CAP_ALL, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* more here than in the image: fine */
	make(&b, 0x20 | (1u << 16), (1u << 28) | 1, 0x10, 0xe7, 2696);
	assert_int_equal(cpuinfo_compare(&a.e, &b.e, CPU_CAP_ALL, out, sizeof(out)), 0);
}

static void test_missing(void **state)
{
	struct ent img, here;
	char out[256];

	(void)state;
	/* the image has avx2, avx512f (7.0 ebx 5, 16), avx (1 ecx 28), 7.1 eax bit 30, zmm state */
	make(&img, (1u << 5) | (1u << 16), 1u << 28, 1u << 30, 0xe7, 2696);
	make(&here, 1u << 5, 0, 0, 0x7, 832);
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_ALL, out, sizeof(out)), 6);
	assert_non_null(strstr(out, "avx512f"));
	assert_null(strstr(out, "avx2"));
	assert_non_null(strstr(out, "avx, "));
	assert_non_null(strstr(out, "cpuid 0x7.1 eax bit 30"));
	assert_non_null(strstr(out, "xsave state avx512_opmask"));
	assert_non_null(strstr(out, "xsave state avx512_zmm_hi256"));
	assert_non_null(strstr(out, "xsave state avx512_hi16_zmm"));
	/* --cpu-cap: fpu only, cpu only, none */
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_FPU, out, sizeof(out)), 3);
	assert_null(strstr(out, "avx512f"));
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_CPU, out, sizeof(out)), 3);
	assert_null(strstr(out, "xsave"));
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_INS, out, sizeof(out)), 3);
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_NONE, out, sizeof(out)), 0);
	/* a word this CPU does not record at all: every bit of it lacks */
	make(&here, 1u << 5, 0, 1u << 30, 0x7, 832);
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_CPU, out, sizeof(out)), 2);
	here.e.n_words = 2;
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_CPU, out, sizeof(out)), 3);
	/* a larger xsave area with the same components */
	make(&img, 0, 0, 0, 0x7, 1000);
	make(&here, 0, 0, 0, 0x7, 832);
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_FPU, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "xsave area of 1000 bytes"));
	/* a short buffer ends with "..." */
	make(&img, 0xffffffff, 0, 0, 0, 0);
	make(&here, 0, 0, 0, 0, 0);
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_CPU, out, 40), 32);
	assert_true(strlen(out) < 40);
	assert_non_null(strstr(out, "..."));
}

static void test_arch(void **state)
{
	struct ent img, here;
	char out[128];

	(void)state;
	make(&img, 0, 0, 0, 0, 0);
	make(&here, 0, 0, 0, 0, 0);
	img.e.arch = "aarch64";
	assert_int_equal(cpuinfo_compare(&img.e, &here.e, CPU_CAP_ALL, out, sizeof(out)), -EINVAL);
	assert_non_null(strstr(out, "aarch64"));
}

/* This CPU has what it records, and records x87, SSE and a size. */
static void test_this_cpu(void **state)
{
	struct cpuinfo_here a;
	char out[256];

	(void)state;
	assert_int_equal(arch_cpuinfo_read(&a), 0);
	assert_string_equal(a.e.arch, "x86_64");
	assert_true(a.e.n_words >= 8);
	assert_int_equal(cpuinfo_compare(&a.e, &a.e, CPU_CAP_ALL, out, sizeof(out)), 0);
	assert_true(a.e.has_xfeatures);
	assert_int_equal(a.e.xfeatures & 3, 3);
	assert_true(a.e.xsave_size >= 576);
	/* sse2 is in every x86_64 */
	assert_string_equal(arch_cpuinfo_bit_name(0x1, 0, 3, 26), "sse2");
	assert_null(arch_cpuinfo_bit_name(0x1, 0, 3, 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_arch),
		cmocka_unit_test(test_this_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
