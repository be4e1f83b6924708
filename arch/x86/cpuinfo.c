// SPDX-License-Identifier: GPL-2.0
/*
 * x86's part of cpuinfo (include/cpuinfo.h, Documentation/cpuinfo.md): the
 * CPUID words of user-visible features a dumped program may have chosen its
 * code paths by (glibc's ifuncs, JITs), XCR0 (the XSAVE state components the
 * kernel enabled, which the restored signal frames carry) and the XSAVE area
 * size, and the names of their bits.
 */
#include <cpuid.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#define LOG_PREFIX "cpuinfo: "
#include "cpuinfo.h"
#include "log.h"
#include "util.h"

enum {
	R_EAX,
	R_EBX,
	R_ECX,
	R_EDX
};

/* The words recorded, and the bits of each that say nothing of what code may use. */
static const struct {
	uint32_t leaf, subleaf, reg, ignore;
} words[] = {
	/* ecx: 27 OSXSAVE (the kernel's, XCR0 says it), 31 hypervisor; edx: 28 HTT (topology) */
	{ 0x1, 0, R_ECX, (1u << 27) | (1u << 31) },
	{ 0x1, 0, R_EDX, 1u << 28 },
	{ 0x7, 0, R_EBX, 0 },
	{ 0x7, 0, R_ECX, 0 },
	{ 0x7, 0, R_EDX,
	  0xffffffffu & ~((1u << 4) | (1u << 8) | (1u << 14) | (1u << 22) | (1u << 23) |
			  (1u << 24) | (1u << 25)) },
	{ 0x7, 1, R_EAX, 0 },
	{ 0xd, 1, R_EAX, 0 },
	{ 0x80000001, 0, R_ECX, 0 },
	{ 0x80000001, 0, R_EDX, 0 },
};

static const struct {
	uint32_t leaf, subleaf, reg;
	unsigned int bit;
	const char *name;
} names[] = {
	{ 0x1, 0, R_ECX, 0, "sse3" },
	{ 0x1, 0, R_ECX, 1, "pclmulqdq" },
	{ 0x1, 0, R_ECX, 9, "ssse3" },
	{ 0x1, 0, R_ECX, 12, "fma" },
	{ 0x1, 0, R_ECX, 13, "cx16" },
	{ 0x1, 0, R_ECX, 19, "sse4_1" },
	{ 0x1, 0, R_ECX, 20, "sse4_2" },
	{ 0x1, 0, R_ECX, 22, "movbe" },
	{ 0x1, 0, R_ECX, 23, "popcnt" },
	{ 0x1, 0, R_ECX, 25, "aes" },
	{ 0x1, 0, R_ECX, 26, "xsave" },
	{ 0x1, 0, R_ECX, 28, "avx" },
	{ 0x1, 0, R_ECX, 29, "f16c" },
	{ 0x1, 0, R_ECX, 30, "rdrand" },
	{ 0x1, 0, R_EDX, 0, "fpu" },
	{ 0x1, 0, R_EDX, 4, "tsc" },
	{ 0x1, 0, R_EDX, 8, "cx8" },
	{ 0x1, 0, R_EDX, 15, "cmov" },
	{ 0x1, 0, R_EDX, 19, "clflush" },
	{ 0x1, 0, R_EDX, 23, "mmx" },
	{ 0x1, 0, R_EDX, 24, "fxsr" },
	{ 0x1, 0, R_EDX, 25, "sse" },
	{ 0x1, 0, R_EDX, 26, "sse2" },
	{ 0x7, 0, R_EBX, 0, "fsgsbase" },
	{ 0x7, 0, R_EBX, 3, "bmi1" },
	{ 0x7, 0, R_EBX, 4, "hle" },
	{ 0x7, 0, R_EBX, 5, "avx2" },
	{ 0x7, 0, R_EBX, 8, "bmi2" },
	{ 0x7, 0, R_EBX, 9, "erms" },
	{ 0x7, 0, R_EBX, 11, "rtm" },
	{ 0x7, 0, R_EBX, 16, "avx512f" },
	{ 0x7, 0, R_EBX, 17, "avx512dq" },
	{ 0x7, 0, R_EBX, 18, "rdseed" },
	{ 0x7, 0, R_EBX, 19, "adx" },
	{ 0x7, 0, R_EBX, 23, "clflushopt" },
	{ 0x7, 0, R_EBX, 24, "clwb" },
	{ 0x7, 0, R_EBX, 28, "avx512cd" },
	{ 0x7, 0, R_EBX, 29, "sha_ni" },
	{ 0x7, 0, R_EBX, 30, "avx512bw" },
	{ 0x7, 0, R_EBX, 31, "avx512vl" },
	{ 0x7, 0, R_ECX, 1, "avx512vbmi" },
	{ 0x7, 0, R_ECX, 2, "umip" },
	{ 0x7, 0, R_ECX, 3, "pku" },
	{ 0x7, 0, R_ECX, 5, "waitpkg" },
	{ 0x7, 0, R_ECX, 6, "avx512_vbmi2" },
	{ 0x7, 0, R_ECX, 8, "gfni" },
	{ 0x7, 0, R_ECX, 9, "vaes" },
	{ 0x7, 0, R_ECX, 10, "vpclmulqdq" },
	{ 0x7, 0, R_ECX, 11, "avx512_vnni" },
	{ 0x7, 0, R_ECX, 12, "avx512_bitalg" },
	{ 0x7, 0, R_ECX, 14, "avx512_vpopcntdq" },
	{ 0x7, 0, R_ECX, 22, "rdpid" },
	{ 0x7, 0, R_EDX, 4, "fsrm" },
	{ 0x7, 0, R_EDX, 8, "avx512_vp2intersect" },
	{ 0x7, 0, R_EDX, 14, "serialize" },
	{ 0x7, 0, R_EDX, 22, "amx_bf16" },
	{ 0x7, 0, R_EDX, 23, "avx512_fp16" },
	{ 0x7, 0, R_EDX, 24, "amx_tile" },
	{ 0x7, 0, R_EDX, 25, "amx_int8" },
	{ 0x7, 1, R_EAX, 4, "avx_vnni" },
	{ 0x7, 1, R_EAX, 5, "avx512_bf16" },
	{ 0xd, 1, R_EAX, 0, "xsaveopt" },
	{ 0xd, 1, R_EAX, 1, "xsavec" },
	{ 0xd, 1, R_EAX, 2, "xgetbv1" },
	{ 0xd, 1, R_EAX, 3, "xsaves" },
	{ 0x80000001, 0, R_ECX, 0, "lahf_lm" },
	{ 0x80000001, 0, R_ECX, 5, "abm" },
	{ 0x80000001, 0, R_ECX, 6, "sse4a" },
	{ 0x80000001, 0, R_ECX, 8, "3dnowprefetch" },
	{ 0x80000001, 0, R_ECX, 16, "fma4" },
	{ 0x80000001, 0, R_ECX, 21, "tbm" },
	{ 0x80000001, 0, R_EDX, 11, "syscall" },
	{ 0x80000001, 0, R_EDX, 20, "nx" },
	{ 0x80000001, 0, R_EDX, 27, "rdtscp" },
	{ 0x80000001, 0, R_EDX, 29, "lm" },
};

