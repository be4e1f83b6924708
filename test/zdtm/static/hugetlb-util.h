/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the hugetlb tests: a pool with enough huge pages (surplus pages made on
 * demand through vm.nr_overcommit_hugepages, put back at the end), and the
 * check that an area is hugetlb with 2 MiB pages.
 */
#ifndef ZDTM_HUGETLB_UTIL_H
#define ZDTM_HUGETLB_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "zdtmtst.h"

#define HP (2UL << 20)

static inline long huge_read(const char *file)
{
	FILE *f = fopen(file, "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* vm.nr_overcommit_hugepages = @n; 0 or -errno. */
static inline int huge_set_overcommit(long n)
{
	FILE *f = fopen("/proc/sys/vm/nr_overcommit_hugepages", "w");
	int err;

	if (!f)
		return -errno;
	err = fprintf(f, "%ld\n", n) < 0 ? -EIO : 0;
	if (fclose(f))
		return -errno;
	return err;
}

/*
 * Let the pool give @need more huge pages (surplus pages already made, by
 * another test or an earlier run, count against the setting); returns the
 * setting to put back, -1 if untouched, -2 on error.
 */
static inline long huge_meminfo(const char *key)
{
	char line[256];
	long n = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && sscanf(line + strlen(key), "%ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* huge_pool(): enough pages already, nothing to put back; the pool could not be read or raised */
#define HUGE_POOL_KEPT (-1L)
#define HUGE_POOL_FAIL (-2L)

/* The overcommit to put back after raising it so @need pages fit, or HUGE_POOL_*. */
static inline long huge_pool(long need)
{
	long over = huge_read("/proc/sys/vm/nr_overcommit_hugepages");
	long free_ = huge_meminfo("HugePages_Free:"), surplus = huge_meminfo("HugePages_Surp:");

	if (over < 0 || free_ < 0 || surplus < 0)
		return HUGE_POOL_FAIL;
	if (free_ + over - surplus >= need)
		return HUGE_POOL_KEPT;
	return huge_set_overcommit(surplus + need) ? HUGE_POOL_FAIL : over;
}

/* The area at @a is hugetlb with 2 MiB pages (and named @name, unless NULL) in our smaps. */
static inline int huge_is(const void *a, const char *name)
{
	char line[512], start[32];
	int in = 0, ok_size = 0, ok_flag = 0, ok_name = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	snprintf(start, sizeof(start), "%lx-", (unsigned long)a);
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, start, strlen(start))) {
			in = 1;
			ok_name = !name || strstr(line, name) != NULL;
		} else if (in && strchr(line, '-') && !strchr(line, ':'))
			break;
		if (in && !strncmp(line, "KernelPageSize:", 15))
			ok_size = strstr(line, " 2048 kB") != NULL;
		if (in && !strncmp(line, "VmFlags:", 8)) {
			ok_flag = strstr(line, " ht") != NULL;
			break;
		}
	}
	if (f)
		fclose(f);
	return ok_size && ok_flag && ok_name;
}

/*
 * The test's pattern in the first of 3 huge pages at @a ('a' to 'z' a 4 KiB
 * page), @last in the third, the area still hugetlb (named @name unless
 * NULL); 0, or -EINVAL after fail() naming @who.
 */
static inline int huge_check(const char *a, char last, const char *name, const char *who)
{
	size_t i;

	for (i = 0; i < HP; i += 4096)
		if (a[i] != (char)('a' + (i / 4096) % 26) || a[2 * HP + i] != last) {
			fail("%s: data changed at offset %zu", who, i);
			return -EINVAL;
		}
	if (!huge_is(a, name)) {
		fail("%s: the area is no longer hugetlb with 2 MiB pages%s%s", who,
		     name ? " named " : "", name ? name : "");
		return -EINVAL;
	}
	return 0;
}

#endif
