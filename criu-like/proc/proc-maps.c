// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/maps and /proc/PID/smaps.
 *
 * What Linux 6.18 prints in the name column (checked on this machine by mapping files with odd
 * names): the path comes from d_path() through seq_file_path(..., "\n"), so only '\n' is escaped,
 * as "\012". Spaces, tabs and backslashes are printed raw, so a file whose name holds the four
 * characters "\012" reads exactly like one whose name holds a newline: the text cannot tell them
 * apart, and we unescape "\012" to '\n' (the common case). An unlinked file gets " (deleted)"
 * appended; a file whose own name ends in " (deleted)" is indistinguishable from an unlinked one
 * unless it is really unlinked too ("x (deleted) (deleted)"). We strip one suffix and set
 * vma_entry.deleted; a caller that must be sure checks the file itself (its link count through
 * /proc/PID/map_files).
 */
#define LOG_PREFIX "proc: "

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "proc-parse.h"
#include "proc-parse-int.h"
#include "util.h"

static const char deleted_sfx[] = " (deleted)";

/* Copy a maps name, turning "\012" back into '\n' (the only escape maps uses). */
static char *maps_unescape(const char *s, size_t len)
{
	char *d = malloc(len + 1), *o = d;
	size_t i;

	if (!d)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '\\' && len - i >= 4 && !memcmp(s + i, "\\012", 4)) {
			*o++ = '\n';
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return d;
}

static bool is_sysv_name(const char *path)
{
	const char *p = path;
	uint64_t key;

	/* ipc/shm.c names the segment "SYSV%08x" after its key. */
	if (pp_expect(&p, "/SYSV") || strlen(p) != 8 || pp_u64(&p, 16, &key))
		return false;
	return *p == '\0';
}

static const struct {
	const char *name;
	enum vma_kind kind;
} special_names[] = {
	{ "[heap]", VMA_HEAP },
	{ "[stack]", VMA_STACK },
	{ "[vdso]", VMA_VDSO },
	{ "[vvar]", VMA_VVAR },
	{ "[vvar_vclock]", VMA_VVAR_VCLOCK },
	{ "[vsyscall]", VMA_VSYSCALL },
};

/* Sort out what the name column says; @v->path is set (or NULL), @v->deleted too. */
static int vma_classify(struct vma_entry *v)
{
	size_t len, i;

	if (!v->path) {
		/* A file whose path d_path() could not print (too long) still has its inode. */
		v->kind = v->ino ? VMA_FILE : VMA_ANON;
		return 0;
	}
	len = strlen(v->path);
	if (v->path[0] == '[' && v->path[len - 1] == ']') {
		for (i = 0; i < ARRAY_SIZE(special_names); i++) {
			if (!strcmp(v->path, special_names[i].name)) {
				v->kind = special_names[i].kind;
				return 0;
			}
		}
		/* PR_SET_VMA_ANON_NAME: "[anon:NAME]" (5.17), "[anon_shmem:NAME]" (6.2) */
		if (!strncmp(v->path, "[anon:", 6) || !strncmp(v->path, "[anon_shmem:", 12)) {
			size_t off = v->path[5] == ':' ? 6 : 12;

			v->kind = off == 6 ? VMA_ANON_NAMED : VMA_ANON_SHMEM;
			v->anon_name = pp_strndup(v->path + off, len - off - 1);
			return v->anon_name ? 0 : -ENOMEM;
		}
		v->kind = VMA_OTHER; /* [uprobes], [stack:TID] before 4.5, ... */
		return 0;
	}
	v->kind = VMA_FILE;
	/*
	 * MAP_SHARED|MAP_ANONYMOUS (and a shared mapping of /dev/zero) is backed by an unlinked
	 * file on the kernel's internal shmem mount ("/dev/zero (deleted)"); SysV segments by
	 * "/SYSV<key> (deleted)" there. Both live on an anonymous device (major 0). memfd files
	 * ("/memfd:NAME (deleted)") are real files that a process may also have open, ftruncate
	 * or seal: they stay VMA_FILE with deleted set, and vma_entry.memfd says which they are.
	 */
	if (v->deleted && v->dev_major == 0) {
		if (!strcmp(v->path, "/dev/zero") || is_sysv_name(v->path))
			v->kind = VMA_ANON_SHMEM;
		else if (!strncmp(v->path, "/memfd:", 7))
			v->memfd = true;
	}
	return 0;
}

