// SPDX-License-Identifier: GPL-2.0
/*
 * The image reader (criu-like/image/image.c) as restore uses it, for every
 * kind of the kind table: the header (magic, version, flags), each record's
 * length, crc32c and protobuf unpack with the descriptor the kind has at that
 * position (image-desc.c), the trailer; for raw kinds (pages, ghost) the
 * size and the data, and a page-run check. The kind is told by the magic, as
 * decode does; the seed corpus has a file of every kind.
 */
#include <fcntl.h>
#include <stdlib.h>

#include "fuzz.h"
#include "image.h"

static void read_raw(struct cr_img *img)
{
	uint64_t size = img_raw_size(img);
	uint8_t *buf;

	if (size > (1u << 20))
		return;
	buf = malloc(size ? size : 1);
	if (!buf)
		return;
	if (!img_read_raw(img, 0, buf, size) && size >= 2)
		img_read_run(img, size / 2, buf, size - size / 2, 0);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct cr_img_desc *d;
	ProtobufCMessage *m;
	struct cr_img *img;
	uint64_t i;

	fuzz_file_set(data, size);
	img = img_open_name(AT_FDCWD, fuzz_file_init(), NULL, IMG_READ);
	if (!img)
		return 0;
	d = img_kind(img);
	if (d->raw) {
		read_raw(img);
	} else {
		for (i = 0; img_read_record(img, img_desc_record(d, i), &m) > 0; i++)
			protobuf_c_message_free_unpacked(m, NULL);
	}
	img_close(img);

	/* The same file opened as the kind it claims, through img_read_all(). */
	img = img_open_name(AT_FDCWD, fuzz_file_init(), d, IMG_READ);
	if (img && !d->raw) {
		ProtobufCMessage **recs;
		size_t n;

		if (!img_read_all(img, &recs, &n))
			img_free_records(recs, n);
	}
	img_close(img);
	return 0;
}
