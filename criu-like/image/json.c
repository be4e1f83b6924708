// SPDX-License-Identifier: GPL-2.0
#define LOG_PREFIX "json: "
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* ---- reader ------------------------------------------------------------------------------- */

struct json_parser {
	const char *p, *start, *end;
	char *err;
	size_t errlen;
	int depth;
	int error; /* 0, EINVAL or ENOMEM */
};

static void __attribute__((format(printf, 2, 3)))
jp_fail(struct json_parser *jp, const char *fmt, ...)
{
	int line = 1, col = 1;
	char why[160];
	va_list ap;

	if (jp->error)
		return;
	jp->error = EINVAL;
	for (const char *q = jp->start; q < jp->p; q++, col++)
		if (*q == '\n') {
			line++;
			col = 0;
		}
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (jp->err && jp->errlen)
		snprintf(jp->err, jp->errlen, "line %d, column %d: %s", line, col, why);
}

static void jp_space(struct json_parser *jp)
{
	while (jp->p < jp->end &&
	       (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
		jp->p++;
}

static struct json_value *jv_new(struct json_parser *jp, enum json_type t)
{
	struct json_value *v = calloc(1, sizeof(*v));

	if (!v)
		jp->error = ENOMEM;
	else
		v->type = t;
	return v;
}

static bool jp_literal(struct json_parser *jp, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, lit, n))
		return false;
	jp->p += n;
	return true;
}

static long jp_hex4(struct json_parser *jp)
{
	long v = 0;

	if (jp->end - jp->p < 4) {
		jp_fail(jp, "short \\u escape");
		return -EINVAL;
	}
	for (int i = 0; i < 4; i++) {
		int h = hex_digit(jp->p[i]);

		if (h < 0) {
			jp_fail(jp, "bad hex digit in \\u escape");
			return -EINVAL;
		}
		v = v * 16 + h;
	}
	jp->p += 4;
	return v;
}

static size_t utf8_put(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | (cp >> 6);
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = 0xe0 | (cp >> 12);
		out[1] = 0x80 | ((cp >> 6) & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	out[0] = 0xf0 | (cp >> 18);
	out[1] = 0x80 | ((cp >> 12) & 0x3f);
	out[2] = 0x80 | ((cp >> 6) & 0x3f);
	out[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* One escape after the backslash; appends to @out, returns the bytes written or 0 on error. */
static size_t jp_escape(struct json_parser *jp, char *out)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	long cp, lo;

	if (jp->p >= jp->end) {
		jp_fail(jp, "unterminated string");
		return 0;
	}
	e = strchr(from, *jp->p);
	if (e && *jp->p) {
		jp->p++;
		out[0] = to[e - from];
		return 1;
	}
	if (*jp->p != 'u') {
		jp_fail(jp, "bad escape \\%c", *jp->p);
		return 0;
	}
	jp->p++;
	cp = jp_hex4(jp);
	if (cp < 0)
		return 0;
	if (cp >= 0xdc00 && cp <= 0xdfff) {
		jp_fail(jp, "lone low surrogate");
		return 0;
	}
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (!jp_literal(jp, "\\u")) {
			jp_fail(jp, "high surrogate without its low half");
			return 0;
		}
		lo = jp_hex4(jp);
		if (lo < 0xdc00 || lo > 0xdfff) {
			jp_fail(jp, "bad low surrogate");
			return 0;
		}
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return utf8_put(out, cp);
}

/* A string; the escaped form is never shorter than the result, so its length bounds the buffer. */
static char *jp_string(struct json_parser *jp, size_t *ret_len)
{
	const char *q = ++jp->p;
	size_t len = 0;
	char *out;

	while (q < jp->end && *q != '"')
		q += (*q == '\\' && q + 1 < jp->end) ? 2 : 1;
	if (q >= jp->end) {
		jp_fail(jp, "unterminated string");
		return NULL;
	}
	out = malloc(q - jp->p + 1);
	if (!out) {
		jp->error = ENOMEM;
		return NULL;
	}
	while (*jp->p != '"') {
		unsigned char c = *jp->p;
		size_t n;

		if (c < 0x20) {
			jp_fail(jp, "control character %#x in a string", c);
			break;
		}
		if (c != '\\') {
			out[len++] = c;
			jp->p++;
			continue;
		}
		jp->p++;
		n = jp_escape(jp, out + len);
		if (!n)
			break;
		len += n;
	}
	if (jp->error) {
		free(out);
		return NULL;
	}
	jp->p++;
	out[len] = '\0';
	*ret_len = len;
	return out;
}

static struct json_value *jp_number(struct json_parser *jp)
{
	const char *s = jp->p;
	struct json_value *v;

	if (jp->p < jp->end && *jp->p == '-')
		jp->p++;
	if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9') {
		jp_fail(jp, "bad number");
		return NULL;
	}
	if (*jp->p == '0')
		jp->p++;
	else
		while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
			jp->p++;
	if (jp->p < jp->end && *jp->p == '.') {
		const char *d = ++jp->p;

		while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
			jp->p++;
		if (jp->p == d) {
			jp_fail(jp, "bad number: no digit after the point");
			return NULL;
		}
	}
	if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E')) {
		const char *d;

		jp->p++;
		if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
			jp->p++;
		d = jp->p;
		while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
			jp->p++;
		if (jp->p == d) {
			jp_fail(jp, "bad number: empty exponent");
			return NULL;
		}
	}
	v = jv_new(jp, JSON_NUMBER);
	if (v && !(v->str = strndup(s, jp->p - s))) {
		jp->error = ENOMEM;
		free(v);
		return NULL;
	}
	if (v)
		v->len = jp->p - s;
	return v;
}

