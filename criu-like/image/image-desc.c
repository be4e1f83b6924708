// SPDX-License-Identifier: GPL-2.0
#define LOG_PREFIX "image-desc: "
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "image-desc.h"
#include "log.h"

#include "inventory.pb-c.h"
#include "pstree.pb-c.h"
#include "core.pb-c.h"
#include "creds.pb-c.h"
#include "mm.pb-c.h"
#include "pagemap.pb-c.h"
#include "files.pb-c.h"
#include "fs.pb-c.h"
#include "stats.pb-c.h"
#include "mnt.pb-c.h"
#include "ns.pb-c.h"
#include "ipc.pb-c.h"
#include "tmpfs.pb-c.h"
#include "netns.pb-c.h"
#include "cgroup.pb-c.h"
#include "nfrules.pb-c.h"
#include "conntrack.pb-c.h"
#include "cpuinfo.pb-c.h"

/*
 * Zero when the protobuf-c C type @T and the descriptor prefix @t belong to
 * the same message (t##__init takes a T *), a compile error otherwise: a row
 * cannot name a type and another type's descriptor.
 */
#define PB_TYPE_CHECK(T, t)                                                                   \
	(sizeof(struct {                                                                      \
		 int ok : __builtin_types_compatible_p(__typeof__(&t##__init), void (*)(T *)) \
			  ? 1                                                                 \
			  : -1;                                                               \
	 }) *                                                                                 \
	 0)
#define PB_DESC(T, t) (&t##__descriptor + PB_TYPE_CHECK(T, t))

#define IMG_RECORDS(k, n, pat, mag, T, t) \
	[k] = { .kind = k, .name = n, .pattern = pat, .magic = mag, .pb = PB_DESC(T, t) }
#define IMG_HEAD_RECORDS(k, n, pat, mag, HT, ht, T, t) \
	[k] = { .kind = k,                             \
		.name = n,                             \
		.pattern = pat,                        \
		.magic = mag,                          \
		.head = PB_DESC(HT, ht),               \
		.pb = PB_DESC(T, t) }
#define IMG_RAW(k, n, pat, mag) \
	[k] = { .kind = k, .name = n, .pattern = pat, .magic = mag, .raw = true }

/* Magics are random: never reuse one, even for a kind that was removed. */
static const struct cr_img_desc img_descs[CR_IMG_NR] = {
	IMG_RECORDS(CR_IMG_INVENTORY, "inventory", "inventory.img", 0xD9714B40, InventoryEntry,
		    inventory_entry),
	IMG_RECORDS(CR_IMG_PSTREE, "pstree", "pstree.img", 0x2DC39122, PstreeEntry, pstree_entry),
	IMG_RECORDS(CR_IMG_CORE, "core", "core-%u.img", 0x4F6F0184, CoreEntry, core_entry),
	IMG_RECORDS(CR_IMG_CREDS, "creds", "creds-%u.img", 0x8B20C884, CredsEntry, creds_entry),
	IMG_RECORDS(CR_IMG_MM, "mm", "mm-%u.img", 0x17ECA704, MmEntry, mm_entry),
	IMG_HEAD_RECORDS(CR_IMG_PAGEMAP, "pagemap", "pagemap-%u.img", 0x5D1949BF, PagemapHead,
			 pagemap_head, PagemapEntry, pagemap_entry),
	IMG_HEAD_RECORDS(CR_IMG_SHMEM_PAGEMAP, "pagemap-shmem", "pagemap-shmem-%u.img", 0xE16B004A,
			 PagemapHead, pagemap_head, PagemapEntry, pagemap_entry),
	IMG_RAW(CR_IMG_PAGES, "pages", "pages-%u.img", 0xE545E4EF),
	IMG_RECORDS(CR_IMG_FILES, "files", "files.img", 0x4F302B5E, FileEntry, file_entry),
	IMG_RECORDS(CR_IMG_FDINFO, "fdinfo", "fdinfo-%u.img", 0x45625792, FdEntry, fd_entry),
	IMG_RECORDS(CR_IMG_PIPES_DATA, "pipes-data", "pipes-data.img", 0x15E94B56, PipeDataEntry,
		    pipe_data_entry),
	IMG_RAW(CR_IMG_GHOST, "ghost", "ghost-%u.img", 0x212402D9),
	IMG_RECORDS(CR_IMG_FS, "fs", "fs-%u.img", 0x21745A1C, FsEntry, fs_entry),
	/* CRIU's names, without .img */
	IMG_RECORDS(CR_IMG_STATS_DUMP, "stats-dump", "stats-dump", 0x0B72567E, StatsEntry,
		    stats_entry),
	IMG_RECORDS(CR_IMG_STATS_RESTORE, "stats-restore", "stats-restore", 0xE569C17F, StatsEntry,
		    stats_entry),
	IMG_RECORDS(CR_IMG_UTSNS, "utsns", "utsns-%u.img", 0x6A1E83C1, UtsnsEntry, utsns_entry),
	IMG_RECORDS(CR_IMG_TIMENS, "timens", "timens-%u.img", 0x3C0D9E57, TimensEntry,
		    timens_entry),
	IMG_HEAD_RECORDS(CR_IMG_IPC_MQ, "ipc-mq", "ipc-mq-%u.img", 0x7D2B91E4, IpcMqVarEntry,
			 ipc_mq_var_entry, MqueueFileEntry, mqueue_file_entry),
	IMG_RECORDS(CR_IMG_IPC_VAR, "ipc-var", "ipc-var-%u.img", 0x6B3E0C11, IpcVarEntry,
		    ipc_var_entry),
	IMG_RECORDS(CR_IMG_IPC_SHM, "ipc-shm", "ipc-shm-%u.img", 0x3A9D52E7, IpcShmEntry,
		    ipc_shm_entry),
	IMG_RAW(CR_IMG_IPC_SHM_DATA, "ipc-shm-data", "ipc-shm-data-%u.img", 0xC4175B90),
	IMG_RECORDS(CR_IMG_IPC_SEM, "ipc-sem", "ipc-sem-%u.img", 0x91E2A64D, IpcSemEntry,
		    ipc_sem_entry),
	IMG_RECORDS(CR_IMG_IPC_MSG, "ipc-msg", "ipc-msg-%u.img", 0x5F08D3B2, IpcMsgEntry,
		    ipc_msg_entry),
	IMG_RECORDS(CR_IMG_SYSV_SHM, "sysv-shm", "sysv-shm.img", 0x27C64E19, IpcShmEntry,
		    ipc_shm_entry),
	IMG_RAW(CR_IMG_SYSV_SHM_DATA, "sysv-shm-data", "sysv-shm-data.img", 0xA85F3176),
	IMG_RECORDS(CR_IMG_TMPFS, "tmpfs", "tmpfs-%u.img", 0xBF403EDE, TmpfsEntry, tmpfs_entry),
	IMG_RAW(CR_IMG_TMPFS_DATA, "tmpfs-data", "tmpfs-data-%u.img", 0xA8E30AA8),
	IMG_RECORDS(CR_IMG_MNTNS, "mntns", "mntns-%u.img", 0x7C31D4A5, MntnsEntry, mntns_entry),
	IMG_RECORDS(CR_IMG_NETNS, "netns", "netns-%u.img", 0x5E2A91C7, NetnsEntry, netns_entry),
	IMG_RECORDS(CR_IMG_USERNS, "userns", "userns-%u.img", 0x4B7D20E3, UsernsEntry,
		    userns_entry),
	IMG_RECORDS(CR_IMG_CGROUP, "cgroup", "cgroup.img", 0x59A3C0E2, CgroupEntry, cgroup_entry),
	IMG_RECORDS(CR_IMG_NFRULES, "nfrules", "nfrules-%u.img", 0x3D9F6A21, NfRulesEntry,
		    nf_rules_entry),
	IMG_RECORDS(CR_IMG_CONNTRACK, "conntrack", "conntrack-%u.img", 0x8C51E7B4, ConntrackTable,
		    conntrack_table),
	IMG_RECORDS(CR_IMG_CPUINFO, "cpuinfo", "cpuinfo.img", 0x43505549, CpuinfoEntry,
		    cpuinfo_entry),
};

const struct cr_img_desc *img_desc(enum cr_img_kind kind)
{
	if ((unsigned int)kind >= CR_IMG_NR)
		return NULL;
	return &img_descs[kind];
}

const struct cr_img_desc *img_desc_by_magic(uint32_t magic)
{
	for (size_t i = 0; i < CR_IMG_NR; i++)
		if (img_descs[i].magic == magic)
			return &img_descs[i];
	return NULL;
}

const struct cr_img_desc *img_desc_by_name(const char *name)
{
	for (size_t i = 0; i < CR_IMG_NR; i++)
		if (!strcmp(img_descs[i].name, name))
			return &img_descs[i];
	return NULL;
}

const ProtobufCMessageDescriptor *img_desc_record(const struct cr_img_desc *d, uint64_t idx)
{
	if (idx == 0 && d->head)
		return d->head;
	return d->pb;
}

int img_file_name(enum cr_img_kind kind, uint32_t id, char *buf, size_t size)
{
	const struct cr_img_desc *d = img_desc(kind);
	const char *pct;
	int n;

	if (!d)
		return -EINVAL;
	/* Patterns hold at most one "%u"; expand it by hand so no format string is variable. */
	pct = strstr(d->pattern, "%u");
	if (pct)
		n = snprintf(buf, size, "%.*s%u%s", (int)(pct - d->pattern), d->pattern, id,
			     pct + 2);
	else
		n = snprintf(buf, size, "%s", d->pattern);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}
