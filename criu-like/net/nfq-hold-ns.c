// SPDX-License-Identifier: GPL-2.0
/* One packet holder per network namespace, found by the namespace this thread is in. */
#define LOG_PREFIX "nfq-hold: "

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfq-hold-int.h"
#include "util.h"

static struct {
	dev_t dev;
	ino_t ino;
	struct nfq_hold *h;
	bool failed; /* tried: no NFQUEUE here */
} holders[8];
static bool hold_off;

void nfq_hold_disable(bool off)
{
	hold_off = off;
}

/* The slot of this thread's network namespace (a free one when @add), or -ENOENT, -errno. */
static int here_slot(bool add)
{
	struct stat st;
	size_t i;

	if (stat("/proc/thread-self/ns/net", &st))
		return neg_errno();
	for (i = 0; i < ARRAY_SIZE(holders); i++)
		if ((holders[i].h || holders[i].failed) && holders[i].ino == st.st_ino &&
		    holders[i].dev == st.st_dev)
			return (int)i;
	for (i = 0; add && i < ARRAY_SIZE(holders); i++)
		if (!holders[i].h && !holders[i].failed) {
			holders[i].ino = st.st_ino;
			holders[i].dev = st.st_dev;
			return (int)i;
		}
	return -ENOENT;
}

struct nfq_hold *nfq_hold_here(const char *name, bool start)
{
	char gen[64];
	int i;

	if (hold_off)
		return NULL;
	i = here_slot(start);
	if (i < 0)
		return NULL;
	if (holders[i].h || holders[i].failed || !start)
		return holders[i].h;
	if (!name) {
		snprintf(gen, sizeof(gen), "p%d-%lu", getpid(), (unsigned long)holders[i].ino);
		name = gen;
	}
	if (nfq_hold_start(name, &holders[i].h))
		holders[i].failed = true;
	return holders[i].h;
}

struct nfq_hold *nfq_hold_take_here(void)
{
	struct nfq_hold *h;
	int i = here_slot(false);

	if (i < 0)
		return NULL;
	h = holders[i].h;
	holders[i].h = NULL;
	holders[i].failed = false;
	return h;
}
