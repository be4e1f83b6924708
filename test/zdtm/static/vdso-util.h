/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For vdso_unmap and vdso_mremap: the kernel's special areas in our maps, and
 * a function of a vDSO image found through its section headers. Once the
 * vDSO moved or went away, glibc's cached vDSO entry points are wrong: these
 * tests call the kernel with syscall() only.
 */
#ifndef ZDTM_VDSO_UTIL_H
#define ZDTM_VDSO_UTIL_H

#include <elf.h>
#include <stdio.h>
#include <string.h>

struct area {
	unsigned long start, end;
};

/* The areas named @name ("[vdso]", or "[vvar" for [vvar] and [vvar_vclock]): how many. */
static inline int find_areas(const char *name, struct area *a, int max)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, name) && n < max &&
		    sscanf(line, "%lx-%lx", &a[n].start, &a[n].end) == 2)
			n++;
	if (f)
		fclose(f);
	return n;
}

/* The address of the dynamic symbol @sym in the vDSO image mapped at @base, or NULL. */
static inline void *vdso_sym(unsigned long base, const char *sym)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Shdr *sh;
	unsigned long load = 0;
	int i;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || !eh->e_shoff)
		return NULL;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD) {
			load = ph->p_vaddr - ph->p_offset;
			break;
		}
	}
	sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *s;
		const char *str;
		unsigned long k;

		if (sh[i].sh_type != SHT_DYNSYM || !sh[i].sh_entsize)
			continue;
		s = (const Elf64_Sym *)(base + sh[i].sh_offset);
		str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		for (k = 0; k < sh[i].sh_size / sh[i].sh_entsize; k++)
			if (s[k].st_value && !strcmp(str + s[k].st_name, sym))
				return (void *)(base + s[k].st_value - load);
	}
	return NULL;
}

#endif
