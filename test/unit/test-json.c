// SPDX-License-Identifier: GPL-2.0
/* The JSON reader and writer of decode/encode: exact numbers, escapes, bad input refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"
#include "util.h"

static struct json_value *parse(const char *text, char *err, size_t errlen)
{
	return json_parse(text, strlen(text), err, errlen);
}

static void test_bad_input(void **state __unused)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "", "unexpected end of input" },
		{ "   ", "unexpected end of input" },
		{ "[1,]", "unexpected character ']'" },
		{ "{\"a\":1,}", "expected a key string" },
		{ "{\"a\" 1}", "expected ':'" },
		{ "{\"a\":1 \"b\":2}", "expected ',' or '}'" },
		{ "[1 2]", "expected ',' or ']'" },
		{ "01", "trailing characters" },
		{ "-", "bad number" },
		{ "1.", "no digit after the point" },
		{ "1e", "empty exponent" },
		{ "+1", "unexpected character '+'" },
		{ "tru", "unexpected character 't'" },
		{ "nul", "unexpected character 'n'" },
		{ "\"abc", "unterminated string" },
		{ "\"a\\", "unterminated string" },
		{ "\"a\tb\"", "control character 0x9" },
		{ "\"\\x\"", "bad escape \\x" },
		{ "\"\\u12g4\"", "bad hex digit" },
		{ "\"\\u12\"", "short \\u escape" },
		{ "\"\\ud800\"", "high surrogate without its low half" },
		{ "\"\\ud800\\u0041\"", "bad low surrogate" },
		{ "\"\\udc00\"", "lone low surrogate" },
		{ "{\"a\":1,\"a\":2}", "duplicate key \"a\"" },
		{ "{\"a\\u0000b\":1}", "NUL in a key" },
		{ "[] []", "trailing characters" },
		{ "{}\n\n  x", "line 3, column 3" },
	};
	char err[128];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct json_value *v = parse(cases[i].text, err, sizeof(err));

		if (v)
			fail_msg("accepted: %s", cases[i].text);
		assert_int_equal(errno, EINVAL);
		if (!strstr(err, cases[i].err))
			fail_msg("%s: error \"%s\" lacks \"%s\"", cases[i].text, err, cases[i].err);
	}
}

static void test_depth_limit(void **state __unused)
{
	char text[2 * (JSON_MAX_DEPTH + 1) + 1], err[128];
	struct json_value *v;
	int n;

	for (n = JSON_MAX_DEPTH; n <= JSON_MAX_DEPTH + 1; n++) {
		memset(text, '[', n);
		memset(text + n, ']', n);
		text[2 * n] = '\0';
		v = parse(text, err, sizeof(err));
		if (n == JSON_MAX_DEPTH) {
			assert_non_null(v);
			json_free(v);
		} else {
			assert_null(v);
			assert_non_null(strstr(err, "nested deeper than 64"));
		}
	}
}

static void test_numbers(void **state __unused)
{
	struct json_value *v =
		parse("[18446744073709551615, 18446744073709551616, "
		      "-9223372036854775808, -9223372036854775809, 9223372036854775807, "
		      "1.5, 1e3, -0, 0, -1, 2.5e-3]",
		      NULL, 0);
	uint64_t u;
	int64_t s;
	double d;

	assert_non_null(v);
	assert_int_equal(v->n, 11);
	assert_int_equal(json_to_u64(v->items[0], &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(json_to_u64(v->items[1], &u), -ERANGE);
	assert_int_equal(json_to_i64(v->items[2], &s), 0);
	assert_true(s == INT64_MIN);
	assert_int_equal(json_to_i64(v->items[3], &s), -ERANGE);
	assert_int_equal(json_to_i64(v->items[4], &s), 0);
	assert_true(s == INT64_MAX);
	assert_int_equal(json_to_u64(v->items[4], &u), 0);
	assert_int_equal(json_to_u64(v->items[5], &u), -EINVAL);
	assert_int_equal(json_to_i64(v->items[6], &s), -EINVAL);
	assert_int_equal(json_to_u64(v->items[7], &u), -EINVAL);
	assert_int_equal(json_to_i64(v->items[7], &s), 0);
	assert_true(s == 0);
	assert_int_equal(json_to_u64(v->items[8], &u), 0);
	assert_int_equal(json_to_u64(v->items[9], &u), -EINVAL);
	assert_int_equal(json_to_i64(v->items[9], &s), 0);
	assert_true(s == -1);
	assert_int_equal(json_to_double(v->items[10], &d), 0);
	assert_true(d == 2.5e-3);
	assert_int_equal(json_to_u64(NULL, &u), -EINVAL);
	json_free(v);
}

static void test_strings(void **state __unused)
{
	struct json_value *v =
		parse("{\"k\": \"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u00e9\\ud83d\\ude00z\","
		      " \"raw\": \"\xc3\xa9\xff\", \"t\": true, \"f\": false, \"n\": null}",
		      NULL, 0);
	const struct json_value *k;

	assert_non_null(v);
	k = json_get(v, "k");
	assert_int_equal(k->type, JSON_STRING);
	assert_int_equal(k->len, 17);
	assert_memory_equal(k->str, "a\"\\/\b\f\n\r\t\0\xc3\xa9\xf0\x9f\x98\x80z", 17);
	/* Bytes >= 0x80 pass through as they are. */
	assert_memory_equal(json_get(v, "raw")->str, "\xc3\xa9\xff", 4);
	assert_true(json_get(v, "t")->boolean);
	assert_int_equal(json_get(v, "f")->type, JSON_BOOL);
	assert_false(json_get(v, "f")->boolean);
	assert_int_equal(json_get(v, "n")->type, JSON_NULL);
	assert_null(json_get(v, "missing"));
	assert_null(json_get(k, "k"));
	json_free(v);
}

