/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_IMAGE_H
#define CRIU_LIKE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "image-desc.h"

/*
 * Image files (Documentation/image-format.md). Record images: a 16-byte
 * header, length-prefixed protobuf records each with a crc32c, a trailer with
 * the record count and the crc32c of the whole file. Raw images (pages,
 * ghost): a header padded to IMG_RAW_DATA_OFF, then the data.
 *
 * Every function returns 0 or -errno (pointer functions NULL with errno) and
 * logs one error naming the file, and for a bad image the byte offset.
 */

#define IMG_FORMAT_VERSION 1
#define IMG_RAW_DATA_OFF 4096
/* No record is larger: a corrupt length never makes a larger allocation. */
#define IMG_RECORD_MAX (64u << 20)

struct cr_img;

/*
 * Mode of img_open(): IMG_READ or IMG_WRITE, plus IMG_OPTIONAL (no error
 * logged on ENOENT) or, for writing, IMG_KEEP (an existing empty file, not
 * truncated: the blocks it has beyond its end are kept to be written into).
 */
enum {
	IMG_READ = 0,
	IMG_WRITE = 1,
	IMG_OPTIONAL = 2,
	IMG_KEEP = 4,
};

/* Open (with @create, make it first) an image directory. An O_DIRECTORY fd, or -errno. */
int img_dir_open(const char *path, bool create);
/* Flush every image written to the file system of @dirfd (syncfs). */
int img_dir_sync(int dirfd);

/* Open the image of @kind and @id (ignored for kinds without "%u") in @dirfd. */
struct cr_img *img_open(int dirfd, enum cr_img_kind kind, uint32_t id, int mode);
/*
 * Open the file @name (relative to @dirfd, or any path with AT_FDCWD). For
 * IMG_WRITE, @d says its kind; for IMG_READ, @d may be NULL (any kind, told by
 * the magic) or the expected kind.
 */
struct cr_img *img_open_name(int dirfd, const char *name, const struct cr_img_desc *d, int mode);
/*
 * Close; NULL is accepted. Written images are completed (trailer or raw header)
 * and flushed, and the first error of the image's life is returned: check it.
 */
int img_close(struct cr_img *img);

const struct cr_img_desc *img_kind(const struct cr_img *img);
const char *img_name(const struct cr_img *img);
uint32_t img_version(const struct cr_img *img);
uint32_t img_flags(const struct cr_img *img);
/* Record images: the byte offset of the next record to read or write (for messages). */
uint64_t img_offset(const struct cr_img *img);

/* Append one record; its type must be the one the kind has at this position (-EINVAL). */
int img_write_record(struct cr_img *img, const ProtobufCMessage *msg);
/*
 * Read the next record into *@ret (free with protobuf_c_message_free_unpacked).
 * 1 with a record; 0 at the end, once the trailer has been checked; -errno.
 * @expect, if not NULL, must be the descriptor the kind has at this position.
 */
int img_read_record(struct cr_img *img, const ProtobufCMessageDescriptor *expect,
		    ProtobufCMessage **ret);
/* Read every (remaining) record and check the trailer. Free with img_free_records(). */
int img_read_all(struct cr_img *img, ProtobufCMessage ***ret, size_t *ret_n);
void img_free_records(ProtobufCMessage **recs, size_t n);

/* Images of exactly one record (inventory, core, mm, creds, fs, stats). */
int img_write_one(int dirfd, enum cr_img_kind kind, uint32_t id, const ProtobufCMessage *msg);
int img_read_one(int dirfd, enum cr_img_kind kind, uint32_t id, ProtobufCMessage **ret);

/*
 * Raw images. Writing: the fd's position is at the end of the data, so data
 * can also be spliced into img_raw_fd() directly; img_close() then records
 * the size in the header. Reading: offsets are relative to the data, which
 * starts at file offset IMG_RAW_DATA_OFF (page aligned, for preadv into place).
 */
int img_raw_fd(const struct cr_img *img);
uint64_t img_raw_size(const struct cr_img *img);
int img_write_raw(struct cr_img *img, const void *buf, size_t len);
int img_read_raw(struct cr_img *img, uint64_t off, void *buf, size_t len);
/* Check a page run at data offset @off against the crc32c of its pagemap entry (-EBADMSG). */
int img_check_run(const struct cr_img *img, uint64_t off, const void *buf, size_t len,
		  uint32_t crc);
/* img_read_raw() then img_check_run(). */
int img_read_run(struct cr_img *img, uint64_t off, void *buf, size_t len, uint32_t crc);
/*
 * Read the page run at data offset @off, @len bytes, in pieces, and check it
 * against @crc as img_check_run() does: for runs of any size (check-images,
 * the report of a run the restorer refused).
 */
int img_verify_run(struct cr_img *img, uint64_t off, uint64_t len, uint32_t crc);