static struct json_value *jp_value(struct json_parser *jp);

static int jv_append(struct json_parser *jp, struct json_value *c, char *key,
		     struct json_value *item)
{
	if ((c->n & (c->n - 1)) == 0) { /* grow at powers of two */
		size_t cap = c->n ? c->n * 2 : 4;
		struct json_value **items = realloc(c->items, cap * sizeof(*items));
		char **keys = items ? realloc(c->keys, cap * sizeof(*keys)) : NULL;

		if (items)
			c->items = items;
		if (!items || !keys) {
			jp->error = ENOMEM;
			return -ENOMEM;
		}
		c->keys = keys;
	}
	c->items[c->n] = item;
	c->keys[c->n] = key;
	c->n++;
	return 0;
}

/* Items of an array or object, after the opening bracket. */
static int jp_items(struct json_parser *jp, struct json_value *c, char close)
{
	jp_space(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return 0;
	}
	for (;;) {
		_cleanup_free_ char *key = NULL;
		struct json_value *item;
		size_t klen;

		jp_space(jp);
		if (c->type == JSON_OBJECT) {
			if (jp->p >= jp->end || *jp->p != '"')
				return jp_fail(jp, "expected a key string"), -EINVAL;
			key = jp_string(jp, &klen);
			if (!key)
				return -EINVAL;
			if (strlen(key) != klen)
				return jp_fail(jp, "NUL in a key"), -EINVAL;
			if (json_get(c, key))
				return jp_fail(jp, "duplicate key \"%s\"", key), -EINVAL;
			jp_space(jp);
			if (jp->p >= jp->end || *jp->p++ != ':')
				return jp_fail(jp, "expected ':'"), -EINVAL;
		}
		item = jp_value(jp);
		if (!item)
			return -EINVAL;
		if (jv_append(jp, c, key, item)) {
			json_free(item);
			return -ENOMEM;
		}
		key = NULL;
		jp_space(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return 0;
		}
		return jp_fail(jp, "expected ',' or '%c'", close), -EINVAL;
	}
}

static struct json_value *jp_container(struct json_parser *jp, enum json_type t)
{
	struct json_value *v;

	if (++jp->depth > JSON_MAX_DEPTH) {
		jp_fail(jp, "nested deeper than %d", JSON_MAX_DEPTH);
		return NULL;
	}
	jp->p++;
	v = jv_new(jp, t);
	if (v && jp_items(jp, v, t == JSON_OBJECT ? '}' : ']')) {
		json_free(v);
		v = NULL;
	}
	jp->depth--;
	return v;
}

static struct json_value *jp_value(struct json_parser *jp)
{
	struct json_value *v;

	jp_space(jp);
	if (jp->p >= jp->end) {
		jp_fail(jp, "unexpected end of input");
		return NULL;
	}
	switch (*jp->p) {
	case '{':
		return jp_container(jp, JSON_OBJECT);
	case '[':
		return jp_container(jp, JSON_ARRAY);
	case '"':
		v = jv_new(jp, JSON_STRING);
		if (v && !(v->str = jp_string(jp, &v->len))) {
			free(v);
			v = NULL;
		}
		return v;
	case 't':
	case 'f':
	case 'n':
		if (jp_literal(jp, "true") || jp_literal(jp, "false")) {
			v = jv_new(jp, JSON_BOOL);
			if (v)
				v->boolean = jp->p[-1] == 'e' && jp->p[-2] == 'u';
			return v;
		}
		if (jp_literal(jp, "null"))
			return jv_new(jp, JSON_NULL);
		break;
	default:
		if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9'))
			return jp_number(jp);
	}
	jp_fail(jp, "unexpected character '%c'", *jp->p);
	return NULL;
}

