// SPDX-License-Identifier: GPL-2.0
/*
 * Mount namespaces, the pure half (criu-like/ns/mnt-plan.c): which mount of
 * a mountinfo comes back how (the root, a bind mount of another, a new
 * filesystem, --external), what is refused, the per-mount options, the
 * --external arguments, and the order of the restore.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <cmocka.h>

#include "../../criu-like/ns/mnt.h"

/* A container after pivot_root: its root a bind mount of /srv/rootfs of 254:0. */
static const char container[] =
	"67 45 254:0 /srv/rootfs / rw,relatime - ext4 /dev/vda rw\n"
	"68 67 0:39 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
	"69 67 0:40 / /tmp rw,relatime shared:5 - tmpfs tmp rw,size=1024k,mode=700\n"
	"70 67 254:0 /srv/rootfs/etc /ro-etc ro,relatime - ext4 /dev/vda rw\n"
	"71 67 254:0 /srv/rootfs/etc/hosts /hosts rw,relatime - ext4 /dev/vda rw\n"
	"72 67 0:40 /sub /tmp2 rw,relatime master:5 - tmpfs tmp rw,size=1024k,mode=700\n"
	"73 69 0:41 / /tmp rw,noatime - tmpfs over rw\n"
	"74 67 254:0 /srv/data /data rw,relatime - ext4 /dev/vda rw\n";

static int plan_of(const char *text, const char *const *ext, size_t n_ext,
		   struct mnt_plan_entry *plan, unsigned int *nr)
{
	struct mount_list ml;
	int err;

	assert_int_equal(parse_mountinfo(text, &ml), 0);
	*nr = ml.nr;
	err = mnt_plan(42, &ml, ext, n_ext, plan);
	mount_list_fini(&ml);
	return err;
}

static void test_plan_container(void **state)
{
	static const char *const ext[] = { "mnt[/data]:data", "unix[1]" };
	struct mnt_plan_entry p[16];
	unsigned int nr;

	(void)state;
	/* /data is a directory of the host, outside the root: refused without --external */
	assert_int_equal(plan_of(container, NULL, 0, p, &nr), -EOPNOTSUPP);
	assert_int_equal(plan_of(container, ext, 2, p, &nr), 0);
	assert_int_equal(nr, 8);
	assert_int_equal(p[0].how, MNT_HOW__MNT_ROOT);
	assert_int_equal(p[1].how, MNT_HOW__MNT_NEW); /* proc */
	assert_int_equal(p[2].how, MNT_HOW__MNT_NEW); /* tmpfs */
	assert_int_equal(p[3].how, MNT_HOW__MNT_BIND); /* a directory of the root */
	assert_int_equal(p[3].bind_of, 0);
	assert_int_equal(p[4].how, MNT_HOW__MNT_BIND); /* a file of the root */
	assert_int_equal(p[4].bind_of, 0);
	assert_int_equal(p[5].how, MNT_HOW__MNT_BIND); /* a directory of the tmpfs */
	assert_int_equal(p[5].bind_of, 2);
	assert_int_equal(p[6].how, MNT_HOW__MNT_NEW); /* the overmount */
	assert_int_equal(p[7].how, MNT_HOW__MNT_EXTERNAL);
	assert_string_equal(p[7].external, "data");
}

static void test_plan_refused(void **state)
{
	static const char *const bad_ext[] = { "mnt[/nowhere]:x" };
	static const char *const root_ext[] = { "mnt[/]:x" };
	struct mnt_plan_entry p[8];
	unsigned int nr;

	(void)state;
	/* a chroot into a plain directory: no mount at / */
	assert_int_equal(plan_of("68 67 0:39 / /proc rw - proc proc rw\n", NULL, 0, p, &nr),
			 -EOPNOTSUPP);
	/* autofs, fuse: refused by name */
	assert_int_equal(plan_of("1 0 8:1 / / rw - ext4 /dev/sda rw\n"
				 "2 1 0:50 / /auto rw - autofs auto rw\n",
				 NULL, 0, p, &nr),
			 -EOPNOTSUPP);
	assert_int_equal(plan_of("1 0 8:1 / / rw - ext4 /dev/sda rw\n"
				 "2 1 0:50 / /f rw - fuse.sshfs host: rw\n",
				 NULL, 0, p, &nr),
			 -EOPNOTSUPP);
	/* a block device that is not the root's: refused unless external */
	assert_int_equal(plan_of("1 0 8:1 / / rw - ext4 /dev/sda rw\n"
				 "2 1 8:2 / /home rw - ext4 /dev/sdb rw\n",
				 NULL, 0, p, &nr),
			 -EOPNOTSUPP);
	/* a slave of a peer group outside the namespace */
	assert_int_equal(plan_of("1 0 8:1 / / rw master:3 - ext4 /dev/sda rw\n", NULL, 0, p, &nr),
			 -EOPNOTSUPP);
	/* a bind mount of a subdirectory of a tmpfs whose root is not mounted */
	assert_int_equal(plan_of("1 0 8:1 / / rw - ext4 /dev/sda rw\n"
				 "2 1 0:40 /sub /t rw - tmpfs t rw\n",
				 NULL, 0, p, &nr),
			 -EOPNOTSUPP);
	/* unknown per-mount options */
	assert_int_equal(plan_of("1 0 8:1 / / rw,bogus - ext4 /dev/sda rw\n", NULL, 0, p, &nr),
			 -EOPNOTSUPP);
	/* --external naming no mount, or the root */
	assert_int_equal(plan_of(container, bad_ext, 1, p, &nr), -EINVAL);
	assert_int_equal(plan_of(container, root_ext, 1, p, &nr), -EINVAL);
}

