// SPDX-License-Identifier: GPL-2.0
/*
 * The RPC's handling of what a client sends (criu-like/rpc/): the input is
 * one datagram, decoded as a criu_req; its criu_opts, if any, translated
 * for a dump and for a restore. Nothing is opened or run.
 */
#include <stdlib.h>

#include "fuzz.h"
#include "log.h"
#include "options.h"
#include "rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cr_options o;
	struct rpc_opts ro;
	CriuReq *req;
	char err[256];

	log_set_level(-1);
	if (rpc_decode_req(data, size, &req, err, sizeof(err)))
		return 0;
	if (req->opts) {
		cr_options_init(&o);
		rpc_opts_translate(req->opts, CRIU_REQ_TYPE__DUMP, &o, &ro, err, sizeof(err));
		cr_options_fini(&o);
		cr_options_init(&o);
		rpc_opts_translate(req->opts, CRIU_REQ_TYPE__RESTORE, &o, &ro, err, sizeof(err));
		cr_options_fini(&o);
	}
	criu_req__free_unpacked(req, NULL);
	return 0;
}