/* "start-end perms pgoff maj:min ino [name]" */
static int maps_header(const char *p, size_t len, struct vma_entry *v)
{
	const char *end = p + len, *name;
	uint64_t start, stop, pgoff, ino;
	size_t nlen;

	if (pp_u64(&p, 16, &start) || pp_expect(&p, "-") || pp_u64(&p, 16, &stop) ||
	    pp_expect(&p, " ") || start >= stop)
		return -EINVAL;
	/* strchr() matches the NUL too: test each byte before looking at the next one. */
	if (!p[0] || !strchr("r-", p[0]) || !p[1] || !strchr("w-", p[1]) || !p[2] ||
	    !strchr("x-", p[2]) || !p[3] || !strchr("sp", p[3]))
		return -EINVAL;
	v->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	v->shared = p[3] == 's';
	p += 4;
	if (pp_expect(&p, " ") || pp_u64(&p, 16, &pgoff) || pp_expect(&p, " ") ||
	    pp_uint(&p, 16, UINT32_MAX, &v->dev_major) || pp_expect(&p, ":") ||
	    pp_uint(&p, 16, UINT32_MAX, &v->dev_minor) || pp_expect(&p, " ") ||
	    pp_u64(&p, 10, &ino))
		return -EINVAL;
	v->start = start;
	v->end = stop;
	v->pgoff = pgoff;
	v->ino = ino;
	if (p == end)
		return vma_classify(v);
	/* The name is padded to column 73 with spaces; with no name one space ends the line. */
	if (!pp_skip_blanks(&p))
		return -EINVAL;
	name = p;
	nlen = end - name;
	if (!nlen)
		return vma_classify(v);
	if (nlen > sizeof(deleted_sfx) - 1 &&
	    !memcmp(end - (sizeof(deleted_sfx) - 1), deleted_sfx, sizeof(deleted_sfx) - 1)) {
		v->deleted = true;
		nlen -= sizeof(deleted_sfx) - 1;
	}
	v->path = maps_unescape(name, nlen);
	if (!v->path)
		return -ENOMEM;
	return vma_classify(v);
}

static const char vmflag_names[][3] = {
	"rd", "wr", "ex", "sh", "mr", "mw", "me", "ms", "gd", "pf", "lo", "io", "sr",
	"rr", "dc", "de", "ac", "nr", "ht", "ar", "dd", "sd", "mm", "hg", "nh", "mg",
	"um", "uw", "ss", "sl", "bt", "lf", "sf", "wf", "mt", "ui", "dp",
};

/* "VmFlags: rd wr mr mw me ac sd " (3.8+); unknown mnemonics are remembered, not dropped. */
static int smaps_vmflags(const char *p, const char *end, struct vma_entry *v)
{
	unsigned long flags = 0;
	unsigned int i;

	for (;;) {
		pp_skip_blanks(&p);
		if (p >= end)
			break;
		if (end - p < 2 || (end - p > 2 && p[2] != ' '))
			return -EINVAL;
		for (i = 0; i < ARRAY_SIZE(vmflag_names); i++) {
			if (p[0] == vmflag_names[i][0] && p[1] == vmflag_names[i][1])
				break;
		}
		if (i < ARRAY_SIZE(vmflag_names))
			flags |= 1UL << i;
		else
			v->vm_flags_unknown = true;
		p += 2;
	}
	v->vm_flags = flags;
	return 0;
}

