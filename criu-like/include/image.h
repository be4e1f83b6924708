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

/* Mode of img_open(): IMG_READ or IMG_WRITE, plus IMG_OPTIONAL (no error logged on ENOENT). */
enum {
	IMG_READ = 0,
	IMG_WRITE = 1,
	IMG_OPTIONAL = 2,
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

#endif
