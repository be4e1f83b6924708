// SPDX-License-Identifier: GPL-2.0
/*
 * The pure half of kerndat: parsing kernel releases, the vDSO layout out of
 * /proc/PID/maps and the freezer mounts out of /proc/PID/mountinfo, and the
 * verdict "can dump and restore work". No system calls, so unit tests feed
 * fixture text. Only the few fields needed here are parsed (the full parsers
 * live in proc-parse.c).
 */
#define LOG_PREFIX "kerndat: "
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kerndat.h"
#include "log.h"
#include "util.h"

int kd_parse_release(const char *release, struct kver *ret)
{
	unsigned int v[3] = { 0, 0, 0 };
	const char *p = release;
	int i;

	if (*p < '0' || *p > '9') {
		pr_debug("unparsable kernel release '%s'\n", release);
		return -EINVAL;
	}
	for (i = 0; i < 3; i++) {
		char *end;
		unsigned long n;

		if (*p < '0' || *p > '9')
			break;
		n = strtoul(p, &end, 10);
		if (n > 65535)
			return -EINVAL;
		v[i] = n;
		p = end;
		if (*p != '.')
			break;
		p++;
	}
	ret->major = v[0];
	ret->minor = v[1];
	ret->patch = v[2];
	return 0;
}

int kver_cmp(const struct kver *a, const struct kver *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return 0;
}

/*
 * One maps line: "start-end perms offset major:minor inode   name". @name
 * points into the line (not NUL-terminated: ends at '\n' or the string end).
 */
static int parse_maps_line(const char *line, unsigned long *start, unsigned long *end,
			   const char **name, size_t *name_len)
{
	unsigned long off, ino;
	unsigned int maj, min;
	char perms[5];
	int pos = 0;
	const char *nl;

	if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu%n", start, end, perms, &off, &maj, &min, &ino,
		   &pos) != 7 ||
	    pos == 0 || *end <= *start)
		return -EINVAL;
	line += pos;
	while (*line == ' ' || *line == '\t')
		line++;
	nl = strchr(line, '\n');
	*name = line;
	*name_len = nl ? (size_t)(nl - line) : strlen(line);
	return 0;
}

static const char *const vdso_area_names[VDSO_AREA__MAX] = {
	[VDSO_AREA_VVAR] = "[vvar]",
	[VDSO_AREA_VVAR_VCLOCK] = "[vvar_vclock]",
	[VDSO_AREA_VDSO] = "[vdso]",
	[VDSO_AREA_VSYSCALL] = "[vsyscall]",
};

int kd_parse_vdso_layout(const char *maps, struct vdso_layout *ret)
{
	struct vdso_layout l;
	const char *line;

	memset(&l, 0, sizeof(l));
	for (line = maps; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long start, end;
		const char *name;
		size_t len;
		int i;

		if (parse_maps_line(line, &start, &end, &name, &len)) {
			pr_debug("bad maps line: %.80s\n", line);
			return -EINVAL;
		}
		for (i = 0; i < VDSO_AREA__MAX; i++) {
			if (len != strlen(vdso_area_names[i]) ||
			    memcmp(name, vdso_area_names[i], len) != 0)
				continue;
			l.area[i].present = true;
			l.area[i].start = start;
			l.area[i].end = end;
		}
	}
	if (!l.area[VDSO_AREA_VDSO].present)
		return -ENOENT;
	*ret = l;
	return 0;
}

int kd_format_vdso_layout(const struct vdso_layout *l, char *buf, size_t size)
{
	size_t used = 0;
	int i;

	if (size)
		buf[0] = '\0';
	for (i = 0; i < VDSO_AREA__MAX; i++) {
		unsigned long pages;
		int n;

		if (!l->area[i].present)
			continue;
		pages = (l->area[i].end - l->area[i].start) / PAGE_SIZE;
		n = snprintf(buf + min(used, size), size - min(used, size), "%s%s %lu page%s",
			     used ? ", " : "", vdso_area_names[i], pages, pages == 1 ? "" : "s");
		if (n < 0)
			return -EINVAL;
		used += n;
	}
	return (int)used;
}

