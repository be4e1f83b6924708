// SPDX-License-Identifier: GPL-2.0
/*
 * The list of images a dump wrote (InventoryEntry.images), and the checks
 * made with it (Documentation/image-format.md, "The list of images"):
 *
 * - at dump, img_close() adds every image it completed in the image
 *   directory to the dump's list (img_track_writes()): no kind can forget;
 * - at restore, every listed file must be there with its size and crc32c
 *   before anything is created (img_list_check()), and an image that is not
 *   listed is never read (img_track_reads()): files the dump did not write
 *   (logs, notes, a stray image of an older dump) are ignored;
 * - check-images, and the report of a page run the restorer refused, read
 *   page runs against their pagemap crc32c (img_verify_pagemap()).
 */
#define LOG_PREFIX "image: "
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "image.h"
#include "image-int.h"
#include "log.h"
#include "par.h"
#include "util.h"

#include "inventory.pb-c.h"
#include "pagemap.pb-c.h"

/* ---- the list ----------------------------------------------------------------------------- */

/* FNV-1a */
static size_t name_hash(const char *name)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 1099511628211ULL;
	return (size_t)h;
}

/* The slot of @name: the one holding it, or the free one where it would go. */
static size_t *name_slot(const struct img_list *l, const char *name)
{
	size_t mask = l->nr_slots - 1, i = name_hash(name) & mask;

	while (l->slots[i] && strcmp(l->files[l->slots[i] - 1].name, name))
		i = (i + 1) & mask;
	return &l->slots[i];
}

const struct img_file *img_list_find(const struct img_list *l, const char *name)
{
	size_t *slot;

	if (!l->nr_slots)
		return NULL;
	slot = name_slot(l, name);
	return *slot ? &l->files[*slot - 1] : NULL;
}

/* Room for one more file, and slots for at least twice as many. */
static int grow(struct img_list *l)
{
	size_t i, nr = l->nr_slots ? l->nr_slots : 64, *slots;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct img_file *f = reallocarray(l->files, cap, sizeof(*f));

		if (!f)
			return -ENOMEM;
		l->files = f;
		l->cap = cap;
	}
	while (nr < 2 * (l->n + 1))
		nr *= 2;
	if (nr == l->nr_slots)
		return 0;
	slots = calloc(nr, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	free(l->slots);
	l->slots = slots;
	l->nr_slots = nr;
	for (i = 0; i < l->n; i++)
		*name_slot(l, l->files[i].name) = i + 1;
	return 0;
}

int img_list_add(struct img_list *l, const char *name, uint64_t size, bool has_crc32c,
		 uint32_t crc32c)
{
	struct img_file *f = (struct img_file *)img_list_find(l, name);

	if (!f) {
		char *copy = strdup(name);

		if (!copy || grow(l)) {
			free(copy);
			return -ENOMEM;
		}
		f = &l->files[l->n++];
		f->name = copy;
		*name_slot(l, copy) = l->n;
	}
	f->size = size;
	f->has_crc32c = has_crc32c;
	f->crc32c = has_crc32c ? crc32c : 0;
	return 0;
}

void img_list_fini(struct img_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->files[i].name);
	free(l->files);
	free(l->slots);
	*l = (struct img_list){ 0 };
}

/* ---- tracking the image directory of a dump or a restore --------------------------------- */

enum {
	TRACK_OFF,
	TRACK_WRITES,
	TRACK_READS
};

static struct {
	pthread_mutex_t lock; /* image writers may close images from several threads */
	int mode;
	dev_t dev;
	ino_t ino;
	int fd; /* the fd it was started with: open until it stops */
	struct img_list *written;
	const struct img_list *readable;
} trk = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* The directory that @dirfd names (AT_FDCWD: the current one), whichever fd it is. */
static bool trk_same_dir(int dirfd)
{
	struct stat st;

	/* the dump's and the restore's own fd: no stat for each image they open */
	if (dirfd == trk.fd && dirfd != AT_FDCWD)
		return true;
	return !fstatat(dirfd, "", &st, AT_EMPTY_PATH) && st.st_dev == trk.dev &&
	       st.st_ino == trk.ino;
}

static int trk_start(int dirfd, int mode, struct img_list *w, const struct img_list *r)
{
	struct stat st;

	if (fstatat(dirfd, "", &st, AT_EMPTY_PATH)) {
		pr_perror("cannot stat the image directory");
		return neg_errno();
	}
	pthread_mutex_lock(&trk.lock);
	trk.dev = st.st_dev;
	trk.ino = st.st_ino;
	trk.fd = dirfd;
	trk.written = w;
	trk.readable = r;
	trk.mode = mode;
	pthread_mutex_unlock(&trk.lock);
	return 0;
}

int img_track_writes(int dirfd, struct img_list *l)
{
	return trk_start(dirfd, TRACK_WRITES, l, NULL);
}

int img_track_reads(int dirfd, const struct img_list *l)
{
	return trk_start(dirfd, TRACK_READS, NULL, l);
}

