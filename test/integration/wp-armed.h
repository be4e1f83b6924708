/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the victims of the tests of write tracking (predump-victim.c,
 * snapshot-victim.c): whether a VMA of this process is registered for
 * userfaultfd write-protection ("uw" in its smaps VmFlags), which the
 * parasite does while the tree is frozen.
 */
#ifndef CRIU_LIKE_TEST_WP_ARMED_H
#define CRIU_LIKE_TEST_WP_ARMED_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline bool wp_armed(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool armed = false;

	while (f && !armed && fgets(line, sizeof(line), f))
		armed = !strncmp(line, "VmFlags:", 8) && strstr(line, " uw");
	if (f)
		fclose(f);
	return armed;
}

/*
 * Traced now (TracerPid in /proc/self/status): a --snapshot holds the
 * tree's leaders at their exit only while it copies; its arming before the
 * freeze leaves the tree untraced.
 */
static inline bool traced(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	bool yes = false;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10)) {
			yes = strtol(line + 10, NULL, 10) != 0;
			break;
		}
	if (f)
		fclose(f);
	return yes;
}

#endif