int kd_maps_find(const char *maps, unsigned long addr, unsigned long *ret_start,
		 unsigned long *ret_end)
{
	const char *line;

	for (line = maps; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long start, end;
		const char *name;
		size_t len;

		if (parse_maps_line(line, &start, &end, &name, &len))
			return -EINVAL;
		if (addr >= start && addr < end) {
			*ret_start = start;
			*ret_end = end;
			return 0;
		}
	}
	return -ENOENT;
}

/* Copy one space-separated mountinfo field, undoing the kernel's \ooo escapes. */
static const char *mi_field(const char *p, char *out, size_t size)
{
	size_t n = 0;

	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return NULL;
	while (*p && *p != ' ' && *p != '\n') {
		char c = *p++;

		if (c == '\\' && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
		    p[2] >= '0' && p[2] <= '7') {
			c = (char)((p[0] - '0') << 6 | (p[1] - '0') << 3 | (p[2] - '0'));
			p += 3;
		}
		if (n + 1 < size)
			out[n++] = c;
	}
	if (size)
		out[n] = '\0';
	return p;
}

static bool has_option(const char *opts, const char *opt)
{
	size_t len = strlen(opt);
	const char *p = opts;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n == len && !memcmp(p, opt, len))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

/* Fill mountpoint, fstype and super options from one mountinfo line. */
static int parse_mountinfo_line(const char *p, char *mnt, char *fstype, char *sopts)
{
	char tok[KD_PATH_MAX];
	int i;

	/* mount id, parent id, major:minor, root, mount point */
	for (i = 0; i < 5; i++) {
		p = mi_field(p, i == 4 ? mnt : tok, KD_PATH_MAX);
		if (!p)
			return -EINVAL;
	}
	/* per-mount options, then optional fields up to the "-" separator */
	do {
		p = mi_field(p, tok, sizeof(tok));
		if (!p)
			return -EINVAL;
	} while (strcmp(tok, "-"));
	p = mi_field(p, fstype, KD_PATH_MAX);
	if (p)
		p = mi_field(p, tok, sizeof(tok)); /* source */
	if (p)
		p = mi_field(p, sopts, KD_PATH_MAX);
	return p ? 0 : -EINVAL;
}

int kd_parse_freezer_mounts(const char *mountinfo, struct freezer_mounts *ret)
{
	struct freezer_mounts fm;
	const char *line;

	memset(&fm, 0, sizeof(fm));
	for (line = mountinfo; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char mnt[KD_PATH_MAX], fstype[KD_PATH_MAX], sopts[KD_PATH_MAX];

		if (*line == '\n')
			continue;
		if (parse_mountinfo_line(line, mnt, fstype, sopts)) {
			pr_debug("bad mountinfo line: %.80s\n", line);
			return -EINVAL;
		}
		if (!fm.has_v1 && !strcmp(fstype, "cgroup") && has_option(sopts, "freezer")) {
			fm.has_v1 = true;
			snprintf(fm.v1, sizeof(fm.v1), "%s", mnt);
		} else if (!fm.has_v2 && !strcmp(fstype, "cgroup2")) {
			fm.has_v2 = true;
			snprintf(fm.v2, sizeof(fm.v2), "%s", mnt);
		}
	}
	*ret = fm;
	return 0;
}

int kd_check_required(const struct kerndat *kd, enum kd_feature *missing, unsigned int *nr_missing)
{
	unsigned int nr = 0;
	int i;

	for (i = 0; i < KD__MAX; i++) {
		if (kd_feature(i)->need != KD_REQUIRED || kerndat_has(kd, i))
			continue;
		missing[nr++] = i;
	}
	*nr_missing = nr;
	return nr ? -ENOTSUP : 0;
}
