/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_JSON_H
#define CRIU_LIKE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A small JSON reader and writer for decode/encode. Numbers keep their text,
 * so 64-bit integers survive exactly. Strings are byte strings: \u0000 and
 * bytes >= 0x80 pass through unchanged (UTF-8 is not checked).
 */

#define JSON_MAX_DEPTH 64

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_value {
	enum json_type type;
	bool boolean;
	char *str; /* STRING: the bytes (NUL-terminated too); NUMBER: its text */
	size_t len; /* of str */
	size_t n; /* ARRAY, OBJECT: number of items */
	struct json_value **items;
	char **keys; /* OBJECT: the key of each item, in input order */
};

/*
 * Parse @len bytes of @text: one value, nothing but white space after it.
 * NULL with errno (EINVAL for bad input, the reason with line and column in
 * @err; ENOMEM) on failure. Duplicate keys in an object are refused.
 */
struct json_value *json_parse(const char *text, size_t len, char *err, size_t errlen);
void json_free(struct json_value *v);

/* The value of @key in object @o, NULL if absent (or @o is not an object). */
const struct json_value *json_get(const struct json_value *o, const char *key);
/* Integer numbers exactly: -EINVAL when not an integer of that sign, -ERANGE when too big. */
int json_to_u64(const struct json_value *v, uint64_t *ret);
int json_to_i64(const struct json_value *v, int64_t *ret);
int json_to_double(const struct json_value *v, double *ret);
const char *json_type_name(enum json_type t);

/* Writer: pretty-printed JSON into a growing buffer; errors are sticky and read by jw_finish. */
struct json_writer {
	char *buf;
	size_t len, cap;
	int err;
	int depth;
	bool has_items[JSON_MAX_DEPTH + 1];
	bool after_key;
};

void jw_init(struct json_writer *w);
void jw_free(struct json_writer *w);
void jw_begin_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_begin_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
void jw_key(struct json_writer *w, const char *key);
void jw_string(struct json_writer *w, const char *s, size_t len);
void jw_u64(struct json_writer *w, uint64_t v);
void jw_i64(struct json_writer *w, int64_t v);
void jw_double(struct json_writer *w, double v);
void jw_bool(struct json_writer *w, bool v);
/*
 * Byte strings: printable ASCII as the text itself; anything else, and text
 * that itself starts with "base64:", as "base64:" then base64 (with padding).
 */
void jw_bytes(struct json_writer *w, const uint8_t *data, size_t len);
/* The inverse: a malloc'ed copy (NUL after the end). -EINVAL for bad base64 or a non-string. */
int json_to_bytes(const struct json_value *v, uint8_t **ret, size_t *ret_len);
/* 0 when the document is complete (ends with a newline), else -ENOMEM or -EINVAL. */
int jw_finish(struct json_writer *w);

#endif
