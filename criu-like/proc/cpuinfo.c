// SPDX-License-Identifier: GPL-2.0
/*
 * cpuinfo.img (Documentation/cpuinfo.md): `cpuinfo dump` records this CPU's
 * features, `cpuinfo check` (and the RPC's CPUINFO_DUMP, CPUINFO_CHECK) says
 * whether this CPU has each one an image records. The arch reads and names
 * them (arch/x86/cpuinfo.c); the comparison here is pure (test-cpuinfo.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOG_PREFIX "cpuinfo: "
#include "cpuinfo.h"
#include "image.h"
#include "log.h"
#include "util.h"

struct missing {
	char *out;
	size_t size, len;
	int n;
};

static void add_missing(struct missing *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_missing(struct missing *m, const char *fmt, ...)
{
	char item[96];
	va_list ap;
	int len;

	va_start(ap, fmt);
	vsnprintf(item, sizeof(item), fmt, ap);
	va_end(ap);
	m->n++;
	if (!m->size || m->len + 4 >= m->size)
		return;
	len = snprintf(m->out + m->len, m->size - m->len, "%s%s", m->n > 1 ? ", " : "", item);
	if (len < 0 || (size_t)len >= m->size - m->len) {
		/* no room: end with "..." */
		snprintf(m->out + m->size - 4, 4, "...");
		m->len = m->size;
		return;
	}
	m->len += (size_t)len;
}

static const CpuinfoWord *find_word(const CpuinfoEntry *e, const CpuinfoWord *w)
{
	size_t i;

	for (i = 0; i < e->n_words; i++)
		if (e->words[i]->leaf == w->leaf && e->words[i]->subleaf == w->subleaf &&
		    e->words[i]->reg == w->reg)
			return e->words[i];
	return NULL;
}

static const char *const reg_names[] = { "eax", "ebx", "ecx", "edx" };

int cpuinfo_compare(const CpuinfoEntry *img, const CpuinfoEntry *here, unsigned int caps, char *out,
		    size_t size)
{
	struct missing m = { .out = out, .size = size };
	size_t i;
	unsigned int b;

	if (size)
		out[0] = '\0';
	if (!img->arch || !here->arch || strcmp(img->arch, here->arch)) {
		snprintf(out, size, "the image is of arch %s, this CPU of %s",
			 img->arch ? img->arch : "?", here->arch ? here->arch : "?");
		return -EINVAL;
	}
	if (caps & (CPU_CAP_CPU | CPU_CAP_INS)) {
		for (i = 0; i < img->n_words; i++) {
			const CpuinfoWord *w = img->words[i], *h = find_word(here, w);
			uint32_t lack = w->bits & ~(h ? h->bits : 0);

			for (b = 0; b < 32; b++) {
				const char *name;

				if (!(lack & (1u << b)))
					continue;
				name = arch_cpuinfo_bit_name(w->leaf, w->subleaf, w->reg, b);
				if (name)
					add_missing(&m, "%s", name);
				else
					add_missing(&m, "cpuid 0x%x.%u %s bit %u", w->leaf,
						    w->subleaf,
						    w->reg < 4 ? reg_names[w->reg] : "?", b);
			}
		}
	}
	if (caps & CPU_CAP_FPU) {
		uint64_t lack = (img->has_xfeatures ? img->xfeatures : 0) &
				~(here->has_xfeatures ? here->xfeatures : 0);

		for (b = 0; b < 64; b++) {
			const char *name;

			if (!(lack & (1ULL << b)))
				continue;
			name = arch_xfeature_name(b);
			if (name)
				add_missing(&m, "xsave state %s", name);
			else
				add_missing(&m, "xsave state component %u", b);
		}
		/* the restored frames hold an area of the image's size: it must fit here */
		if (img->has_xsave_size &&
		    (!here->has_xsave_size || img->xsave_size > here->xsave_size) && !lack)
			add_missing(&m, "an xsave area of %u bytes (this CPU's: %u)",
				    img->xsave_size, here->has_xsave_size ? here->xsave_size : 0);
	}
	return m.n;
}

int cr_cpuinfo_dump(const struct cr_options *o)
{
	struct cpuinfo_here ci;
	int dirfd, err;

	err = arch_cpuinfo_read(&ci);
	if (err)
		return err;
	dirfd = img_dir_open(o->images_dir, true);
	if (dirfd < 0)
		return dirfd;
	err = img_write_one(dirfd, CR_IMG_CPUINFO, 0, &ci.e.base);
	if (!err)
		err = img_dir_sync(dirfd);
	close(dirfd);
	if (err)
		pr_errno(err, "cannot write %s/cpuinfo.img", o->images_dir);
	else
		pr_info("%s/cpuinfo.img: %s, %zu feature words, xfeatures 0x%llx\n", o->images_dir,
			ci.vendor, ci.e.n_words, (unsigned long long)ci.e.xfeatures);
	return err;
}

int cr_cpuinfo_check(const struct cr_options *o, char *why, size_t size)
{
	struct cpuinfo_here ci;
	CpuinfoEntry *img = NULL;
	char missing[512];
	int dirfd, err, n;

	err = arch_cpuinfo_read(&ci);
	if (err)
		return err;
	dirfd = img_dir_open(o->images_dir, false);
	if (dirfd < 0)
		return dirfd;
	err = img_read_one(dirfd, CR_IMG_CPUINFO, 0, (ProtobufCMessage **)&img);
	close(dirfd);
	if (err) {
		pr_errno(err, "cannot read %s/cpuinfo.img", o->images_dir);
		if (why)
			snprintf(why, size, "cannot read cpuinfo.img: %s", strerror(-err));
		return err;
	}
	n = cpuinfo_compare(img, &ci.e, o->cpu_cap, missing, sizeof(missing));
	cpuinfo_entry__free_unpacked(img, NULL);
	if (n < 0) {
		pr_err("%s\n", missing);
		if (why)
			snprintf(why, size, "%s", missing);
		return n;
	}
	if (n) {
		pr_err("this CPU lacks %d feature%s of the image's: %s\n", n, n > 1 ? "s" : "",
		       missing);
		if (why)
			snprintf(why, size, "this CPU lacks %d feature%s of the image's: %s", n,
				 n > 1 ? "s" : "", missing);
		return -ENOTSUP;
	}
	pr_info("this CPU has every feature of %s/cpuinfo.img\n", o->images_dir);
	return 0;
}
