/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_IMAGE_INT_H
#define CRIU_LIKE_IMAGE_INT_H

/* Between image.c and image-list.c: the hooks of img_track_writes() / img_track_reads(). */
#include <stdbool.h>
#include <stdint.h>

/* An image opened for writing in @dirfd goes into the dump's list once complete. */
bool img_track_is_written(int dirfd);
/* Add it (at img_close(), only when complete without error). 0 or -ENOMEM. */
int img_track_note(const char *name, uint64_t size, bool has_crc32c, uint32_t crc32c);
/* 0 when @name of @dirfd may be read; -ENOENT (logged unless IMG_OPTIONAL) otherwise. */
int img_track_may_read(int dirfd, const char *name, int mode);

#endif
