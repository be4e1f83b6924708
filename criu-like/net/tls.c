// SPDX-License-Identifier: GPL-2.0
/*
 * TLS for the page server (Documentation/page-server.md), with GnuTLS and
 * CRIU's options and default paths: --tls-cacert (the CA both ends trust),
 * --tls-cacrl (its revocation list, optional), --tls-cert and --tls-key (this
 * end's certificate). Both ends are authenticated: the server requires a
 * client certificate signed by the CA; the client checks the server's
 * certificate against the CA and its name against --address, unless
 * --tls-no-cn-verify.
 *
 * GnuTLS is loaded at the first TLS connection (dlopen("libgnutls.so.30"),
 * include/dl-lib.h), not linked: its load and its constructors (about 1.3 ms here) would slow
 * the start of every run, a restore's included, which is inside the pause of
 * the restored tree's connections (Documentation/network-lock.md).
 */
#define LOG_PREFIX "tls: "

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "dl-lib.h"
#include "log.h"
#include "page-server.h"
#include "util.h"

/* CRIU's defaults (criu/include/tls.h) */
#define TLS_CACERT "/etc/pki/CA/cacert.pem"
#define TLS_CACRL "/etc/pki/CA/cacrl.pem"
#define TLS_CERT "/etc/pki/criu/cert.pem"
#define TLS_KEY "/etc/pki/criu/private/key.pem"

#define TLS_SONAME "libgnutls.so.30"

/* What this file calls of GnuTLS (gnutls_free is a variable holding a function). */
#define TLS_FUNCS(X)                                    \
	X(gnutls_certificate_allocate_credentials)      \
	X(gnutls_certificate_free_credentials)          \
	X(gnutls_certificate_server_set_request)        \
	X(gnutls_certificate_set_x509_crl_file)         \
	X(gnutls_certificate_set_x509_key_file)         \
	X(gnutls_certificate_set_x509_trust_file)       \
	X(gnutls_certificate_verification_status_print) \
	X(gnutls_certificate_verify_peers3)             \
	X(gnutls_credentials_set)                       \
	X(gnutls_deinit)                                \
	X(gnutls_error_is_fatal)                        \
	X(gnutls_free)                                  \
	X(gnutls_handshake)                             \
	X(gnutls_handshake_set_timeout)                 \
	X(gnutls_init)                                  \
	X(gnutls_protocol_get_name)                     \
	X(gnutls_protocol_get_version)                  \
	X(gnutls_record_recv)                           \
	X(gnutls_record_send)                           \
	X(gnutls_set_default_priority)                  \
	X(gnutls_strerror)                              \
	X(gnutls_transport_set_int2)

DL_LIB(TLS_SONAME, "TLS", TLS_FUNCS);

/* Every call below goes through the table: the names stand for its entries. */
#define gnutls_certificate_allocate_credentials (*dl_fn.gnutls_certificate_allocate_credentials)
#define gnutls_certificate_free_credentials (*dl_fn.gnutls_certificate_free_credentials)
#define gnutls_certificate_server_set_request (*dl_fn.gnutls_certificate_server_set_request)
#define gnutls_certificate_set_x509_crl_file (*dl_fn.gnutls_certificate_set_x509_crl_file)
#define gnutls_certificate_set_x509_key_file (*dl_fn.gnutls_certificate_set_x509_key_file)
#define gnutls_certificate_set_x509_trust_file (*dl_fn.gnutls_certificate_set_x509_trust_file)
#define gnutls_certificate_verification_status_print \
	(*dl_fn.gnutls_certificate_verification_status_print)
#define gnutls_certificate_verify_peers3 (*dl_fn.gnutls_certificate_verify_peers3)
#define gnutls_credentials_set (*dl_fn.gnutls_credentials_set)
#define gnutls_deinit (*dl_fn.gnutls_deinit)
#define gnutls_error_is_fatal (*dl_fn.gnutls_error_is_fatal)
#define gnutls_free (*dl_fn.gnutls_free)
#define gnutls_handshake (*dl_fn.gnutls_handshake)
#define gnutls_handshake_set_timeout (*dl_fn.gnutls_handshake_set_timeout)
#define gnutls_init (*dl_fn.gnutls_init)
#define gnutls_protocol_get_name (*dl_fn.gnutls_protocol_get_name)
#define gnutls_protocol_get_version (*dl_fn.gnutls_protocol_get_version)
#define gnutls_record_recv (*dl_fn.gnutls_record_recv)
#define gnutls_record_send (*dl_fn.gnutls_record_send)
#define gnutls_set_default_priority (*dl_fn.gnutls_set_default_priority)
#define gnutls_strerror (*dl_fn.gnutls_strerror)
#define gnutls_transport_set_int2 (*dl_fn.gnutls_transport_set_int2)

struct tls {
	gnutls_session_t s;
	gnutls_certificate_credentials_t cred;
};

static void tls_free(struct tls *t)
{
	if (!t)
		return;
	if (t->s)
		gnutls_deinit(t->s);
	if (t->cred)
		gnutls_certificate_free_credentials(t->cred);
	free(t);
}

