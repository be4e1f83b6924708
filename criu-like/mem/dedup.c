// SPDX-License-Identifier: GPL-2.0
/*
 * `dedup -D DIR` and --auto-dedup (Documentation/memory.md, section 3,
 * "Dedup"): what a restore of DIR never reads from its parents (pages that
 * DIR, or a nearer parent, holds itself) is punched out of the parents'
 * pages images (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE). Each pagemap
 * entry carries one crc32c over its whole run and a restore checks whole
 * entries, so a parent's entries are split at the punched edges first: the
 * kept parts get crc32c of their own, the punched parts are flagged
 * PE_DEDUPED (still counted in the data offsets). The parent's inventory gets
 * the new sizes and crc32c of its pagemaps and `deduped`, which a restore of
 * that directory refuses.
 *
 * Order on disk, per parent: the new pagemaps (written aside, synced,
 * renamed over), then the inventory (the same), then the holes. Stopped
 * anywhere, the chain still restores from its newest image, and the parent
 * is refused (its list of images no longer matches, or it says deduped).
 */
#define LOG_PREFIX "dedup: "

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cr.h"
#include "crc32c.h"
#include "dedup.h"
#include "image.h"
#include "log.h"
#include "util.h"

#include "inventory.pb-c.h"

#define DEDUP_CHAIN_MAX 64 /* as the restore's */
#define DEDUP_BUF (1UL << 20)

/* ---- pure planning ---------------------------------------------------------------------------- */

static uint64_t pe_end(const PagemapEntry *e)
{
	return e->vaddr + (uint64_t)e->nr_pages * PAGE_SIZE;
}

