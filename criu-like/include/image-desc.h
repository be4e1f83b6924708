/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_IMAGE_DESC_H
#define CRIU_LIKE_IMAGE_DESC_H

#include <stdbool.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

/*
 * Every kind of image file: its name, magic and record type. A kind whose
 * name has "%u" exists once per object (pid, shmid, file id...); the others
 * once per image directory. Documentation/image-format.md has the table.
 */
enum cr_img_kind {
	CR_IMG_INVENTORY,
	CR_IMG_PSTREE,
	CR_IMG_CORE,
	CR_IMG_CREDS,
	CR_IMG_MM,
	CR_IMG_PAGEMAP,
	CR_IMG_SHMEM_PAGEMAP,
	CR_IMG_PAGES,
	CR_IMG_FILES,
	CR_IMG_FDINFO,
	CR_IMG_PIPES_DATA,
	CR_IMG_GHOST,
	CR_IMG_FS,
	CR_IMG_STATS_DUMP,
	CR_IMG_STATS_RESTORE,
	CR_IMG_UTSNS,
	CR_IMG_TIMENS,
	CR_IMG_IPC_MQ,
	CR_IMG_IPC_VAR,
	CR_IMG_IPC_SHM,
	CR_IMG_IPC_SHM_DATA,
	CR_IMG_IPC_SEM,
	CR_IMG_IPC_MSG,
	CR_IMG_SYSV_SHM,
	CR_IMG_SYSV_SHM_DATA,
	CR_IMG_TMPFS,
	CR_IMG_TMPFS_DATA,
	CR_IMG_MNTNS,
	CR_IMG_NETNS,
	CR_IMG_USERNS,
	CR_IMG_CGROUP,
	CR_IMG_NFRULES,
	CR_IMG_CONNTRACK,
	CR_IMG_CPUINFO,
	CR_IMG_NR,
};

struct cr_img_desc {
	enum cr_img_kind kind;
	const char *name; /* short name, used by decode/encode: "core" */
	const char *pattern; /* file name, "%u" replaced by the id: "core-%u.img" */
	uint32_t magic;
	/* Raw images (pages, ghost) have no records: a page-aligned header, then data. */
	bool raw;
	/* The first record, when it differs from the others (pagemap's head), else NULL. */
	const ProtobufCMessageDescriptor *head;
	/* Every record (after the head). NULL for raw images. */
	const ProtobufCMessageDescriptor *pb;
};

/* The row of @kind; NULL when @kind is out of range. */
const struct cr_img_desc *img_desc(enum cr_img_kind kind);
/* Lookups for decode/encode: NULL when nothing matches. */
const struct cr_img_desc *img_desc_by_magic(uint32_t magic);
const struct cr_img_desc *img_desc_by_name(const char *name);
/* The descriptor of record number @idx (0 is the first) of a kind. */
const ProtobufCMessageDescriptor *img_desc_record(const struct cr_img_desc *d, uint64_t idx);
/* Write the file name of (@kind, @id) into @buf. 0, or -ENAMETOOLONG / -EINVAL. */
int img_file_name(enum cr_img_kind kind, uint32_t id, char *buf, size_t size);

#endif