/*
 * The list of the images a dump wrote, kept in the inventory
 * (Documentation/image-format.md, "The list of images"): name, size, and the
 * crc32c of the whole file for record images (raw images: size only, their
 * data is checked by the pagemap's per-run crc32c or the ghost crc32c).
 */
struct img_file {
	char *name;
	uint64_t size;
	bool has_crc32c;
	uint32_t crc32c;
};

struct img_list {
	size_t n;
	struct img_file *files;
	/*
	 * Private: files[] has room for cap; slots[0..nr_slots) (a power of two,
	 * at least twice n) hold index + 1 of each name by hash, 0 when free: a
	 * tree of N tasks writes and reads some 5 N images, each looked up by
	 * name, which a scan of the list made quadratic.
	 */
	size_t cap, nr_slots;
	size_t *slots;
};

/* Add @name, or replace the entry of that name. 0 or -ENOMEM. */
int img_list_add(struct img_list *l, const char *name, uint64_t size, bool has_crc32c,
		 uint32_t crc32c);
const struct img_file *img_list_find(const struct img_list *l, const char *name);
void img_list_fini(struct img_list *l);

/*
 * Dump: from now on every image completed without error in the directory of
 * @dirfd (whichever fd names it), but inventory.img, is added to @l, which
 * must live until img_track_stop().
 */
int img_track_writes(int dirfd, struct img_list *l);
/*
 * Restore: from now on an image of the directory of @dirfd that is not in @l
 * is not opened for reading: -ENOENT, logged as an error unless IMG_OPTIONAL
 * (the dump did not write it: a stray file is as good as absent).
 * inventory.img is always readable. @l must live until img_track_stop().
 */
int img_track_reads(int dirfd, const struct img_list *l);
void img_track_stop(void);

/*
 * Every file of @l in @dirfd: there, of its size, and of its crc32c where it
 * has one. Each bad file is logged ("image X is missing", "image X is N
 * bytes, the dump wrote M", "image X does not match its crc32c"); the first
 * error is returned: -ENOENT, -ENODATA (shorter), -EBADMSG (longer, or
 * different), -EINVAL (a name that is not a plain file name).
 */
int img_list_check(int dirfd, const struct img_list *l);
/* The same, for one file. */
int img_list_check_file(int dirfd, const struct img_file *f);
/* crc32c of the first @size bytes of @fd (file @name, for messages). */
int img_file_crc32c(int fd, const char *name, uint64_t size, uint32_t *ret);

struct InventoryEntry;
/* The inventory's list of images. 0, or -ENOMEM / -EINVAL (a bad name). */
int img_list_from_inventory(const struct InventoryEntry *inv, struct img_list *l);
/*
 * Fill the inventory's list from @l (pointers into @l: keep it until the
 * inventory is written); free with img_list_inventory_free().
 */
int img_list_to_inventory(const struct img_list *l, struct InventoryEntry *inv);
void img_list_inventory_free(struct InventoryEntry *inv);

/*
 * Every page run of the pagemap image @name (pagemap-PID.img or
 * pagemap-shmem-ID.img) against its crc32c, read from its pages image; the
 * runs must cover the pages image's data exactly. Each bad run is logged
 * with its file and byte offset; *@nr_runs counts the runs checked. 0 or the
 * first error (-EBADMSG for a bad run). @nr_lazy (a lazy dump's, or NULL):
 * the runs without crc32c are its holes, counted there, not errors.
 */
int img_verify_pagemap(int dirfd, const char *name, uint64_t *nr_runs, uint64_t *nr_lazy);

/*
 * lazy-mark.c: the images of `dump --lazy-pages` (InventoryEntry.lazy_dump):
 * holes in their pages images that only that dump fills. img_lazy_dump():
 * @inv (or NULL) is one's. img_lazy_where(): "ADDR:PORT" ("[ADDR]:PORT" for
 * IPv6, "*" for every address) into @buf; -EINVAL when not one's,
 * -ENAMETOOLONG. img_lazy_file(): the file to name, its first
 * pagemap-PID.img (else "inventory.img").
 */
bool img_lazy_dump(const struct InventoryEntry *inv);
int img_lazy_where(const struct InventoryEntry *inv, char *buf, size_t len);
const char *img_lazy_file(const struct InventoryEntry *inv);
/*
 * 0 when @inv is not a lazy dump's; else logs "@who: @dir/FILE: pages of a
 * lazy dump, served by the dump at A:P (...)[: @why]" and returns -EREMOTE.
 * _dir() reads @dirfd's inventory first (none: 0, the caller's checks say).
 */
int img_lazy_refuse(const char *who, const char *dir, const struct InventoryEntry *inv,
		    const char *why);
int img_lazy_refuse_dir(const char *who, int dirfd, const char *dir, const char *why);

#endif
