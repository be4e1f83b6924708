// SPDX-License-Identifier: GPL-2.0
/*
 * LSM labels (proc/lsm.c): a task with criu-like's label passes the dump
 * check; a profile asked at restore is taken only when it is what the tree
 * gets (criu-like's own label; apparmor:unconfined where AppArmor is off),
 * refused otherwise, naming it; a malformed one is an error.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lsm.h"
#include "options.h"

static void test_dump_check(void **state)
{
	pid_t c;
	int status;

	(void)state;
	/* a child has its parent's label */
	c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	assert_true(c > 0);
	assert_int_equal(lsm_dump_check(c), 0);
	kill(c, SIGKILL);
	waitpid(c, &status, 0);
}

static void test_profile_check(void **state)
{
	char own[256];
	char arg[300];
	struct cr_options o;

	(void)state;
	assert_int_equal(lsm_label("self", own, sizeof(own)), 0);
	assert_int_equal(lsm_profile_check("unconfined", "--lsm-profile"), -EINVAL);
	assert_int_equal(lsm_profile_check("smack:x", "--lsm-profile"), -EINVAL);
	/* a profile that is not criu-like's own label: refused */
	assert_int_equal(lsm_profile_check("apparmor:criu-like-test-no-such-profile",
					   "--lsm-profile"),
			 -EOPNOTSUPP);
	if (!lsm_apparmor_active()) {
		assert_string_equal(own, "");
		assert_int_equal(lsm_profile_check("apparmor:unconfined", "--lsm-profile"), 0);
		assert_int_equal(lsm_profile_check("selinux:system_u:system_r:x_t", "--external"),
				 -EOPNOTSUPP);
	} else {
		snprintf(arg, sizeof(arg), "apparmor:%.*s", (int)strcspn(own, " "), own);
		assert_int_equal(lsm_profile_check(arg, "--lsm-profile"), 0);
	}
	/* --lsm-profile and --external apparmor: both checked */
	memset(&o, 0, sizeof(o));
	assert_int_equal(lsm_restore_check(&o), 0);
	assert_true(lsm_external("apparmor:x"));
	assert_true(lsm_external("selinux:x"));
	assert_false(lsm_external("mnt[a]:b"));
	{
		const char *ext[] = { "mnt[a]:b", "apparmor:criu-like-test-no-such-profile", NULL };

		o.external = ext;
		o.n_external = 2;
		assert_int_equal(lsm_restore_check(&o), -EOPNOTSUPP);
		o.n_external = 1;
		assert_int_equal(lsm_restore_check(&o), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_check),
		cmocka_unit_test(test_profile_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