void img_track_stop(void)
{
	pthread_mutex_lock(&trk.lock);
	trk.mode = TRACK_OFF;
	trk.fd = -1;
	trk.written = NULL;
	trk.readable = NULL;
	pthread_mutex_unlock(&trk.lock);
}

bool img_track_is_written(int dirfd)
{
	return trk.mode == TRACK_WRITES && trk_same_dir(dirfd);
}

int img_track_note(const char *name, uint64_t size, bool has_crc32c, uint32_t crc32c)
{
	int ret = 0;

	pthread_mutex_lock(&trk.lock);
	if (trk.mode == TRACK_WRITES)
		ret = img_list_add(trk.written, name, size, has_crc32c, crc32c);
	pthread_mutex_unlock(&trk.lock);
	if (ret)
		pr_errno(ret, "%s: cannot add it to the list of images", name);
	return ret;
}

int img_track_may_read(int dirfd, const char *name, int mode)
{
	const char *inv = img_desc(CR_IMG_INVENTORY)->pattern;

	if (trk.mode != TRACK_READS || !strcmp(name, inv) || !trk_same_dir(dirfd) ||
	    img_list_find(trk.readable, name))
		return 0;
	if (mode & IMG_OPTIONAL)
		pr_debug("%s is not in the inventory's list of images: the dump did not write it, "
			 "not read\n",
			 name);
	else
		pr_err("image %s is needed, but the dump did not write it (it is not in the "
		       "inventory's list of images)\n",
		       name);
	return -ENOENT;
}

/* ---- checking a directory against the list ----------------------------------------------- */

/* A file name of the image directory itself: no path, not the inventory. */
static bool plain_name(const char *name)
{
	return *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       strcmp(name, img_desc(CR_IMG_INVENTORY)->pattern);
}

#define CHECK_BUF (256u << 10)

int img_file_crc32c(int fd, const char *name, uint64_t size, uint32_t *ret)
{
	/* a record image is a few KiB: no 256 KiB mapping made and dropped for each */
	_cleanup_free_ char *buf = malloc(min(size, (uint64_t)CHECK_BUF) ?: 1);
	uint64_t off = 0;
	uint32_t crc = 0;

	if (!buf)
		return -ENOMEM;
	while (off < size) {
		ssize_t n = pread(fd, buf, min(size - off, (uint64_t)CHECK_BUF), (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = ENODATA;
			pr_perror("image %s: read at offset %llu", name, (unsigned long long)off);
			return neg_errno();
		}
		crc = crc32c(crc, buf, (size_t)n);
		off += (uint64_t)n;
	}
	*ret = crc;
	return 0;
}

int img_list_check_file(int dirfd, const struct img_file *f)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	uint32_t crc;
	int ret;

	if (!plain_name(f->name)) {
		pr_err("the inventory lists an image named \"%s\": not a file of the image "
		       "directory\n",
		       f->name);
		return -EINVAL;
	}
	fd = openat(dirfd, f->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		pr_err("image %s is missing\n", f->name);
		return -ENOENT;
	}
	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("image %s: open", f->name);
		return neg_errno();
	}
	if (!S_ISREG(st.st_mode)) {
		pr_err("image %s is not a regular file\n", f->name);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size != f->size) {
		pr_err("image %s is %llu bytes, the dump wrote %llu\n", f->name,
		       (unsigned long long)st.st_size, (unsigned long long)f->size);
		return (uint64_t)st.st_size < f->size ? -ENODATA : -EBADMSG;
	}
	if (!f->has_crc32c)
		return 0;
	ret = img_file_crc32c(fd, f->name, f->size, &crc);
	if (ret)
		return ret;
	if (crc != f->crc32c) {
		pr_err("image %s does not match its crc32c (%#x, the dump wrote %#x)\n", f->name,
		       crc, f->crc32c);
		return -EBADMSG;
	}
	return 0;
}

struct list_check {
	int dirfd;
	const struct img_list *l;
};

static int check_at(void *arg, unsigned int i)
{
	const struct list_check *c = arg;

	return img_list_check_file(c->dirfd, &c->l->files[i]);
}

/* Below this many files, one thread: a tree's dump has several per task. */
#define CHECK_PAR_MIN 64

int img_list_check(int dirfd, const struct img_list *l)
{
	struct list_check c = { dirfd, l };
	_cleanup_free_ int *errs = NULL;
	_cleanup_free_ bool *ran = NULL;
	int ret = 0;

	/* side by side on the CPUs (each one an open, a stat, a read for the crc32c) */
	if (l->n >= CHECK_PAR_MIN && l->n <= UINT32_MAX) {
		errs = calloc(l->n, sizeof(*errs));
		ran = calloc(l->n, sizeof(*ran));
		if (errs && ran && !par_for((unsigned int)l->n, check_at, &c, errs, ran))
			return 0;
	}
	/* every bad file is named, not only the first (par_for() stops at one) */
	for (size_t i = 0; i < l->n; i++) {
		int r = errs && ran && ran[i] ? errs[i] : img_list_check_file(dirfd, &l->files[i]);

		ret = ret ?: r;
	}
	return ret;
}