static int range_push(struct dedup_ranges *s, uint64_t start, uint64_t end)
{
	if (start >= end)
		return 0;
	if (s->n && s->r[s->n - 1].end == start) {
		s->r[s->n - 1].end = end;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct dedup_range *n = reallocarray(s->r, cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->r = n;
		s->cap = cap;
	}
	s->r[s->n++] = (struct dedup_range){ start, end };
	return 0;
}

/*
 * [@a, @b) at level @k. @used: a level above already gives the restore these
 * pages (its data, or the mapping's own contents), so every PE_PRESENT part
 * from here down is superseded. Otherwise the restore's lookup goes on here.
 */
static int walk(pid_t pid, const struct rst_chain_level *lv, unsigned int nlv, unsigned int k,
		uint64_t a, uint64_t b, bool used, struct dedup_ranges *out)
{
	const struct rst_chain_level *l;
	size_t lo = 0, hi;
	uint64_t pos = a;
	int err = 0;

	if (k >= nlv)
		return 0;
	l = &lv[k];
	for (hi = l->n; lo < hi;) {
		size_t mid = (lo + hi) / 2;

		if (pe_end(l->pe[mid]) <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; pos < b && !err;) {
		const PagemapEntry *e = i < l->n ? l->pe[i] : NULL;
		uint64_t stop;

		if (!e || e->vaddr > pos) {
			/* not populated at level k: the restore uses the mapping's contents */
			stop = e ? min(b, e->vaddr) : b;
			err = walk(pid, lv, nlv, k + 1, pos, stop, true, out);
			pos = stop;
			continue;
		}
		stop = min(b, pe_end(e));
		if (e->flags & PAGEMAP_FLAG__PE_PRESENT) {
			if (used && k)
				err = range_push(&out[k], pos, stop);
			if (!err)
				err = walk(pid, lv, nlv, k + 1, pos, stop, true, out);
		} else if (e->flags & PAGEMAP_FLAG__PE_PARENT) {
			err = walk(pid, lv, nlv, k + 1, pos, stop, used, out);
		} else if (used) {
			/* punched already (or lazy): what is below is superseded all the same */
			err = walk(pid, lv, nlv, k + 1, pos, stop, true, out);
		} else {
			/* this image does not restore there any more: nothing below is touched */
			pr_debug("pid %d: pages %lx-%lx of %s hold no data (flags %#x)\n", pid, pos,
				 stop, l->name, e->flags);
		}
		pos = stop;
		i++;
	}
	return err;
}

int dedup_superseded(pid_t pid, const struct rst_chain_level *lv, unsigned int nlv,
		     struct dedup_ranges *out)
{
	int err = 0;

	if (!nlv)
		return 0;
	for (size_t i = 0; i < lv[0].n && !err; i++)
		err = walk(pid, lv, nlv, 0, lv[0].pe[i]->vaddr, pe_end(lv[0].pe[i]), false, out);
	return err;
}

static int piece_push(struct dedup_piece **v, size_t *n, size_t *cap, struct dedup_piece p)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct dedup_piece *nv = reallocarray(*v, c, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = p;
	return 0;
}

int dedup_split(PagemapEntry *const *pe, size_t n, const struct dedup_ranges *punch,
		struct dedup_piece **out, size_t *nout)
{
	struct dedup_piece *v = NULL;
	size_t nv = 0, cap = 0, j = 0;
	uint64_t off = 0;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		const PagemapEntry *e = pe[i];
		uint64_t pos = e->vaddr, end = pe_end(e);
		bool data = e->flags & (PAGEMAP_FLAG__PE_PRESENT | PAGEMAP_FLAG__PE_DEDUPED);
		bool split = false;
		size_t first = nv;

		while (j < punch->n && punch->r[j].end <= pos)
			j++;
		if (!(e->flags & PAGEMAP_FLAG__PE_PRESENT) || j == punch->n ||
		    punch->r[j].start >= end) {
			err = piece_push(&v, &nv, &cap,
					 (struct dedup_piece){ .vaddr = e->vaddr,
							       .nr_pages = e->nr_pages,
							       .flags = e->flags,
							       .entry = i,
							       .off = off });
			if (data)
				off += (uint64_t)e->nr_pages * PAGE_SIZE;
			continue;
		}
		for (size_t r = j; pos < end && !err;) {
			bool in = r < punch->n && punch->r[r].start <= pos;
			uint64_t stop = in	       ? min(end, punch->r[r].end)
					: r < punch->n ? min(end, punch->r[r].start)
						       : end;

			err = piece_push(&v, &nv, &cap,
					 (struct dedup_piece){
						 .vaddr = pos,
						 .nr_pages = (uint32_t)((stop - pos) / PAGE_SIZE),
						 .flags = in ? PAGEMAP_FLAG__PE_DEDUPED
							     : PAGEMAP_FLAG__PE_PRESENT,
						 .entry = i,
						 .off = off + (pos - e->vaddr),
						 .punch = in });
			split |= !in;
			if (in && stop == punch->r[r].end)
				r++;
			pos = stop;
		}
		/* a kept part next to a punched one needs its own crc32c */
		for (size_t p = first; p < nv && split; p++)
			v[p].split = !v[p].punch && nv - first > 1;
		off += (uint64_t)e->nr_pages * PAGE_SIZE;
	}
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*nout = nv;
	return 0;
}

/* ---- the directories -------------------------------------------------------------------------- */

struct level {
	int dirfd;
	char name[PATH_MAX];
	struct img_list upd; /* pagemaps rewritten: their new size and crc32c */
	size_t nr_punch;
	struct punch {
		uint32_t pages_id;
		uint64_t off, len;
	} * punch;
	uint64_t pages; /* punched */
};

struct chain {
	unsigned int n;
	struct level lv[DEDUP_CHAIN_MAX];
};

static void chain_close(struct chain *c)
{
	for (unsigned int i = 0; i < c->n; i++) {
		if (i && c->lv[i].dirfd >= 0)
			close(c->lv[i].dirfd);
		img_list_fini(&c->lv[i].upd);
		free(c->lv[i].punch);
	}
}

static int read_inventory(int dirfd, const char *name, InventoryEntry **inv)
{
	int err = img_read_one(dirfd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)inv);

	if (!err && !(*inv)->completed)
		err = -EINVAL;
	if (err)
		pr_err("%s is not a complete (pre-)dump: nothing deduped\n", name);
	/* its holes are no data to compare: neither side of a dedup */
	if (!err)
		err = img_lazy_refuse("dedup", name, *inv, "nothing deduped");
	if (err) {
		if (*inv)
			protobuf_c_message_free_unpacked(&(*inv)->base, NULL);
		*inv = NULL;
	}
	return err;
}