struct json_value *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct json_parser jp = {
		.p = text, .start = text, .end = text + len, .err = err, .errlen = errlen
	};
	struct json_value *v;

	if (err && errlen)
		err[0] = '\0';
	v = jp_value(&jp);
	if (v) {
		jp_space(&jp);
		if (jp.p != jp.end) {
			jp_fail(&jp, "trailing characters after the value");
			json_free(v);
			v = NULL;
		}
	}
	if (!v) {
		if (jp.error == ENOMEM && err && errlen)
			snprintf(err, errlen, "out of memory");
		errno = jp.error ? jp.error : EINVAL;
	}
	return v;
}

void json_free(struct json_value *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

const struct json_value *json_get(const struct json_value *o, const char *key)
{
	if (!o || o->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

int json_to_u64(const struct json_value *v, uint64_t *ret)
{
	uint64_t x = 0;

	if (!v || v->type != JSON_NUMBER || !v->len || v->str[0] == '-' ||
	    strspn(v->str, "0123456789") != v->len)
		return -EINVAL;
	for (size_t i = 0; i < v->len; i++) {
		unsigned d = v->str[i] - '0';

		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*ret = x;
	return 0;
}

int json_to_i64(const struct json_value *v, int64_t *ret)
{
	struct json_value abs;
	bool neg;
	uint64_t x;
	int r;

	if (!v || v->type != JSON_NUMBER)
		return -EINVAL;
	neg = v->str[0] == '-';
	abs = *v;
	abs.str += neg;
	abs.len -= neg;
	r = json_to_u64(&abs, &x);
	if (r)
		return r;
	if (x > (uint64_t)INT64_MAX + neg)
		return -ERANGE;
	*ret = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

int json_to_double(const struct json_value *v, double *ret)
{
	if (!v || v->type != JSON_NUMBER)
		return -EINVAL;
	*ret = strtod(v->str, NULL);
	return 0;
}

const char *json_type_name(enum json_type t)
{
	static const char *const names[] = { "null",   "boolean", "number",
					     "string", "array",	  "object" };

	return (unsigned)t < ARRAY_SIZE(names) ? names[t] : "?";
}

/* ---- writer ------------------------------------------------------------------------------- */

void jw_init(struct json_writer *w)
{
	memset(w, 0, sizeof(*w));
}

void jw_free(struct json_writer *w)
{
	free(w->buf);
	jw_init(w);
}

static void jw_put(struct json_writer *w, const char *s, size_t n)
{
	if (w->err)
		return;
	if (w->len + n + 1 > w->cap) {
		size_t cap = max(w->cap * 2, w->len + n + 4096);
		char *buf = realloc(w->buf, cap);

		if (!buf) {
			w->err = -ENOMEM;
			return;
		}
		w->buf = buf;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void jw_puts(struct json_writer *w, const char *s)
{
	jw_put(w, s, strlen(s));
}

static void jw_indent(struct json_writer *w)
{
	jw_put(w, "\n", 1);
	for (int i = 0; i < w->depth; i++)
		jw_put(w, "  ", 2);
}

/* Before any value: the comma and indentation its position needs. */
static void jw_pre(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth == 0) {
		if (w->has_items[0])
			w->err = w->err ?: -EINVAL; /* a second top-level value */
		w->has_items[0] = true;
		return;
	}
	if (w->has_items[w->depth])
		jw_put(w, ",", 1);
	w->has_items[w->depth] = true;
	jw_indent(w);
}

static void jw_open(struct json_writer *w, const char *c)
{
	jw_pre(w);
	jw_puts(w, c);
	if (w->depth >= JSON_MAX_DEPTH) {
		w->err = w->err ?: -EINVAL;
		return;
	}
	w->has_items[++w->depth] = false;
}

static void jw_close(struct json_writer *w, const char *c)
{
	if (w->depth == 0 || w->after_key) {
		w->err = w->err ?: -EINVAL;
		return;
	}
	if (w->has_items[w->depth--])
		jw_indent(w);
	jw_puts(w, c);
}

void jw_begin_object(struct json_writer *w)
{
	jw_open(w, "{");
}

void jw_end_object(struct json_writer *w)
{
	jw_close(w, "}");
}

void jw_begin_array(struct json_writer *w)
{
	jw_open(w, "[");
}

void jw_end_array(struct json_writer *w)
{
	jw_close(w, "]");
}

static void jw_quoted(struct json_writer *w, const char *s, size_t len)
{
	jw_put(w, "\"", 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = c;
			jw_put(w, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			jw_put(w, esc, 6);
		} else {
			jw_put(w, (const char *)&s[i], 1);
		}
	}
	jw_put(w, "\"", 1);
}

void jw_key(struct json_writer *w, const char *key)
{
	jw_pre(w);
	jw_quoted(w, key, strlen(key));
	jw_put(w, ": ", 2);
	w->after_key = true;
}

void jw_string(struct json_writer *w, const char *s, size_t len)
{
	jw_pre(w);
	jw_quoted(w, s, len);
}

void jw_u64(struct json_writer *w, uint64_t v)
{
	char buf[24];

	jw_pre(w);
	jw_put(w, buf, snprintf(buf, sizeof(buf), "%" PRIu64, v));
}

void jw_i64(struct json_writer *w, int64_t v)
{
	char buf[24];

	jw_pre(w);
	jw_put(w, buf, snprintf(buf, sizeof(buf), "%" PRId64, v));
}

void jw_double(struct json_writer *w, double v)
{
	char buf[32];

	jw_pre(w);
	if (!isfinite(v)) { /* JSON has no NaN or infinity */
		w->err = w->err ?: -EINVAL;
		return;
	}
	/* %.17g reads back as the same double. */
	jw_put(w, buf, snprintf(buf, sizeof(buf), "%.17g", v));
}

void jw_bool(struct json_writer *w, bool v)
{
	jw_pre(w);
	jw_puts(w, v ? "true" : "false");
}

int jw_finish(struct json_writer *w)
{
	if (!w->err && (w->depth || w->after_key || !w->has_items[0]))
		w->err = -EINVAL;
	jw_put(w, "\n", 1);
	return w->err;
}

/* ---- bytes <-> JSON strings --------------------------------------------------------------- */

#define B64_PREFIX "base64:"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Printable ASCII as it is; anything else, or text that itself starts "base64:", in base64. */
void jw_bytes(struct json_writer *w, const uint8_t *data, size_t len)
{
	_cleanup_free_ char *out = NULL;
	size_t plen = strlen(B64_PREFIX), o;
	bool text = !(len >= plen && !memcmp(data, B64_PREFIX, plen));

	for (size_t i = 0; text && i < len; i++)
		text = data[i] >= 0x20 && data[i] < 0x7f;
	if (text) {
		jw_string(w, (const char *)data, len);
		return;
	}
	out = malloc(plen + (len + 2) / 3 * 4 + 1);
	if (!out) {
		w->err = -ENOMEM;
		return;
	}
	memcpy(out, B64_PREFIX, plen);
	o = plen;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = data[i] << 16 | (i + 1 < len ? data[i + 1] << 8 : 0) |
			     (i + 2 < len ? data[i + 2] : 0);

		out[o++] = b64[v >> 18];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? b64[v & 63] : '=';
	}
	jw_string(w, out, o);
}

int json_to_bytes(const struct json_value *v, uint8_t **ret, size_t *ret_len)
{
	size_t plen = strlen(B64_PREFIX), n = 0, len;
	const char *s;
	uint8_t *out;
	uint32_t acc = 0;
	size_t pad = 0;
	int bits = 0;

	if (v->type != JSON_STRING)
		return -EINVAL;
	if (v->len < plen || memcmp(v->str, B64_PREFIX, plen)) {
		out = malloc(v->len + 1);
		if (!out)
			return -ENOMEM;
		memcpy(out, v->str, v->len + 1);
		*ret = out;
		*ret_len = v->len;
		return 0;
	}
	s = v->str + plen;
	len = v->len - plen;
	if (len % 4)
		return -EINVAL;
	out = malloc(len / 4 * 3 + 1);
	if (!out)
		return -ENOMEM;
	while (pad < 2 && pad < len && s[len - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < len - pad; i++) {
		const char *p = s[i] ? strchr(b64, s[i]) : NULL;

		if (!p) {
			free(out);
			return -EINVAL;
		}
		acc = acc << 6 | (p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = acc >> bits;
		}
	}
	/* Unused low bits must be zero, so that each byte string has one encoding only. */
	if (acc & ((1u << bits) - 1)) {
		free(out);
		return -EINVAL;
	}
	out[n] = '\0';
	*ret = out;
	*ret_len = n;
	return 0;
}
