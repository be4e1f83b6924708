// SPDX-License-Identifier: GPL-2.0
/*
 * Every kind of open file, in the order the dump asks them whether an fd is
 * theirs (the first to say yes dumps it). Adding a kind: its file, one line
 * here, one FileEntry part in images/ (Documentation/architecture.md).
 */
#include "files-int.h"
#include "util.h"

const struct file_kind *const file_kinds[] = {
	&reg_kind,   &pty_kind, /* before chr_kind, which keeps the --shell-job terminal */
	&chr_kind,   &pipe_kind,    &fifo_kind,	   &eventfd_kind, &signalfd_kind, &pidfd_kind,
	&epoll_kind, &timerfd_kind, &inotify_kind, &unix_kind,	  &inet_kind,	  &fanotify_kind,
};

const size_t nr_file_kinds = ARRAY_SIZE(file_kinds);

size_t file_kind_index(const struct file_kind *k)
{
	size_t i;

	for (i = 0; i < nr_file_kinds && file_kinds[i] != k; i++)
		;
	return i;
}

const struct file_kind *file_kind_of_type(int type)
{
	size_t i, j;

	for (i = 0; i < nr_file_kinds; i++)
		for (j = 0; j < ARRAY_SIZE(file_kinds[i]->types) && file_kinds[i]->types[j]; j++)
			if ((int)file_kinds[i]->types[j] == type)
				return file_kinds[i];
	return NULL;
}