/* What the writer writes, the reader reads back as the same values. */
static void test_writer_roundtrip(void **state __unused)
{
	static const char bin[] = "q\"\\\x01\x7f\n\xc3\xa9";
	struct json_writer w;
	struct json_value *v;
	const struct json_value *a;
	uint64_t u;
	int64_t s;
	double d;

	jw_init(&w);
	jw_begin_object(&w);
	jw_key(&w, "u");
	jw_u64(&w, UINT64_MAX);
	jw_key(&w, "a");
	jw_begin_array(&w);
	jw_i64(&w, INT64_MIN);
	jw_double(&w, 0.1);
	jw_string(&w, bin, sizeof(bin) - 1);
	jw_bool(&w, false);
	jw_begin_object(&w);
	jw_end_object(&w);
	jw_begin_array(&w);
	jw_end_array(&w);
	jw_end_array(&w);
	jw_end_object(&w);
	assert_int_equal(jw_finish(&w), 0);
	assert_true(w.buf[w.len - 1] == '\n');
	v = json_parse(w.buf, w.len, NULL, 0);
	assert_non_null(v);
	assert_int_equal(json_to_u64(json_get(v, "u"), &u), 0);
	assert_true(u == UINT64_MAX);
	a = json_get(v, "a");
	assert_int_equal(a->n, 6);
	assert_int_equal(json_to_i64(a->items[0], &s), 0);
	assert_true(s == INT64_MIN);
	assert_int_equal(json_to_double(a->items[1], &d), 0);
	assert_true(d == 0.1);
	assert_int_equal(a->items[2]->len, sizeof(bin) - 1);
	assert_memory_equal(a->items[2]->str, bin, sizeof(bin) - 1);
	assert_int_equal(a->items[4]->type, JSON_OBJECT);
	assert_int_equal(a->items[5]->n, 0);
	json_free(v);
	jw_free(&w);
}

static void test_writer_misuse(void **state __unused)
{
	struct json_writer w;

	jw_init(&w);
	jw_begin_object(&w);
	assert_int_equal(jw_finish(&w), -EINVAL); /* unclosed */
	jw_free(&w);
	jw_end_array(&w);
	assert_int_equal(jw_finish(&w), -EINVAL); /* nothing open */
	jw_free(&w);
	jw_u64(&w, 1);
	jw_u64(&w, 2);
	assert_int_equal(jw_finish(&w), -EINVAL); /* two top-level values */
	jw_free(&w);
	assert_int_equal(jw_finish(&w), -EINVAL); /* empty */
	jw_free(&w);
}

/* Byte strings: text as it is, everything else (and "base64:..." text) in base64, one encoding each. */
static void test_bytes(void **state __unused)
{
	static const struct {
		const char *in;
		size_t len;
		const char *json;
	} ok[] = {
		{ "", 0, "\"\"" },
		{ "hello /x", 8, "\"hello /x\"" },
		{ "base64:", 7, "\"base64:YmFzZTY0Og==\"" },
		{ "\0", 1, "\"base64:AA==\"" },
		{ "a\nb", 3, "\"base64:YQpi\"" },
		{ "\xff\xfe", 2, "\"base64://4=\"" },
	};
	static const char *const bad[] = {
		"\"base64:abc\"",
		"\"base64:ab=c\"",
		"\"base64:AB==\"",
		"\"base64:A===\"",
		"\"base64:a!==\"",
		"\"base64:\\u0000AAA\"",
		"12",
	};
	uint8_t *data;
	size_t len;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct json_writer w;
		struct json_value *v;

		jw_init(&w);
		jw_bytes(&w, (const uint8_t *)ok[i].in, ok[i].len);
		assert_int_equal(jw_finish(&w), 0);
		w.buf[w.len - 1] = '\0';
		assert_string_equal(w.buf, ok[i].json);
		v = json_parse(w.buf, w.len - 1, NULL, 0);
		assert_int_equal(json_to_bytes(v, &data, &len), 0);
		assert_int_equal(len, ok[i].len);
		assert_memory_equal(data, ok[i].in, len);
		free(data);
		json_free(v);
		jw_free(&w);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct json_value *v = parse(bad[i], NULL, 0);

		assert_non_null(v);
		if (json_to_bytes(v, &data, &len) != -EINVAL)
			fail_msg("accepted as bytes: %s", bad[i]);
		json_free(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_writer_roundtrip),
		cmocka_unit_test(test_writer_misuse),
		cmocka_unit_test(test_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