static const char *const xfeature_names[] = {
	[0] = "x87",
	[1] = "sse",
	[2] = "avx",
	[3] = "mpx_bndregs",
	[4] = "mpx_bndcsr",
	[5] = "avx512_opmask",
	[6] = "avx512_zmm_hi256",
	[7] = "avx512_hi16_zmm",
	[8] = "pt",
	[9] = "pkru",
	[11] = "cet_user",
	[12] = "cet_supervisor",
	[17] = "amx_tilecfg",
	[18] = "amx_tiledata",
};

const char *arch_cpuinfo_bit_name(uint32_t leaf, uint32_t subleaf, uint32_t reg, unsigned int bit)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].leaf == leaf && names[i].subleaf == subleaf && names[i].reg == reg &&
		    names[i].bit == bit)
			return names[i].name;
	return NULL;
}

const char *arch_xfeature_name(unsigned int bit)
{
	return bit < ARRAY_SIZE(xfeature_names) ? xfeature_names[bit] : NULL;
}

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

int arch_cpuinfo_read(struct cpuinfo_here *ci)
{
	uint32_t r[4], max, max_ext;
	size_t i, n = 0;

	memset(ci, 0, sizeof(*ci));
	cpuinfo_entry__init(&ci->e);
	__cpuid(0, max, r[1], r[2], r[3]);
	memcpy(ci->vendor, &r[1], 4);
	memcpy(ci->vendor + 4, &r[3], 4);
	memcpy(ci->vendor + 8, &r[2], 4);
	max_ext = __get_cpuid_max(0x80000000, NULL);
	for (i = 0; i < ARRAY_SIZE(words); i++) {
		uint32_t leaf = words[i].leaf;

		if ((leaf < 0x80000000 && leaf > max) || (leaf >= 0x80000000 && leaf > max_ext))
			r[0] = r[1] = r[2] = r[3] = 0;
		else
			__cpuid_count(leaf, words[i].subleaf, r[0], r[1], r[2], r[3]);
		cpuinfo_word__init(&ci->word[n]);
		ci->word[n].leaf = leaf;
		ci->word[n].subleaf = words[i].subleaf;
		ci->word[n].reg = words[i].reg;
		ci->word[n].bits = r[words[i].reg] & ~words[i].ignore;
		ci->words[n] = &ci->word[n];
		n++;
	}
	ci->e.arch = "x86_64";
	ci->e.vendor = ci->vendor;
	ci->e.n_words = n;
	ci->e.words = ci->words;
	/* OSXSAVE: the kernel enabled XSAVE, XCR0 readable */
	__cpuid(1, r[0], r[1], r[2], r[3]);
	if (max >= 0xd && (r[2] & (1u << 27))) {
		ci->e.has_xfeatures = true;
		ci->e.xfeatures = xgetbv0();
		__cpuid_count(0xd, 0, r[0], r[1], r[2], r[3]);
		ci->e.has_xsave_size = true;
		ci->e.xsave_size = r[1];
	}
	return 0;
}