/* ---- the list in the inventory ------------------------------------------------------------ */

int img_list_from_inventory(const InventoryEntry *inv, struct img_list *l)
{
	for (size_t i = 0; i < inv->n_images; i++) {
		const ImageFileEntry *e = inv->images[i];
		int ret;

		if (!plain_name(e->name)) {
			pr_err("the inventory lists an image named \"%s\": not a file of the image "
			       "directory\n",
			       e->name);
			img_list_fini(l);
			return -EINVAL;
		}
		ret = img_list_add(l, e->name, e->size, e->has_crc32c, e->crc32c);
		if (ret) {
			img_list_fini(l);
			return ret;
		}
	}
	return 0;
}

int img_list_to_inventory(const struct img_list *l, InventoryEntry *inv)
{
	ImageFileEntry *e = calloc(l->n ?: 1, sizeof(*e));
	ImageFileEntry **p = calloc(l->n ?: 1, sizeof(*p));

	if (!e || !p) {
		free(e);
		free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++) {
		image_file_entry__init(&e[i]);
		e[i].name = l->files[i].name;
		e[i].size = l->files[i].size;
		e[i].has_crc32c = l->files[i].has_crc32c;
		e[i].crc32c = l->files[i].crc32c;
		p[i] = &e[i];
	}
	inv->n_images = l->n;
	inv->images = p;
	return 0;
}

void img_list_inventory_free(InventoryEntry *inv)
{
	if (inv->images)
		free(inv->images[0]);
	free(inv->images);
	inv->images = NULL;
	inv->n_images = 0;
}

/* ---- page runs against their pagemap -------------------------------------------------------- */

static int verify_runs(struct cr_img *pages, const char *name, PagemapEntry *const *pe, size_t n,
		       uint64_t *nr_runs, uint64_t *nr_lazy)
{
	uint64_t off = 0, size = pages ? img_raw_size(pages) : 0;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t len = (uint64_t)pe[i]->nr_pages * PAGE_SIZE;
		int r;

		if (pe[i]->flags & PAGEMAP_FLAG__PE_DEDUPED) {
			off += len; /* a hole punched by dedup: no data to check */
			continue;
		}
		if (!(pe[i]->flags & PAGEMAP_FLAG__PE_PRESENT))
			continue;
		if (!pe[i]->has_crc32c && nr_lazy) {
			off += len; /* a hole a lazy dump fills from its tree: nothing here */
			(*nr_lazy)++;
			continue;
		}
		if (!pe[i]->has_crc32c) {
			pr_err("%s: the run at %#llx (%u pages) has no crc32c\n", name,
			       (unsigned long long)pe[i]->vaddr, pe[i]->nr_pages);
			r = -EBADMSG;
		} else {
			r = img_verify_run(pages, off, len, pe[i]->crc32c);
		}
		ret = ret ?: r;
		/* past the end or unreadable: the offsets of the next runs mean nothing */
		if (r && r != -EBADMSG)
			return ret;
		off += len;
		(*nr_runs)++;
	}
	if (!ret && off != size) {
		pr_err("%s holds %llu bytes of pages, the runs of %s cover %llu\n", img_name(pages),
		       (unsigned long long)size, name, (unsigned long long)off);
		ret = -EBADMSG;
	}
	return ret;
}

int img_verify_pagemap(int dirfd, const char *name, uint64_t *nr_runs, uint64_t *nr_lazy)
{
	struct cr_img *img = img_open_name(dirfd, name, NULL, IMG_READ), *pages = NULL;
	ProtobufCMessage **recs = NULL;
	size_t n = 0, i;
	bool present = false;
	int ret;

	if (!img)
		return -errno;
	if (img_kind(img)->kind != CR_IMG_PAGEMAP && img_kind(img)->kind != CR_IMG_SHMEM_PAGEMAP) {
		pr_err("%s is a %s image, not a pagemap\n", name, img_kind(img)->name);
		img_close(img);
		return -EINVAL;
	}
	ret = img_read_all(img, &recs, &n);
	img_close(img);
	if (ret)
		return ret;
	if (!n) {
		pr_err("%s: no PagemapHead\n", name);
		return -EBADMSG;
	}
	for (i = 1; i < n; i++)
		present |= ((PagemapEntry *)recs[i])->flags &
			   (PAGEMAP_FLAG__PE_PRESENT | PAGEMAP_FLAG__PE_DEDUPED);
	/* without a run to read, no pages image is needed: one there must be empty */
	pages = img_open(dirfd, CR_IMG_PAGES, ((PagemapHead *)recs[0])->pages_id,
			 IMG_READ | (present ? 0 : IMG_OPTIONAL));
	if (!pages && (present || errno != ENOENT))
		ret = -errno;
	else
		ret = verify_runs(pages, name, (PagemapEntry *const *)recs + 1, n - 1, nr_runs,
				  nr_lazy);
	img_close(pages);
	img_free_records(recs, n);
	return ret;
}