static int creds(struct tls *t, const struct cr_options *o, const char *peer)
{
	const char *ca = o->tls_cacert ? o->tls_cacert : TLS_CACERT;
	const char *crl = o->tls_cacrl ? o->tls_cacrl : TLS_CACRL;
	const char *cert = o->tls_cert ? o->tls_cert : TLS_CERT;
	const char *key = o->tls_key ? o->tls_key : TLS_KEY;
	int ret;

	ret = gnutls_certificate_allocate_credentials(&t->cred);
	if (ret < 0) {
		pr_err("%s: %s\n", peer, gnutls_strerror(ret));
		return -ENOMEM;
	}
	ret = gnutls_certificate_set_x509_trust_file(t->cred, ca, GNUTLS_X509_FMT_PEM);
	if (ret <= 0) {
		pr_err("%s: cannot load the CA certificate %s: %s\n", peer, ca,
		       ret ? gnutls_strerror(ret) : "no certificate in it");
		return -EINVAL;
	}
	/* as CRIU: the default revocation list is optional, one given must load */
	if (o->tls_cacrl || !access(crl, R_OK)) {
		ret = gnutls_certificate_set_x509_crl_file(t->cred, crl, GNUTLS_X509_FMT_PEM);
		if (ret < 0) {
			pr_err("%s: cannot load the revocation list %s: %s\n", peer, crl,
			       gnutls_strerror(ret));
			return -EINVAL;
		}
	}
	ret = gnutls_certificate_set_x509_key_file(t->cred, cert, key, GNUTLS_X509_FMT_PEM);
	if (ret < 0) {
		pr_err("%s: cannot load the certificate %s with the key %s: %s\n", peer, cert, key,
		       gnutls_strerror(ret));
		return -EINVAL;
	}
	return 0;
}

/* The peer's certificate: signed by the CA, not revoked, valid now, and named @host if given. */
static int verify(struct tls *t, const char *peer, const char *host)
{
	gnutls_datum_t out = { 0 };
	unsigned int status = 0;
	int ret;

	ret = gnutls_certificate_verify_peers3(t->s, host, &status);
	if (ret < 0) {
		pr_err("%s: cannot verify the peer's certificate: %s\n", peer,
		       gnutls_strerror(ret));
		return -EACCES;
	}
	if (!status)
		return 0;
	if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) >= 0) {
		pr_err("%s: the peer's certificate is refused: %s%s%s\n", peer, (char *)out.data,
		       host ? "; name checked: " : "", host ? host : "");
		gnutls_free(out.data);
	} else {
		pr_err("%s: the peer's certificate is refused (status %#x)\n", peer, status);
	}
	return -EACCES;
}

static int handshake(struct ps_conn *c, const struct cr_options *o, bool server, const char *host)
{
	struct tls *t;
	int ret, err;

	err = dl_lib_load();
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = creds(t, o, c->peer);
	if (!err && gnutls_init(&t->s, server ? GNUTLS_SERVER : GNUTLS_CLIENT) < 0)
		err = -ENOMEM;
	if (!err && (gnutls_set_default_priority(t->s) < 0 ||
		     gnutls_credentials_set(t->s, GNUTLS_CRD_CERTIFICATE, t->cred) < 0))
		err = -EINVAL;
	if (err) {
		tls_free(t);
		return err;
	}
	if (server)
		gnutls_certificate_server_set_request(t->s, GNUTLS_CERT_REQUIRE);
	gnutls_transport_set_int(t->s, c->fd);
	gnutls_handshake_set_timeout(t->s, GNUTLS_DEFAULT_HANDSHAKE_TIMEOUT);
	do
		ret = gnutls_handshake(t->s);
	while (ret < 0 && !gnutls_error_is_fatal(ret));
	if (ret < 0) {
		pr_err("%s: TLS handshake failed: %s\n", c->peer, gnutls_strerror(ret));
		tls_free(t);
		return -ECONNABORTED;
	}
	err = verify(t, c->peer, server || o->tls_no_cn_verify ? NULL : host);
	if (err) {
		tls_free(t);
		return err;
	}
	pr_info("%s: TLS established (%s), the peer's certificate verified\n", c->peer,
		gnutls_protocol_get_name(gnutls_protocol_get_version(t->s)));
	c->tls = t;
	return 0;
}

int ps_tls_client(struct ps_conn *c, const struct cr_options *o, const char *host)
{
	return handshake(c, o, false, host);
}

int ps_tls_server(struct ps_conn *c, const struct cr_options *o)
{
	return handshake(c, o, true, NULL);
}

/* @ret of a gnutls record call as send()/recv() would say it: -errno, errno set too. */
static ssize_t tls_ret(ssize_t ret)
{
	int err;

	if (ret >= 0)
		return ret;
	switch (ret) {
	case GNUTLS_E_INTERRUPTED:
	case GNUTLS_E_AGAIN:
		err = EINTR;
		break;
	case GNUTLS_E_PREMATURE_TERMINATION:
	case GNUTLS_E_PUSH_ERROR:
	case GNUTLS_E_PULL_ERROR:
		err = ECONNRESET;
		break;
	default:
		pr_err("%s\n", gnutls_strerror((int)ret));
		err = EPROTO;
	}
	errno = err;
	return -err;
}

ssize_t ps_tls_send(void *tls, const void *buf, size_t len)
{
	return tls_ret(gnutls_record_send(((struct tls *)tls)->s, buf, len));
}

ssize_t ps_tls_recv(void *tls, void *buf, size_t len)
{
	return tls_ret(gnutls_record_recv(((struct tls *)tls)->s, buf, len));
}

void ps_tls_close(void *tls)
{
	tls_free(tls);
}
