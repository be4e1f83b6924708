/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_TMPFS_H
#define CRIU_LIKE_TMPFS_H

/*
 * The contents of a tmpfs (criu-like/ns/tmpfs.c, Documentation/namespaces.md
 * "tmpfs contents"), for the mount namespace code: every name under a
 * directory of a tmpfs with its inode (regular files with their data and
 * holes, directories, symbolic links, hard links, FIFOs, device nodes,
 * socket files; modes, owners, atime and mtime, extended attributes) goes
 * into tmpfs-ID.img, the data into tmpfs-data-ID.img. Mount options are not
 * part of it (the mount code has them), nor files deleted while open (the
 * files code saves them as ghost files).
 */
#include <stdint.h>

/*
 * Dump the tmpfs whose root directory (or any directory of it) is open at
 * @root_fd into tmpfs-@id.img and tmpfs-data-@id.img of the image directory
 * @dirfd. Nothing mounted under @root_fd is walked: the walk goes through a
 * private read-only copy of the mount alone (open_tree), where the
 * directories hidden under other mounts are seen as they are in the tmpfs;
 * without it (no CAP_SYS_ADMIN, an unbindable mount), a mount point met
 * under @root_fd is refused. 0, or -errno logged naming the path.
 */
int tmpfs_dump(int root_fd, int dirfd, uint32_t id);

/*
 * Fill the empty directory open at @root_fd (the root of a new tmpfs) from
 * tmpfs-@id.img: the root directory gets the recorded mode, owner, times
 * and xattrs, and everything under it is created. The image is untrusted:
 * a path that is not a plain relative one, or data that does not match
 * its crc32c, is refused naming the image and the offset. 0 or -errno,
 * logged; on an error, what was created is left for the caller to unmount.
 */
int tmpfs_restore(int root_fd, int dirfd, uint32_t id);

#endif