static void test_attrs_and_external(void **state)
{
	const char *key, *val;
	uint64_t a;
	size_t kl;

	(void)state;
	assert_int_equal(mnt_attr_parse("ro,nosuid,nodev,noexec,relatime", &a), 0);
	assert_int_equal(a, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				    MOUNT_ATTR_NOEXEC | MOUNT_ATTR_RELATIME);
	assert_int_equal(mnt_attr_parse("rw,noatime", &a), 0);
	assert_int_equal(a, MOUNT_ATTR_NOATIME);
	assert_int_equal(mnt_attr_parse("rw", &a), 0);
	assert_int_equal(a, MOUNT_ATTR_STRICTATIME);
	assert_int_equal(mnt_attr_parse("rw,lazytime", &a), -EINVAL);

	assert_int_equal(mnt_external_split("mnt[/a b]:NAME", &key, &kl, &val), 0);
	assert_int_equal(kl, 4);
	assert_memory_equal(key, "/a b", 4);
	assert_string_equal(val, "NAME");
	assert_int_equal(mnt_external_split("net[1]:x", &key, &kl, &val), -ENOENT);
	assert_int_equal(mnt_external_split("mnt[]:x", &key, &kl, &val), -EINVAL);
	assert_int_equal(mnt_external_split("mnt[/a]:", &key, &kl, &val), -EINVAL);
	assert_int_equal(mnt_external_split("mnt[/a]", &key, &kl, &val), -EINVAL);

	assert_true(mnt_path_under("/a/b", "/a"));
	assert_true(mnt_path_under("/a", "/a"));
	assert_false(mnt_path_under("/ab", "/a"));
	assert_true(mnt_path_under("/x", "/"));
}

/* --enable-fs: a mount of a named type whose whole root is mounted is made again */
static void test_enable_fs(void **state)
{
	static const char *const one[] = { "hugetlbfs,tracefs" }, *const all[] = { "all" };
	static const char tree[] = "1 0 8:1 / / rw - ext4 /dev/sda rw\n"
				   "2 1 0:40 / /hp rw - hugetlbfs hugetlbfs rw,pagesize=2M\n";
	static const char sub[] = "1 0 8:1 / / rw - ext4 /dev/sda rw\n"
				  "2 1 0:40 /d /hp rw - hugetlbfs hugetlbfs rw,pagesize=2M\n";
	struct mnt_plan_entry p[4];
	unsigned int nr;

	(void)state;
	mnt_enable_fs(NULL, 0);
	assert_false(mnt_fstype_enabled("hugetlbfs"));
	assert_int_equal(plan_of(tree, NULL, 0, p, &nr), -EOPNOTSUPP);
	mnt_enable_fs(one, 1);
	assert_true(mnt_fstype_enabled("hugetlbfs"));
	assert_true(mnt_fstype_enabled("tracefs"));
	assert_false(mnt_fstype_enabled("huge"));
	assert_false(mnt_fstype_enabled("nfs"));
	assert_int_equal(plan_of(tree, NULL, 0, p, &nr), 0);
	assert_int_equal(p[1].how, MNT_HOW__MNT_NEW);
	/* a part of it only: not made again */
	assert_int_equal(plan_of(sub, NULL, 0, p, &nr), -EOPNOTSUPP);
	mnt_enable_fs(all, 1);
	assert_true(mnt_fstype_enabled("debugfs"));
	/* refused types stay refused: their state is elsewhere */
	assert_int_equal(plan_of("1 0 8:1 / / rw - ext4 /dev/sda rw\n"
				 "2 1 0:41 / /n rw - nfs srv:/x rw\n",
				 NULL, 0, p, &nr),
			 -EOPNOTSUPP);
	mnt_enable_fs(NULL, 0);
}

static MntEntry *ent(MntEntry *e, uint32_t id, uint32_t parent, MntHow how, int bind_of)
{
	mnt_entry__init(e);
	e->mnt_id = id;
	e->parent_id = parent;
	e->how = how;
	e->mountpoint = (char *)"/m";
	if (bind_of >= 0) {
		e->has_bind_of = true;
		e->bind_of = (uint32_t)bind_of;
	}
	return e;
}

static void test_order(void **state)
{
	MntEntry e[4], *p[4];
	size_t order[4];

	(void)state;
	/* a bind mount listed before its source, a child before its parent */
	p[0] = ent(&e[0], 10, 9, MNT_HOW__MNT_BIND, 13);
	p[1] = ent(&e[1], 11, 12, MNT_HOW__MNT_NEW, -1);
	p[2] = ent(&e[2], 12, 1, MNT_HOW__MNT_ROOT, -1);
	p[3] = ent(&e[3], 13, 12, MNT_HOW__MNT_NEW, -1);
	p[0]->parent_id = 11;
	assert_int_equal(mnt_restore_order(p, 4, order), 0);
	assert_int_equal(order[0], 2);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 1);
	assert_int_equal(order[3], 0);
	/* a source that is not there */
	p[0]->bind_of = 99;
	assert_int_equal(mnt_restore_order(p, 4, order), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_container),	   cmocka_unit_test(test_plan_refused),
		cmocka_unit_test(test_attrs_and_external), cmocka_unit_test(test_order),
		cmocka_unit_test(test_enable_fs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
