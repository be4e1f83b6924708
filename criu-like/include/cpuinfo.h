/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_CPUINFO_H
#define CRIU_LIKE_CPUINFO_H

/*
 * What code dumped on one CPU may rely on (Documentation/cpuinfo.md):
 * `cpuinfo dump` writes this CPU's into cpuinfo.img, `cpuinfo check` says
 * whether this CPU has every feature an image records. The arch reads and
 * names the features (arch/x86/cpuinfo.c); the comparison is generic
 * (proc/cpuinfo.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

#include "cpuinfo.pb-c.h"

/* CRIU's --cpu-cap bits (and the RPC's cpu_cap) */
#define CPU_CAP_NONE 0u
#define CPU_CAP_FPU 1u /* the XSAVE state components and area size */
#define CPU_CAP_CPU 2u /* the CPUID feature words */
#define CPU_CAP_INS 4u /* the instructions: the same words here */
#define CPU_CAP_ALL (CPU_CAP_FPU | CPU_CAP_CPU | CPU_CAP_INS)

#define CPUINFO_MAX_WORDS 16

/* This CPU's, as the image records it (words point into @buf). */
struct cpuinfo_here {
	CpuinfoEntry e;
	CpuinfoWord word[CPUINFO_MAX_WORDS];
	CpuinfoWord *words[CPUINFO_MAX_WORDS];
	char vendor[16];
};

/* arch: fill @ci with this CPU's features. 0 or -errno. */
int arch_cpuinfo_read(struct cpuinfo_here *ci);
/* arch: the name of bit @bit of the word (@leaf, @subleaf, @reg), or NULL when it has none. */
const char *arch_cpuinfo_bit_name(uint32_t leaf, uint32_t subleaf, uint32_t reg, unsigned int bit);
/* arch: the name of XSAVE state component @bit, or NULL. */
const char *arch_xfeature_name(unsigned int bit);

/*
 * What @img records that @here lacks, for the checks in @caps: each missing
 * feature by name, ", " between them, into @out (truncated with "..."). The
 * number of missing features (0: @here can run the code of @img), or
 * -EINVAL when the two are of different architectures (named in @out).
 */
int cpuinfo_compare(const CpuinfoEntry *img, const CpuinfoEntry *here, unsigned int caps, char *out,
		    size_t size);

/* `cpuinfo dump`: this CPU's into o->images_dir/cpuinfo.img. 0 or -errno (logged). */
int cr_cpuinfo_dump(const struct cr_options *o);
/*
 * `cpuinfo check`: the image's against this CPU, for o->cpu_cap. 0; -ENOTSUP
 * when features are missing (each named in the log and, when @why is not
 * NULL, in @why); other -errno.
 */
int cr_cpuinfo_check(const struct cr_options *o, char *why, size_t size);

#endif
