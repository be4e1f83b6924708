// SPDX-License-Identifier: GPL-2.0
/*
 * The requests: one conversation each (criu_local_dump_iters() several
 * requests on one), the answer turned into libcriu's return values: the
 * request's result, or -EBADE with errno set to criu-like's cr_errno and its
 * cr_errmsg kept for criu_like_get_errmsg().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib-int.h"

/* The answer to req on c: 0 and *resp when it says success, else a negative code. */
static int call(struct lib_conv *c, CriuReq *req, CriuResp **resp)
{
	int ret = lib_conv_call(c, req, resp);
	CriuResp *r = *resp;

	if (ret)
		return ret;
	if (r->success)
		return 0;
	snprintf(c->opts->errmsg, sizeof(c->opts->errmsg), "%s",
		 r->cr_errmsg ?: "criu-like answered with a failure");
	/* CRIU's -EINVAL: a request type criu-like does not know */
	ret = r->type == CRIU_REQ_TYPE__EMPTY && req->type != CRIU_REQ_TYPE__EMPTY ? -EINVAL
										   : -EBADE;
	errno = r->has_cr_errno ? abs(r->cr_errno) : 0;
	criu_resp__free_unpacked(r, NULL);
	*resp = NULL;
	return ret;
}

/* One request in a conversation of its own; errno as libcriu sets it. */
static int request(criu_opts *opts, CriuReq *req, bool force_swrk, CriuResp **resp)
{
	struct lib_conv c;
	int ret, err;

	*resp = NULL;
	if (!opts)
		return -EINVAL;
	ret = lib_conv_start(&c, opts, force_swrk);
	if (ret)
		return ret;
	errno = 0;
	ret = call(&c, req, resp);
	err = ret ? errno : 0;
	lib_conv_end(&c);
	errno = err;
	return ret;
}

int criu_local_check(criu_opts *opts)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	req.type = CRIU_REQ_TYPE__CHECK;
	ret = request(opts, &req, false, &resp);
	if (resp)
		criu_resp__free_unpacked(resp, NULL);
	return ret;
}

int criu_check(void)
{
	return criu_local_check(lib_global_opts);
}

/*
 * libcriu sends SINGLE_PRE_DUMP for criu_pre_dump(); criu-like's PRE_DUMP
 * is that (one pre-dump, the tracking kept for the next request), and the
 * iterative PRE_DUMP of CRIU is a conversation of PRE_DUMPs with keep_open.
 */
static int dump(criu_opts *opts, CriuReqType type)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	req.type = type;
	req.opts = opts ? opts->rpc : NULL;
	ret = request(opts, &req, false, &resp);
	if (resp) {
		/* 1: the process that called the dump runs again, restored (a self-dump) */
		ret = resp->dump && resp->dump->has_restored && resp->dump->restored;
		criu_resp__free_unpacked(resp, NULL);
	}
	return ret;
}

int criu_local_dump(criu_opts *opts)
{
	return dump(opts, CRIU_REQ_TYPE__DUMP);
}

int criu_dump(void)
{
	return criu_local_dump(lib_global_opts);
}

int criu_local_pre_dump(criu_opts *opts)
{
	return dump(opts, CRIU_REQ_TYPE__PRE_DUMP);
}

int criu_pre_dump(void)
{
	return criu_local_pre_dump(lib_global_opts);
}

int criu_local_dump_iters(criu_opts *opts, int (*more)(criu_predump_info pi))
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp = NULL;
	struct lib_conv c;
	int ret, err;

	/* as libcriu: a self-dump cannot iterate, and iterating needs more() */
	if (!opts || !more || !opts->rpc->has_pid)
		return -EINVAL;
	ret = lib_conv_start(&c, opts, false);
	if (ret)
		return ret;
	req.type = CRIU_REQ_TYPE__PRE_DUMP;
	req.has_keep_open = true;
	req.keep_open = true;
	do {
		req.opts = opts->rpc; /* more() may have changed them */
		errno = 0;
		ret = call(&c, &req, &resp);
		if (ret)
			goto out;
		criu_resp__free_unpacked(resp, NULL);
		ret = more(NULL);
	} while (ret > 0);
	if (ret == 0) {
		req.type = CRIU_REQ_TYPE__DUMP;
		req.keep_open = false;
		req.opts = opts->rpc;
		errno = 0;
		ret = call(&c, &req, &resp);
		if (!ret)
			criu_resp__free_unpacked(resp, NULL);
	}
