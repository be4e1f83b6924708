// SPDX-License-Identifier: GPL-2.0
/*
 * The pure half of kerndat: parsing kernel releases, the vDSO layout out of
 * /proc/PID/maps and the freezer mounts out of /proc/PID/mountinfo (with the
 * proc-parse.h parsers), and the verdict "can dump and restore work". No
 * system calls, so unit tests feed fixture text.
 */
#define LOG_PREFIX "kerndat: "
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kerndat.h"
#include "log.h"
#include "proc-parse.h"
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

static const char *const vdso_area_names[VDSO_AREA__MAX] = {
	[VDSO_AREA_VVAR] = "[vvar]",
	[VDSO_AREA_VVAR_VCLOCK] = "[vvar_vclock]",
	[VDSO_AREA_VDSO] = "[vdso]",
	[VDSO_AREA_VSYSCALL] = "[vsyscall]",
};

static int vdso_area_of(enum vma_kind kind)
{
	switch (kind) {
	case VMA_VVAR:
		return VDSO_AREA_VVAR;
	case VMA_VVAR_VCLOCK:
		return VDSO_AREA_VVAR_VCLOCK;
	case VMA_VDSO:
		return VDSO_AREA_VDSO;
	case VMA_VSYSCALL:
		return VDSO_AREA_VSYSCALL;
	default:
		return -ENOENT; /* not a vDSO-related area */
	}
}

int kd_parse_vdso_layout(const char *maps, struct vdso_layout *ret)
{
	struct vma_list vl;
	struct vdso_layout l;
	unsigned int i;
	int err;

	err = parse_maps(maps, false, &vl);
	if (err)
		return err;
	memset(&l, 0, sizeof(l));
	for (i = 0; i < vl.nr; i++) {
		int a = vdso_area_of(vl.vmas[i].kind);

		if (a < 0)
			continue;
		l.area[a].present = true;
		l.area[a].start = vl.vmas[i].start;
		l.area[a].end = vl.vmas[i].end;
	}
	vma_list_fini(&vl);
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

int kd_parse_freezer_mounts(const char *mountinfo, struct freezer_mounts *ret)
{
	struct freezer_mounts fm;
	struct mount_list ml;
	unsigned int i;
	int err;

	err = parse_mountinfo(mountinfo, &ml);
	if (err)
		return err;
	memset(&fm, 0, sizeof(fm));
	for (i = 0; i < ml.nr; i++) {
		const struct mount_entry *m = &ml.mnts[i];

		if (!fm.has_v1 && !strcmp(m->fstype, "cgroup") &&
		    has_option(m->super_options, "freezer")) {
			fm.has_v1 = true;
			snprintf(fm.v1, sizeof(fm.v1), "%s", m->mountpoint);
		} else if (!fm.has_v2 && !strcmp(m->fstype, "cgroup2")) {
			fm.has_v2 = true;
			snprintf(fm.v2, sizeof(fm.v2), "%s", m->mountpoint);
		}
	}
	mount_list_fini(&ml);
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
