// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "cli-config.h"
#include "log.h"
#include "options.h"

void cr_options_init(struct cr_options *o)
{
	memset(o, 0, sizeof(*o));
	o->images_dir = ".";
	o->log_level = DEFAULT_LOGLEVEL;
	o->timeout = CR_DEFAULT_TIMEOUT;
	o->cycles = 1;
	o->status_fd = -1;
	o->ps_listen_fd = -1;
	o->ps_sock_fd = -1;
	o->cpu_cap = 7; /* CPU_CAP_ALL */
	o->rounds = 8;
	o->ghost_limit = CR_DEFAULT_GHOST_LIMIT;
}

void cr_options_fini(struct cr_options *o)
{
	free(o->external);
	free(o->veth_pairs);
	o->veth_pairs = NULL;
	free(o->cgroup_roots);
	o->cgroup_roots = NULL;
	o->n_cgroup_roots = 0;
	free(o->cgroup_dump_ctrls);
	o->cgroup_dump_ctrls = NULL;
	o->n_cgroup_dump_ctrls = 0;
	free(o->inherit_fd);
	free(o->close_fds);
	o->close_fds = NULL;
	o->external = NULL;
	o->inherit_fd = NULL;
	free(o->enable_fs);
	o->enable_fs = NULL;
	o->n_enable_fs = 0;
	while (o->n_owned > 0)
		free((char *)o->owned[--o->n_owned]);
	free(o->owned);
	o->owned = NULL;
	cli_config_free(o->config);
	o->config = NULL;
}
