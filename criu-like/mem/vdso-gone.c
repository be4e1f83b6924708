// SPDX-License-Identifier: GPL-2.0
/*
 * Special mappings a task unmapped (include/vdso-gone.h): which ones at dump,
 * and what the restore does with each kind.
 */
#include "mm.pb-c.h"
#include "vdso-gone.h"

size_t vdso_unmapped_kinds(const struct vdso_layout *kd, const struct vma_list *vmas,
			   uint32_t ret[3])
{
	static const struct {
		enum vdso_area_kind area;
		enum vma_kind vma;
		VmaKind img;
	} kinds[] = {
		{ VDSO_AREA_VVAR, VMA_VVAR, VMA_KIND__VMA_VVAR },
		{ VDSO_AREA_VVAR_VCLOCK, VMA_VVAR_VCLOCK, VMA_KIND__VMA_VVAR_VCLOCK },
		{ VDSO_AREA_VDSO, VMA_VDSO, VMA_KIND__VMA_VDSO },
	};
	size_t n = 0, k, i;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		bool has = false;

		if (!kd->area[kinds[k].area].present)
			continue;
		for (i = 0; i < vmas->nr && !has; i++)
			has = vmas->vmas[i].kind == kinds[k].vma;
		if (!has)
			ret[n++] = (uint32_t)kinds[k].img;
	}
	return n;
}

enum special_act vdso_special_act(uint64_t saved_len, uint64_t cur_len, bool unmapped)
{
	if (!saved_len && !cur_len)
		return SPECIAL_NONE;
	if (!saved_len && unmapped)
		return SPECIAL_UNMAP;
	if (saved_len && saved_len == cur_len)
		return SPECIAL_MOVE;
	return SPECIAL_REFUSE;
}
