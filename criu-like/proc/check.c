// SPDX-License-Identifier: GPL-2.0
/*
 * `criu-like check`: probe the kernel (kerndat.c) and print one line per
 * feature, or a JSON array with --json. Exit status 0 when every feature dump
 * and restore require is present.
 */
#define LOG_PREFIX "check: "
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cr.h"
#include "kerndat.h"
#include "log.h"
#include "util.h"

static const char *const need_names[] = {
	[KD_REQUIRED] = "required",
	[KD_USED] = "optional",
	[KD_EXTRA] = "extra",
};

static bool shown(const struct kd_feature_desc *f, bool all)
{
	return all || f->need != KD_EXTRA;
}

/* " (needs Linux X.Y)" when an absent feature is newer than the running kernel. */
static void too_old_note(const struct kerndat *kd, const struct kd_feature_desc *f, char *buf,
			 size_t size)
{
	buf[0] = '\0';
	if (!kerndat_has(kd, f->id) && kd->kernel.major && kver_cmp(&kd->kernel, &f->min) < 0)
		snprintf(buf, size, " (needs Linux %u.%u)", f->min.major, f->min.minor);
}

int check_print_text(FILE *out, const struct kerndat *kd, bool all)
{
	enum kd_feature missing[KD__MAX];
	unsigned int nr, i;
	int id;

	fprintf(out, "Linux %s\n", kd->release[0] ? kd->release : "(unknown release)");
	for (id = 0; id < KD__MAX; id++) {
		const struct kd_feature_desc *f = kd_feature(id);
		char note[32];

		if (!shown(f, all))
			continue;
		too_old_note(kd, f, note, sizeof(note));
		fprintf(out, "%-19s %-7s %-8s %-58s %s%s\n", f->name,
			kerndat_has(kd, id) ? "present" : "absent", need_names[f->need], f->what,
			kd->res[id].detail, note);
	}
	if (!kd_check_required(kd, missing, &nr)) {
		fprintf(out, "Dump and restore can work on this kernel.\n");
		return 0;
	}
	fprintf(out, "Dump and restore cannot work: required feature%s absent:", nr > 1 ? "s" : "");
	for (i = 0; i < nr; i++)
		fprintf(out, "%s %s", i ? "," : "", kd_feature(missing[i])->name);
	fprintf(out, "\n");
	return -ENOTSUP;
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

int check_print_json(FILE *out, const struct kerndat *kd, bool all)
{
	enum kd_feature missing[KD__MAX];
	unsigned int nr;
	bool first = true;
	int id;

	fputs("[", out);
	for (id = 0; id < KD__MAX; id++) {
		const struct kd_feature_desc *f = kd_feature(id);

		if (!shown(f, all))
			continue;
		fprintf(out, "%s\n  {\"name\": ", first ? "" : ",");
		first = false;
		json_str(out, f->name);
		fprintf(out, ", \"present\": %s, \"need\": \"%s\", \"min_kernel\": \"%u.%u\", ",
			kerndat_has(kd, id) ? "true" : "false", need_names[f->need], f->min.major,
			f->min.minor);
		fputs("\"used_for\": ", out);
		json_str(out, f->what);
		fputs(", \"detail\": ", out);
		json_str(out, kd->res[id].detail);
		fputs("}", out);
	}
	fputs("\n]\n", out);
	return kd_check_required(kd, missing, &nr);
}

const char *check_verdict(bool required, bool others)
{
	if (!required)
		return "Does not look good."; /* CRIU: a feature it cannot work without */
	if (!others)
		return "Looks good but some kernel features are missing\n"
		       "which, depending on your process tree, may cause\n"
		       "dump or restore failure.";
	return "Looks good.";
}

int cr_check(const struct cr_options *o)
{
	enum kd_feature missing[KD__MAX];
	struct kerndat kd;
	unsigned int nr, i;
	int err;

	if (o->check_feature) {
		err = check_feature(stdout, o->check_feature);
		if (fflush(stdout))
			return neg_errno();
		return err;
	}
	err = kerndat_probe(&kd);
	if (err)
		return err;
	if (o->json)
		check_print_json(stdout, &kd, o->check_all);
	else
		check_print_text(stdout, &kd, o->check_all);
	if (fflush(stdout))
		return neg_errno();
	err = kd_check_required(&kd, missing, &nr);
	if (err && o->json) {
		/* stdout stays pure JSON; the verdict goes to the log. */
		for (i = 0; i < nr; i++)
			pr_err("required feature %s absent: %s\n", kd_feature(missing[i])->name,
			       kd.res[missing[i]].detail);
	}
	if (o->json)
		return err;
	/* CRIU's verdict last (scripts grep it); --extra / --experimental (--all) first */
	if (!err && (o->check_extra || o->check_experimental))
		err = check_categories(stdout, &kd, o->check_extra, o->check_experimental);
	printf("%s\n", check_verdict(!kd_check_required(&kd, missing, &nr), !err));
	if (fflush(stdout))
		return neg_errno();
	return err;
}