/* One "Key:   value kB" line of smaps. */
static int smaps_field(const char *line, size_t len, struct vma_entry *v)
{
	static const struct {
		const char *key;
		size_t off;
	} kb[] = {
		{ "Rss", offsetof(struct vma_entry, rss) },
		{ "Anonymous", offsetof(struct vma_entry, anonymous) },
		{ "Swap", offsetof(struct vma_entry, swap) },
		{ "Shared_Dirty", offsetof(struct vma_entry, shared_dirty) },
		{ "Private_Dirty", offsetof(struct vma_entry, private_dirty) },
		{ "KernelPageSize", offsetof(struct vma_entry, kernel_page_size) },
		{ "AnonHugePages", offsetof(struct vma_entry, anon_huge) },
	};
	const char *colon = memchr(line, ':', len), *p;
	size_t klen, i;
	uint64_t val;

	if (!colon || colon == line)
		return -EINVAL;
	klen = colon - line;
	p = colon + 1;
	if (klen == 7 && !memcmp(line, "VmFlags", 7))
		return smaps_vmflags(p, line + len, v);
	for (i = 0; i < ARRAY_SIZE(kb); i++) {
		if (strlen(kb[i].key) == klen && !memcmp(line, kb[i].key, klen))
			break;
	}
	if (i == ARRAY_SIZE(kb))
		return 0; /* Size, Pss, THPeligible, ProtectionKey, ...: not needed */
	pp_skip_blanks(&p);
	if (pp_u64(&p, 10, &val) || pp_expect(&p, " kB") || p != line + len)
		return -EINVAL;
	*(unsigned long *)((char *)v + kb[i].off) = val;
	return 0;
}

/* A VMA line starts with "hex-hex"; smaps keys are words that never hold '-'. */
static bool is_vma_line(const char *p, size_t len)
{
	size_t i = 0;

	while (i < len && isxdigit((unsigned char)p[i]))
		i++;
	return i > 0 && i < len && p[i] == '-';
}

void vma_entry_fini(struct vma_entry *v)
{
	free(v->path);
	free(v->anon_name);
}

void vma_list_fini(struct vma_list *l)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++)
		vma_entry_fini(&l->vmas[i]);
	free(l->vmas);
	l->vmas = NULL;
	l->nr = l->cap = 0;
}

unsigned long vma_list_find(const struct vma_list *l, const char *path)
{
	for (unsigned int i = 0; i < l->nr; i++)
		if (l->vmas[i].path && !strcmp(l->vmas[i].path, path))
			return l->vmas[i].start;
	return 0;
}

static int maps_line(const char *line, size_t len, bool smaps, struct vma_list *l)
{
	struct vma_entry *v;
	int err;

	if (smaps && !is_vma_line(line, len)) {
		if (!l->nr)
			return -EINVAL;
		return smaps_field(line, len, &l->vmas[l->nr - 1]);
	}
	err = pp_grow((void **)&l->vmas, &l->cap, l->nr, sizeof(*l->vmas));
	if (err)
		return err;
	v = &l->vmas[l->nr];
	memset(v, 0, sizeof(*v));
	v->has_smaps = smaps;
	err = maps_header(line, len, v);
	if (err) {
		vma_entry_fini(v);
		return err;
	}
	if (l->nr && v->start < l->vmas[l->nr - 1].end) {
		vma_entry_fini(v);
		return -EINVAL; /* the kernel prints VMAs sorted and disjoint */
	}
	l->nr++;
	return 0;
}

int parse_maps(const char *text, bool smaps, struct vma_list *ret)
{
	struct vma_list l = { 0 };
	const char *cur = text, *line;
	size_t len;
	int err;

	while (pp_next_line(&cur, &line, &len)) {
		err = maps_line(line, len, smaps, &l);
		if (err) {
			pr_debug("cannot parse %s line: %.*s\n", smaps ? "smaps" : "maps",
				 (int)min(len, 300), line);
			vma_list_fini(&l);
			return err == -ENOMEM ? err : -EINVAL;
		}
	}
	*ret = l;
	return 0;
}

int proc_parse_maps(pid_t pid, bool smaps, struct vma_list *ret)
{
	_cleanup_free_ char *text = NULL;
	char path[64];

	snprintf(path, sizeof(path), "%d/%s", pid, smaps ? "smaps" : "maps");
	text = pp_read_proc(path);
	if (!text)
		return neg_errno();
	return parse_maps(text, smaps, ret);
}
