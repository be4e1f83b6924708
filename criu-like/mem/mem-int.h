/* SPDX-License-Identifier: GPL-2.0 */
/* Private to the files of mem/ that make the memory images of a dump. */
#ifndef CRIU_LIKE_MEM_INT_H
#define CRIU_LIKE_MEM_INT_H

struct dump_ctx;
struct dump_task;

/*
 * mm-img.c: mm-PID.img of @dt (the mm fields, auxv, exe, every VMA of
 * dt->vmas with the policy of dt->plan, guard regions, AIO rings).
 */
int mm_img_write(struct dump_ctx *ctx, struct dump_task *dt);

#endif
