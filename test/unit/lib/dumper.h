// SPDX-License-Identifier: GPL-2.0
/* The dump steps the unit tests run on their victims. */
#ifndef UNIT_LIB_DUMPER_H
#define UNIT_LIB_DUMPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "image.h"

#include "files.pb-c.h"

struct cr_options;

/*
 * Seize the tree of @pid, infect every task, dump their files into @imgfd,
 * finish the files dump, cure, release (the tree runs on). 0 or -errno.
 */
int dump_tree_files(pid_t pid, int imgfd, const struct cr_options *opts);

/*
 * cr_dump -R of the tree of @pid into @imgdir (made if missing) must fail
 * with -EOPNOTSUPP and log @expect; @pid must live on.
 */
void cr_dump_refused(pid_t pid, const char *imgdir, const char *expect);

/* Every record of the image @kind (@id) in @imgfd into *@r, *@n of them; the test fails if not. */
void read_records(int imgfd, enum cr_img_kind kind, uint32_t id, ProtobufCMessage ***r, size_t *n);

/* The FileEntry @id among the @n records @files of files.img; the test fails without it. */
const FileEntry *find_file(ProtobufCMessage **files, size_t n, uint32_t id);
/* The FdEntry of @fd among the @n records @fdi of an fdinfo image; the test fails without it. */
const FdEntry *find_fd(ProtobufCMessage **fdi, size_t n, int fd);

#endif
