/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_VDSO_GONE_H
#define CRIU_LIKE_VDSO_GONE_H

/*
 * A task that unmapped some of the kernel's special mappings ([vdso],
 * [vvar], [vvar_vclock]): the dump records which ones (MmEntry
 * unmapped_specials), and the restore unmaps the restoring kernel's own
 * areas of those kinds instead of moving them (Documentation/memory.md).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerndat.h"
#include "proc-parse.h"

/*
 * The areas this kernel maps in every task (@kd) that the task's VMAs lack,
 * as VmaKind values (images/mm.proto) in @ret (room for 3); returns how many.
 */
size_t vdso_unmapped_kinds(const struct vdso_layout *kd, const struct vma_list *vmas,
			   uint32_t ret[3]);

enum special_act {
	SPECIAL_NONE, /* neither here nor in the image */
	SPECIAL_MOVE, /* the current area goes to the saved address */
	SPECIAL_UNMAP, /* the task had unmapped it: the current area goes away */
	SPECIAL_REFUSE, /* another kernel's layout: the restore cannot give it back */
};

/*
 * What the restore does with one kind of special area: @saved_len and
 * @cur_len are its sizes in the image and here (0: absent), @unmapped whether
 * the dump recorded that the task had unmapped it.
 */
enum special_act vdso_special_act(uint64_t saved_len, uint64_t cur_len, bool unmapped);

#endif
