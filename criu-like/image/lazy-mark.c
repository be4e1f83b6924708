// SPDX-License-Identifier: GPL-2.0
/*
 * The mark of a lazy dump's images (InventoryEntry.lazy_dump, written by
 * `dump --lazy-pages`, Documentation/lazy-pages.md "A lazy dump"): the
 * pages it left in its frozen tree are holes in its pages images, their
 * pagemap entries PE_PRESENT as any. Read as data they are zeros: every
 * reader of such a directory refuses it through here, naming the file and
 * where the dump serves those pages, but a `restore --lazy-pages` whose
 * daemon says it reads them from that dump (restore-lazy.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "log.h"
#include "util.h"

#include "inventory.pb-c.h"

bool img_lazy_dump(const InventoryEntry *inv)
{
	return inv && inv->lazy_dump;
}

int img_lazy_where(const InventoryEntry *inv, char *buf, size_t len)
{
	const LazyDumpEntry *ld = inv ? inv->lazy_dump : NULL;
	const char *a;
	int n;

	if (!ld || !len)
		return -EINVAL;
	a = ld->address && *ld->address ? ld->address : "*";
	n = strchr(a, ':') ? snprintf(buf, len, "[%s]:%u", a, ld->port)
			   : snprintf(buf, len, "%s:%u", a, ld->port);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The first pagemap-PID.img the inventory lists (the one whose holes are named), or NULL. */
const char *img_lazy_file(const InventoryEntry *inv)
{
	for (size_t i = 0; inv && i < inv->n_images; i++) {
		const char *n = inv->images[i]->name;

		if (!strncmp(n, "pagemap-", 8) && strncmp(n, "pagemap-shmem-", 14))
			return n;
	}
	return "inventory.img";
}

int img_lazy_refuse(const char *who, const char *dir, const InventoryEntry *inv, const char *why)
{
	char where[300];

	if (!img_lazy_dump(inv))
		return 0;
	if (img_lazy_where(inv, where, sizeof(where)))
		snprintf(where, sizeof(where), "?");
	pr_err("%s: %s/%s: pages of a lazy dump, served by the dump at %s (restore --lazy-pages "
	       "with lazy-pages --page-server)%s%s\n",
	       who, dir, img_lazy_file(inv), where, why ? ": " : "", why ? why : "");
	return -EREMOTE;
}

int img_lazy_refuse_dir(const char *who, int dirfd, const char *dir, const char *why)
{
	InventoryEntry *inv = NULL;
	int err;

	/* no inventory: not a dump's directory, which the caller's own checks say */
	if (faccessat(dirfd, img_desc(CR_IMG_INVENTORY)->pattern, F_OK, 0) ||
	    img_read_one(dirfd, CR_IMG_INVENTORY, 0, (ProtobufCMessage **)&inv))
		return 0;
	err = img_lazy_refuse(who, dir, inv, why);
	protobuf_c_message_free_unpacked(&inv->base, NULL);
	return err;
}
