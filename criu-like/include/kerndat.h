/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_KERNDAT_H
#define CRIU_LIKE_KERNDAT_H

/*
 * What the running kernel can do, found by really trying each interface
 * (kerndat.c). `check` prints it; dump and restore probe once and consult
 * kerndat_has() instead of guessing from the kernel version.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum kd_feature {
	KD_PTRACE_SEIZE,
	KD_PTRACE_INTERRUPT,
	KD_PTRACE_PEEKSIGINFO,
	KD_PTRACE_SIGMASK,
	KD_PTRACE_RSEQ,
	KD_PTRACE_SYSGOOD,
	KD_CLONE3_SET_TID,
	KD_PR_SET_MM_MAP,
	KD_KCMP,
	KD_MEMFD,
	KD_PIDFD_OPEN,
	KD_PIDFD_GETFD,
	KD_PROCESS_VM_READV,
	KD_VMSPLICE,
	KD_PROC_MAPS,
	KD_PAGEMAP_SCAN,
	KD_PROCMAP_QUERY,
	KD_BPF_VMA_ITER,
	KD_BPF_TASK_ITER,
	KD_UFFD,
	KD_UFFD_WP_ASYNC,
	KD_DIRTY_TRACKING,
	KD_SOFT_DIRTY,
	KD_TCP_REPAIR,
	KD_SOCK_DIAG_UNIX,
	KD_SOCK_DIAG_INET,
	KD_NS_MNT,
	KD_NS_UTS,
	KD_NS_IPC,
	KD_NS_NET,
	KD_NS_PID,
	KD_NS_USER,
	KD_NS_CGROUP,
	KD_NS_TIME,
	KD_TIMENS_OFFSETS,
	KD_VDSO,
	KD_FREEZER_V1,
	KD_FREEZER_V2,
	KD__MAX,
};

enum kd_need {
	KD_REQUIRED, /* dump or restore cannot work without it */
	KD_USED, /* used when present; its absence disables one option or mode */
	KD_EXTRA, /* nothing needs it yet; shown by `check --all` */
};

struct kver {
	unsigned int major, minor, patch;
};

#define KD_DETAIL_MAX 112

struct kd_result {
	bool probed;
	bool present;
	char detail[KD_DETAIL_MAX];
};

enum vdso_area_kind {
	VDSO_AREA_VVAR, /* [vvar] */
	VDSO_AREA_VVAR_VCLOCK, /* [vvar_vclock], 6.13+ */
	VDSO_AREA_VDSO, /* [vdso] */
	VDSO_AREA_VSYSCALL, /* [vsyscall] */
	VDSO_AREA__MAX,
};

struct vdso_layout {
	struct {
		bool present;
		unsigned long start, end;
	} area[VDSO_AREA__MAX];
};

#define KD_PATH_MAX 256

/* Where the cgroup freezers are mounted (mount points, as the tool sees them). */
struct freezer_mounts {
	bool has_v1, has_v2;
	char v1[KD_PATH_MAX]; /* a cgroup (v1) mount with the freezer controller */
	char v2[KD_PATH_MAX]; /* a cgroup2 mount */
};

struct kerndat {
	char release[65]; /* uname -r */
	struct kver kernel;
	struct kd_result res[KD__MAX];
	uint64_t uffd_features; /* UFFDIO_API answer; 0 without userfaultfd */
	struct vdso_layout vdso;
	struct freezer_mounts freezer;
};

struct kd_feature_desc;
typedef int (*kd_probe_fn)(struct kerndat *kd, const struct kd_feature_desc *f);

struct kd_feature_desc {
	enum kd_feature id;
	const char *name; /* short, stable: used in JSON and by zdtm test metadata */
	const char *what; /* what the engine uses it for */
	enum kd_need need;
	struct kver min; /* first kernel release with the interface */
	kd_probe_fn probe; /* may fill several results of one group at once */
	unsigned long arg;
};

/* ---- the feature table ---- */
const struct kd_feature_desc *kd_feature(enum kd_feature id);
/* The feature called @name, or NULL. */
const struct kd_feature_desc *kd_feature_by_name(const char *name);

/* ---- probing (kerndat.c) ---- */
/*
 * Probe every feature. Each probe forks where it could disturb the caller and
 * cleans up after itself. Returns 0 (absence is a result, not an error) or
 * -errno when nothing could be probed (uname failed).
 */
int kerndat_probe(struct kerndat *kd);
/* Probe one feature (and whatever its group fills); kd must be zeroed once. */
int kerndat_probe_one(struct kerndat *kd, enum kd_feature id);

static inline bool kerndat_has(const struct kerndat *kd, enum kd_feature id)
{
	return kd->res[id].probed && kd->res[id].present;
}

/* ---- pure logic (kerndat-parse.c, on the proc-parse.h parsers), unit-tested ---- */
/* "6.18.44-fc-v1147" -> 6.18.44. Missing minor/patch read as 0. */
int kd_parse_release(const char *release, struct kver *ret);
int kver_cmp(const struct kver *a, const struct kver *b);

/* The special vDSO areas in /proc/PID/maps text: 0, -EINVAL, or -ENOENT without [vdso]. */
int kd_parse_vdso_layout(const char *maps, struct vdso_layout *ret);
/* "[vvar] 4 pages, [vvar_vclock] 2 pages, [vdso] 2 pages"; returns snprintf's length. */
int kd_format_vdso_layout(const struct vdso_layout *l, char *buf, size_t size);

/* Freezer mounts in /proc/PID/mountinfo text: 0, or -EINVAL for malformed text. */
int kd_parse_freezer_mounts(const char *mountinfo, struct freezer_mounts *ret);

/*
 * Can dump and restore work with these results? 0 when every KD_REQUIRED
 * feature is present, else -ENOTSUP with the absent ones (in table order) in
 * @missing (room for KD__MAX) and their count in *nr_missing.
 */
int kd_check_required(const struct kerndat *kd, enum kd_feature *missing, unsigned int *nr_missing);

/* ---- output of `check` (check.c) ---- */
/* One line per feature (only KD_REQUIRED/KD_USED unless @all), then the verdict. */
int check_print_text(FILE *out, const struct kerndat *kd, bool all);
/* The same as a JSON array of objects. */
int check_print_json(FILE *out, const struct kerndat *kd, bool all);

/* ---- CRIU's feature names (check-feature.c) ---- */
/*
 * `check --feature NAME`: one line on @out; 0 when the kernel has it and
 * criu-like supports what depends on it, -ENOTSUP when not, -EINVAL for a
 * name CRIU does not have.
 */
int check_feature(FILE *out, const char *name);
/* check --feature list: CRIU's feature names, by ", ", wrapped at @width columns. */
void check_feature_list(FILE *out, unsigned int width);
/* CRIU's last line of `check`: dump and restore can work (@required), and with
 * --extra / --experimental, whether the features of those categories are there. */
const char *check_verdict(bool required, bool others);
/* One line per feature of CRIU's --extra / --experimental sets; -ENOTSUP if any fails. */
int check_categories(FILE *out, struct kerndat *kd, bool extra, bool experimental);

#endif