/* DIR, DIR/parent, ... as long as there is a parent link. */
static int chain_open(struct chain *c, int dirfd, const char *dir)
{
	c->lv[0].dirfd = dirfd;
	snprintf(c->lv[0].name, sizeof(c->lv[0].name), "%s", dir);
	c->n = 1;
	for (;;) {
		struct level *p = &c->lv[c->n - 1], *l = &c->lv[c->n];
		InventoryEntry *inv = NULL;
		size_t len;
		int fd, err;

		fd = openat(p->dirfd, "parent", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			return 0;
		if (c->n == DEDUP_CHAIN_MAX) {
			if (fd >= 0)
				close(fd);
			pr_err("%s: chain of more than %d images\n", dir, DEDUP_CHAIN_MAX);
			return -ELOOP;
		}
		l->dirfd = fd;
		len = strnlen(p->name, sizeof(p->name) - sizeof("/parent"));
		memcpy(l->name, p->name, len);
		memcpy(l->name + len, "/parent", sizeof("/parent"));
		c->n++;
		if (fd < 0) {
			err = neg_errno();
			pr_perror("%s", l->name);
			return err;
		}
		err = read_inventory(fd, l->name, &inv);
		if (err)
			return err;
		protobuf_c_message_free_unpacked(&inv->base, NULL);
	}
}

/* Read entry @e's data once: check its crc32c, compute those of its kept split pieces. */
static int crc_pieces(struct cr_img *pages, const char *dir, const PagemapEntry *e, uint64_t off,
		      struct dedup_piece *pc, size_t np, uint32_t *crcs, uint8_t *buf)
{
	uint64_t len = (uint64_t)e->nr_pages * PAGE_SIZE;
	uint32_t whole = 0;
	size_t p = 0;
	int err;

	for (uint64_t done = 0; done < len;) {
		size_t n = min(len - done, (uint64_t)DEDUP_BUF);

		err = img_read_raw(pages, off + done, buf, n);
		if (err)
			return err;
		whole = crc32c(whole, buf, n);
		/* the pieces of this entry, in order, cover it */
		for (size_t at = 0; at < n;) {
			uint64_t vpos = e->vaddr + done + at;
			uint64_t pend;
			size_t take;

			while (p < np && pc[p].vaddr + (uint64_t)pc[p].nr_pages * PAGE_SIZE <= vpos)
				p++;
			if (p == np)
				break;
			pend = pc[p].vaddr + (uint64_t)pc[p].nr_pages * PAGE_SIZE;
			take = (size_t)min(pend - vpos, (uint64_t)(n - at));
			if (pc[p].split)
				crcs[p] = crc32c(crcs[p], buf + at, take);
			at += take;
		}
		done += n;
	}
	if (e->has_crc32c && whole != e->crc32c) {
		pr_err("pages %lx +%u in %s are corrupt: that image is not deduped\n", e->vaddr,
		       e->nr_pages, dir);
		return -EBADMSG;
	}
	return 0;
}

/* Write @name aside, sync it, rename it over: a reader sees the old file or the new one. */
static int write_aside(int dirfd, const char *name, enum cr_img_kind kind,
		       ProtobufCMessage *const *recs, size_t n, struct img_list *upd)
{
	char tmp[PATH_MAX];
	struct cr_img *img;
	struct stat st;
	uint32_t crc = 0;
	int err = 0, cerr, fd;

	snprintf(tmp, sizeof(tmp), "%s.dedup", name);
	img = img_open_name(dirfd, tmp, img_desc(kind), IMG_WRITE);
	if (!img)
		return -errno;
	for (size_t i = 0; i < n && !err; i++)
		err = img_write_record(img, recs[i]);
	cerr = img_close(img);
	if (!err)
		err = cerr;
	fd = err ? -1 : openat(dirfd, tmp, O_RDONLY | O_CLOEXEC);
	if (!err && (fd < 0 || fsync(fd) || fstat(fd, &st))) {
		err = neg_errno();
		pr_perror("%s", tmp);
	}
	if (!err && upd)
		err = img_file_crc32c(fd, tmp, (uint64_t)st.st_size, &crc);
	if (fd >= 0)
		close(fd);
	if (!err && upd)
		err = img_list_add(upd, name, (uint64_t)st.st_size, true, crc);
	if (!err && renameat(dirfd, tmp, dirfd, name)) {
		err = neg_errno();
		pr_perror("cannot rename %s to %s", tmp, name);
	}
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

static int note_punch(struct level *l, uint32_t pages_id, uint64_t off, uint64_t len)
{
	struct punch *n = reallocarray(l->punch, l->nr_punch + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	l->punch = n;
	l->punch[l->nr_punch++] = (struct punch){ pages_id, off, len };
	l->pages += len / PAGE_SIZE;
	return 0;
}

/* The new pagemap of level @l from @pc, and what to punch. */
static int rewrite_pagemap(struct level *l, pid_t pid, PagemapHead *head, PagemapEntry *const *pe,
			   struct dedup_piece *pc, size_t np, uint8_t *buf)
{
	_cleanup_free_ PagemapEntry *ents = calloc(np + 1, sizeof(*ents));
	_cleanup_free_ ProtobufCMessage **recs = calloc(np + 2, sizeof(*recs));
	_cleanup_free_ uint32_t *crcs = calloc(np + 1, sizeof(*crcs));
	struct cr_img *pages = NULL;
	char name[64];
	int err = 0;

	if (!ents || !recs || !crcs)
		return -ENOMEM;
	for (size_t i = 0, first = 0; i <= np && !err; i++) {
		/* pieces [first, i) come from one entry: read it once if one of them is split */
		if (i < np && pc[i].entry == pc[first].entry)
			continue;
		for (size_t p = first; p < i; p++) {
			if (!pc[p].split)
				continue;
			if (!pages)
				pages = img_open(l->dirfd, CR_IMG_PAGES, head->pages_id, IMG_READ);
			if (!pages) {
				err = -errno;
				break;
			}
			err = crc_pieces(pages, l->name, pe[pc[first].entry], pc[first].off,
					 pc + first, i - first, crcs + first, buf);
			break;
		}
		first = i;
	}
	if (pages)
		img_close(pages);
	if (err)
		return err;
	recs[0] = &head->base;
	for (size_t i = 0; i < np; i++) {
		const PagemapEntry *o = pe[pc[i].entry];

		pagemap_entry__init(&ents[i]);
		ents[i].vaddr = pc[i].vaddr;
		ents[i].nr_pages = pc[i].nr_pages;
		ents[i].flags = pc[i].flags;
		if (pc[i].split) {
			ents[i].has_crc32c = true;
			ents[i].crc32c = crcs[i];
		} else if (!pc[i].punch) {
			ents[i].has_crc32c = o->has_crc32c;
			ents[i].crc32c = o->crc32c;
		}
		recs[i + 1] = &ents[i].base;
	}
	err = img_file_name(CR_IMG_PAGEMAP, (uint32_t)pid, name, sizeof(name));
	if (!err)
		err = write_aside(l->dirfd, name, CR_IMG_PAGEMAP, recs, np + 1, &l->upd);
	for (size_t i = 0; i < np && !err; i++)
		if (pc[i].punch)
			err = note_punch(l, head->pages_id, pc[i].off,
					 (uint64_t)pc[i].nr_pages * PAGE_SIZE);
	return err;
}

struct task_chain {
	unsigned int n;
	struct rst_chain_level lv[DEDUP_CHAIN_MAX];
	ProtobufCMessage **recs[DEDUP_CHAIN_MAX];
	size_t nrecs[DEDUP_CHAIN_MAX];
	struct dedup_ranges out[DEDUP_CHAIN_MAX];
};

static void task_chain_fini(struct task_chain *t)
{
	for (unsigned int i = 0; i < t->n; i++) {
		img_free_records(t->recs[i], t->nrecs[i]);
		free(t->out[i].r);
	}
}

static int dedup_task_levels(struct chain *c, pid_t pid, struct task_chain *t, uint8_t *buf)
{
	int err = 0;

	/* the levels that have this task's pagemap, from the newest on */
	for (t->n = 0; t->n < c->n; t->n++) {
		struct level *l = &c->lv[t->n];
		struct cr_img *img = img_open(l->dirfd, CR_IMG_PAGEMAP, (uint32_t)pid,
					      IMG_READ | IMG_OPTIONAL);

		if (!img && errno == ENOENT)
			break;
		if (!img)
			return -errno;
		err = img_read_all(img, &t->recs[t->n], &t->nrecs[t->n]);
		img_close(img);
		if (!err && !t->nrecs[t->n])
			err = -EINVAL;
		if (err) {
			pr_err("pid %d: cannot read the pagemap of %s\n", pid, l->name);
			t->n++;
			return err;
		}
		t->lv[t->n] = (struct rst_chain_level){ .name = l->name,
							.pe = (PagemapEntry **)t->recs[t->n] + 1,
							.n = t->nrecs[t->n] - 1 };
	}
	err = dedup_superseded(pid, t->lv, t->n, t->out);
	for (unsigned int k = 1; k < t->n && !err; k++) {
		_cleanup_free_ struct dedup_piece *pc = NULL;
		size_t np = 0;
		bool any = false;

		if (!t->out[k].n)
			continue;
		err = dedup_split(t->lv[k].pe, t->lv[k].n, &t->out[k], &pc, &np);
		for (size_t i = 0; i < np && !err; i++)
			any |= pc[i].punch;
		if (!err && any)
			err = rewrite_pagemap(&c->lv[k], pid, (PagemapHead *)t->recs[k][0],
					      t->lv[k].pe, pc, np, buf);
	}
	return err;
}

static int dedup_task(struct chain *c, pid_t pid, uint8_t *buf)
{
	struct task_chain *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	err = dedup_task_levels(c, pid, t, buf);
	task_chain_fini(t);
	free(t);
	return err;
}

/* The parent's inventory: the new sizes and crc32c of its pagemaps, and deduped. */
static int update_inventory(struct level *l)
{
	InventoryEntry *inv = NULL;
	char name[64];
	int err;

	err = read_inventory(l->dirfd, l->name, &inv);
	if (err)
		return err;
	for (size_t i = 0; i < l->upd.n; i++)
		for (size_t j = 0; j < inv->n_images; j++) {
			ImageFileEntry *f = inv->images[j];

			if (strcmp(f->name, l->upd.files[i].name))
				continue;
			f->size = l->upd.files[i].size;
			f->has_crc32c = true;
			f->crc32c = l->upd.files[i].crc32c;
		}
	inv->has_deduped = true;
	inv->deduped = true;
	err = img_file_name(CR_IMG_INVENTORY, 0, name, sizeof(name));
	if (!err)
		err = write_aside(l->dirfd, name, CR_IMG_INVENTORY, (ProtobufCMessage *const *)&inv,
				  1, NULL);
	protobuf_c_message_free_unpacked(&inv->base, NULL);
	if (err)
		pr_errno(err, "%s: cannot update its inventory", l->name);
	return err;
}

static int punch_level(struct level *l)
{
	int fd = -1, err = 0;
	uint32_t open_id = 0;

	for (size_t i = 0; i < l->nr_punch && !err; i++) {
		const struct punch *p = &l->punch[i];
		char name[64];

		if (fd < 0 || p->pages_id != open_id) {
			if (fd >= 0)
				close(fd);
			err = img_file_name(CR_IMG_PAGES, p->pages_id, name, sizeof(name));
			fd = err ? -1 : openat(l->dirfd, name, O_RDWR | O_CLOEXEC);
			if (!err && fd < 0) {
				err = neg_errno();
				pr_perror("%s/%s", l->name, name);
				break;
			}
			open_id = p->pages_id;
		}
		if (!err && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)(IMG_RAW_DATA_OFF + p->off), (off_t)p->len)) {
			err = neg_errno();
			pr_perror("%s: punching pages-%u.img at data offset %lu", l->name,
				  p->pages_id, p->off);
		}
	}
	if (fd >= 0)
		close(fd);
	return err;
}

/* "pagemap-PID.img" (not the shmem ones): PID, else 0. */
static pid_t pagemap_pid(const char *name)
{
	unsigned int pid;
	int end = 0;

	if (sscanf(name, "pagemap-%u.img%n", &pid, &end) != 1 || name[end] || !pid ||
	    pid > 0x3fffffff)
		return 0;
	return (pid_t)pid;
}

static int dedup_chain(struct chain *c, const InventoryEntry *inv, const char *dir)
{
	_cleanup_free_ uint8_t *buf = malloc(DEDUP_BUF);
	uint64_t total = 0;
	unsigned int nr = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < inv->n_images && !err; i++) {
		pid_t pid = pagemap_pid(inv->images[i]->name);

		if (pid)
			err = dedup_task(c, pid, buf);
	}
	for (unsigned int k = 1; k < c->n && !err; k++)
		if (c->lv[k].upd.n)
			err = update_inventory(&c->lv[k]);
	for (unsigned int k = 1; k < c->n && !err; k++) {
		if (!c->lv[k].nr_punch)
			continue;
		err = punch_level(&c->lv[k]);
		pr_info("%lu pages punched out of %s\n", c->lv[k].pages, c->lv[k].name);
		total += c->lv[k].pages;
		nr++;
	}
	if (!err)
		pr_info("%s: %lu pages superseded by it punched out of %u of its %u parents\n", dir,
			total, nr, c->n - 1);
	return err;
}

int dedup_dir(const char *dir)
{
	InventoryEntry *inv = NULL;
	struct chain *c;
	int dirfd, err;

	dirfd = img_dir_open(dir, false);
	if (dirfd < 0)
		return dirfd;
	c = calloc(1, sizeof(*c));
	err = c ? read_inventory(dirfd, dir, &inv) : -ENOMEM;
	if (!err)
		err = chain_open(c, dirfd, dir);
	if (!err && c->n == 1)
		pr_info("%s has no parent image: nothing to dedup\n", dir);
	else if (!err)
		err = dedup_chain(c, inv, dir);
	if (err)
		pr_errno(err, "dedup of %s failed", dir);
	if (c)
		chain_close(c);
	free(c);
	if (inv)
		protobuf_c_message_free_unpacked(&inv->base, NULL);
	close(dirfd);
	return err;
}

int cr_dedup(const struct cr_options *o)
{
	return dedup_dir(o->images_dir);
}
