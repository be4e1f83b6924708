// SPDX-License-Identifier: GPL-2.0
/*
 * Whether the image directory is a checkpoint: the inventory, written
 * incomplete first and complete last, and what must be on disk before it
 * says so (the images synced, the page server's session ended).
 */
#define LOG_PREFIX "dump: "

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <asm/sigframe.h>

#include "cr.h"
#include "dump-int.h"
#include "image.h"
#include "log.h"
#include "net-lock.h"
#include "ns.h"
#include "page-server.h"
#include "util.h"

#include "inventory.pb-c.h"

int write_inventory(const struct dump_ctx *ctx, bool completed)
{
	static const DumpedPart parts[] = { DUMPED_PART__PART_TASKS, DUMPED_PART__PART_MEMORY,
					    DUMPED_PART__PART_FILES };
	static const DumpedPart pre_parts[] = { DUMPED_PART__PART_MEMORY,
						DUMPED_PART__PART_PRE_DUMP };
	InventoryEntry ie = INVENTORY_ENTRY__INIT;
	LazyDumpEntry ld = LAZY_DUMP_ENTRY__INIT;
	struct ns_inventory ns;
	struct timespec ts;
	struct utsname u;
	unsigned int i, nr_threads = 0;
	int ret;

	uname(&u);
	clock_gettime(CLOCK_REALTIME, &ts);
	for (i = 0; i < ctx->tree->nr_tasks; i++)
		if (ctx->tree->tasks[i]->state != TASK_ZOMBIE)
			nr_threads += ctx->tree->tasks[i]->nr_threads;
	ie.img_version = IMG_FORMAT_VERSION;
	ie.root_pid = (uint32_t)pidns_vpid(ctx->tree->root->pid);
	ie.tool_version = (char *)CRIU_LIKE_VERSION;
	ie.kernel_release = u.release;
	ie.completed = completed;
	ie.n_dumped = completed ? ARRAY_SIZE(parts) : 0;
	ie.dumped = (DumpedPart *)parts;
	if (ctx->pre_dump) {
		ie.n_dumped = completed ? ARRAY_SIZE(pre_parts) : 0;
		ie.dumped = (DumpedPart *)pre_parts;
	}
	if (ctx->opts->prev_images_dir) {
		ie.has_parent_dir = true;
		ie.parent_dir.data = (uint8_t *)ctx->opts->prev_images_dir;
		ie.parent_dir.len = strlen(ctx->opts->prev_images_dir);
	}
	/* --lazy-pages: holes only this dump fills, there; every other reader refuses them */
	if (ctx->opts->lazy_pages && !ctx->pre_dump) {
		ld.address = (char *)(ctx->opts->address ? ctx->opts->address : "");
		ld.port = (uint32_t)ctx->opts->port;
		ld.id = ctx->lazy_id;
		ie.lazy_dump = &ld;
	}
	ie.xfeatures_mask = arch_xfeatures();
	ie.has_dump_time_ns = true;
	ie.dump_time_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	ie.has_nr_tasks = ie.has_nr_threads = true;
	ie.nr_tasks = ctx->tree->nr_tasks;
	ie.nr_threads = nr_threads;
	/* the restore of these images removes the lock; later runs leave it alone */
	ie.network_lock = completed ? (char *)netlock_dump_kept_name(ctx) : NULL;
	ret = ns_inventory_fill(&ie, &ctx->ns, &ns);
	/* every image written since dump_prepare(): restore checks each one against it */
	if (!ret && completed)
		ret = img_list_to_inventory(&ctx->images, &ie);
	if (!ret)
		ret = img_write_one(ctx->dirfd, CR_IMG_INVENTORY, 0, &ie.base);
	img_list_inventory_free(&ie);
	return ret;
}

/* The page server has every pagemap and pages image, flushed: the session ends. */
int ps_end(struct dump_ctx *ctx)
{
	int err = ps_finish(ctx->ps);

	ps_conn_close(ctx->ps);
	ctx->ps = NULL;
	return err;
}

/*
 * The images on disk: syncfs of their file system, unless they are read once
 * right away and removed (a migration's rounds: no_sync).
 */
int images_sync(const struct dump_ctx *ctx)
{
	return ctx->opts->no_sync ? 0 : img_dir_sync(ctx->dirfd);
}

/* Best effort: the incomplete inventory again, or none (restore refuses both). */
void unmark_complete(const struct dump_ctx *ctx)
{
	char name[64];

	if (!write_inventory(ctx, false) && !img_dir_sync(ctx->dirfd))
		return;
	if (img_file_name(CR_IMG_INVENTORY, 0, name, sizeof(name)) ||
	    (unlinkat(ctx->dirfd, name, 0) && errno != ENOENT))
		pr_perror("cannot unmark the image directory: remove its inventory.img by hand");
}