out:
	err = ret ? errno : 0;
	lib_conv_end(&c);
	errno = err;
	return ret;
}

int criu_dump_iters(int (*more)(criu_predump_info pi))
{
	return criu_local_dump_iters(lib_global_opts, more);
}

static int restore(criu_opts *opts, bool child)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	req.type = CRIU_REQ_TYPE__RESTORE;
	req.opts = opts ? opts->rpc : NULL;
	ret = request(opts, &req, child, &resp);
	if (resp) {
		ret = resp->restore ? resp->restore->pid : 0;
		if (ret <= 0)
			ret = lib_fail(opts, -EBADMSG, "the RESTORE answer has no pid");
		criu_resp__free_unpacked(resp, NULL);
	}
	return ret;
}

int criu_local_restore(criu_opts *opts)
{
	return restore(opts, false);
}

int criu_restore(void)
{
	return criu_local_restore(lib_global_opts);
}

/*
 * As libcriu: the tree restored as a child of the caller, through swrk
 * whatever the options say, with rst_sibling (the root cloned with
 * CLONE_PARENT by criu-like, Documentation/rpc.md).
 */
int criu_local_restore_child(criu_opts *opts)
{
	int ret;

	if (!opts)
		return -EINVAL;
	opts->rpc->has_rst_sibling = true;
	opts->rpc->rst_sibling = true;
	ret = restore(opts, true);
	opts->rpc->has_rst_sibling = false;
	opts->rpc->rst_sibling = false;
	return ret;
}

int criu_restore_child(void)
{
	return criu_local_restore_child(lib_global_opts);
}

int criu_local_get_version(criu_opts *opts)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	CriuVersion *v;
	int ret;

	req.type = CRIU_REQ_TYPE__VERSION;
	ret = request(opts, &req, false, &resp);
	if (!resp)
		return ret;
	v = resp->version;
	if (v) {
		ret = v->major_number * 10000 + v->minor_number * 100;
		if (v->has_sublevel)
			ret += v->sublevel;
		/* a build from git counts as the next minor, as runc counts it */
		if (v->gitid)
			ret = ret - ret % 100 + 100;
	} else {
		ret = lib_fail(opts, -EBADMSG, "the VERSION answer has no version");
	}
	criu_resp__free_unpacked(resp, NULL);
	return ret;
}

int criu_get_version(void)
{
	return criu_local_get_version(lib_global_opts);
}

int criu_local_check_version(criu_opts *opts, int minimum)
{
	int version = criu_local_get_version(opts);

	if (version < 0)
		return version;
	return version >= minimum;
}

int criu_check_version(int minimum)
{
	return criu_local_check_version(lib_global_opts, minimum);
}

int criu_local_feature_check(criu_opts *opts, struct criu_feature_check *features, size_t size)
{
	struct criu_feature_check f = { 0 };
	CriuFeatures ask = CRIU_FEATURES__INIT;
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	if (!features || size > sizeof(f))
		return -EINVAL;
	memcpy(&f, features, size);
	ask.has_mem_track = ask.mem_track = f.mem_track;
	ask.has_lazy_pages = ask.lazy_pages = f.lazy_pages;
	ask.has_pidfd_store = ask.pidfd_store = f.pidfd_store;
	req.type = CRIU_REQ_TYPE__FEATURE_CHECK;
	req.features = &ask;
	ret = request(opts, &req, false, &resp);
	if (!resp)
		return ret;
	memset(&f, 0, sizeof(f));
	if (resp->features) {
		f.mem_track = resp->features->has_mem_track && resp->features->mem_track;
		f.lazy_pages = resp->features->has_lazy_pages && resp->features->lazy_pages;
		f.pidfd_store = resp->features->has_pidfd_store && resp->features->pidfd_store;
	}
	memcpy(features, &f, size);
	criu_resp__free_unpacked(resp, NULL);
	return 0;
}

int criu_feature_check(struct criu_feature_check *features, size_t size)
{
	return criu_local_feature_check(lib_global_opts, features, size);
}
