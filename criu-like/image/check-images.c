// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like check-images [-D DIR | DIR]: what restore would check of an image
 * directory, and what it checks only while restoring, without restoring:
 * the inventory is complete, every image the dump wrote is there with its
 * size and crc32c (image-list.c), every record image reads to its trailer,
 * and every page run of every pagemap matches its crc32c. Every problem is
 * named on stderr with its file (and byte offset); exits non-zero on any.
 */
#define LOG_PREFIX "check-images: "
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cr.h"
#include "image.h"
#include "log.h"
#include "util.h"

#include "inventory.pb-c.h"

static bool is_pagemap(const char *name)
{
	return !strncmp(name, "pagemap-", 8);
}

/* A record image read to its end (trailer and file crc32c included), or a raw image's header. */
static int read_whole(int dirfd, const char *name)
{
	struct cr_img *img = img_open_name(dirfd, name, NULL, IMG_READ);
	ProtobufCMessage **recs = NULL;
	size_t n = 0;
	int ret = 0;

	if (!img)
		return -errno;
	if (!img_kind(img)->raw) {
		ret = img_read_all(img, &recs, &n);
		img_free_records(recs, n);
	}
	img_close(img);
	return ret;
}

/*
 * A lazy dump's images match it, but @nr_lazy runs are holes only that dump
 * fills: not a directory a restore reads alone (-EREMOTE, named).
 */
static int refuse_lazy(const char *path, const InventoryEntry *inv, size_t n, uint64_t nr_runs,
		       uint64_t nr_lazy)
{
	char why[160];

	snprintf(why, sizeof(why),
		 "%" PRIu64 " page runs are holes here; %zu images and %" PRIu64
		 " page runs match the dump",
		 nr_lazy, n, nr_runs);
	return img_lazy_refuse("check-images", path, inv, why);
}

int cr_check_images(const struct cr_options *o, const char *path)
{
	_cleanup_close_ int dirfd = img_dir_open(path, false);
	struct img_list list = {};
	InventoryEntry *inv = NULL;
	uint64_t nr_runs = 0, nr_lazy = 0;
	bool lazy;
	size_t i;
	int ret, r;

	(void)o;
	if (dirfd < 0)
		return dirfd;
	ret = img_read_one(dirfd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&inv);
	if (ret) {
		pr_err("%s has no readable inventory.img: not an image directory\n", path);
		return ret;
	}
	if (!inv->completed) {
		pr_err("%s is not marked complete (the dump failed or is still running)\n", path);
		ret = -EINVAL;
	} else if (!inv->n_images) {
		pr_err("%s has no list of its images (dumped by an older criu-like): nothing to "
		       "check them against\n",
		       path);
		ret = -EINVAL;
	}
	if (!ret)
		ret = img_list_from_inventory(inv, &list);
	lazy = img_lazy_dump(inv);
	if (ret) {
		protobuf_c_message_free_unpacked(&inv->base, NULL);
		return ret;
	}
	/* each check names what it finds wrong; go on to name every bad file once */
	for (i = 0; i < list.n; i++) {
		r = img_list_check_file(dirfd, &list.files[i]);
		if (!r)
			r = read_whole(dirfd, list.files[i].name);
		ret = ret ?: r;
	}
	/* page runs, once every file is there as the dump wrote it */
	for (i = 0; !ret && i < list.n; i++)
		if (is_pagemap(list.files[i].name))
			ret = img_verify_pagemap(dirfd, list.files[i].name, &nr_runs,
						 lazy ? &nr_lazy : NULL);
	if (!ret && lazy)
		ret = refuse_lazy(path, inv, list.n, nr_runs, nr_lazy);
	else if (!ret)
		printf("%s: %zu images and %" PRIu64 " page runs match the dump\n", path, list.n,
		       nr_runs);
	else
		pr_err("%s: the images do not match what the dump wrote\n", path);
	img_list_fini(&list);
	protobuf_c_message_free_unpacked(&inv->base, NULL);
	return ret;
}
