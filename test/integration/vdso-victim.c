// SPDX-License-Identifier: GPL-2.0
/*
 * A task that unmapped its [vdso] and [vvar], for vdso-unmapped.sh: it prints
 * "ready" once they are gone, then echoes each byte of stdin to stdout with
 * raw syscalls only (glibc's clock functions would jump into the vDSO).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int unmap_named(const char *name)
{
	unsigned long r[8][2], s, e;
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, name) && n < 8 && sscanf(line, "%lx-%lx", &s, &e) == 2) {
			r[n][0] = s;
			r[n][1] = e;
			n++;
		}
	if (f)
		fclose(f);
	for (int i = 0; i < n; i++)
		munmap((void *)r[i][0], r[i][1] - r[i][0]);
	return n;
}

int main(void)
{
	char c;

	if (!unmap_named("[vdso]") || !unmap_named("[vvar")) {
		syscall(SYS_write, 1, "no vdso here\n", 13);
		return 1;
	}
	syscall(SYS_write, 1, "ready\n", 6);
	while (syscall(SYS_read, 0, &c, 1) == 1)
		syscall(SYS_write, 1, &c, 1);
	return 0;
}
