// SPDX-License-Identifier: GPL-2.0
/*
 * Image files: every kind written with every field set, decoded to JSON,
 * encoded back byte for byte; every flipped byte and every truncation
 * reported with the file name and offset, never accepted.
 *
 * `test-image --sample-dir DIR` only writes a sample image directory (one
 * image of every kind) for trying `criu-like decode DIR`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "cr.h"
#include "asm/crc32c.h"
#include "crc32c.h"
#include "image.h"
#include "json.h"
#include "log.h"
#include "util.h"

#include "core.pb-c.h"
#include "files.pb-c.h"
#include "fs.pb-c.h"
#include "pagemap.pb-c.h"
#include "pstree.pb-c.h"

#define SAMPLE_ID 42
#define RAW_SIZE (2 * PAGE_SIZE + 100)

/* ---- a message of any type with every field set --------------------------------------------- */

static ProtobufCMessage *fill_msg(const ProtobufCMessageDescriptor *d, unsigned int seed);

static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;
	}
}

/* Values that test the JSON form: above 2^53, negative, binary and "base64:"-looking bytes. */
static void fill_value(const ProtobufCFieldDescriptor *f, void *p, unsigned int seed)
{
	const ProtobufCEnumDescriptor *ed;
	ProtobufCBinaryData *b;
	char buf[32];

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		*(int32_t *)p = seed % 2 ? -(int32_t)seed - 1 : INT32_MAX - (int32_t)seed;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)p = seed % 2 ? UINT32_MAX - seed : seed;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		*(int64_t *)p = seed % 2 ? INT64_MIN + seed : INT64_MAX - seed;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)p = 0xFEDCBA9876543210ull ^ seed;
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)p = 1.0f / (seed + 3);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)p = 1.0 / (seed + 3);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)p = 1;
		break;
	case PROTOBUF_C_TYPE_ENUM:
		ed = f->descriptor;
		*(int *)p = ed->values[seed % ed->n_values].value;
		break;
	case PROTOBUF_C_TYPE_STRING:
		snprintf(buf, sizeof(buf), "s%u \"q\"\\\t", seed);
		*(char **)p = strdup(buf);
		break;
	case PROTOBUF_C_TYPE_BYTES:
		b = p;
		if (seed % 3 == 0)
			snprintf(buf, sizeof(buf), "/tmp/file %u", seed);
		else if (seed % 3 == 1)
			snprintf(buf, sizeof(buf), "base64:%u", seed);
		else
			memcpy(buf, (char[]){ 0, 1, (char)0xff, 'x', '\n', 0 }, 6);
		b->len = seed % 3 == 2 ? 5 : strlen(buf);
		b->data = malloc(b->len);
		memcpy(b->data, buf, b->len);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		*(ProtobufCMessage **)p = fill_msg(f->descriptor, seed + 1);
		break;
	}
}

static ProtobufCMessage *fill_msg(const ProtobufCMessageDescriptor *d, unsigned int seed)
{
	ProtobufCMessage *m = calloc(1, d->sizeof_message);

	d->message_init(m);
	for (unsigned int i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char *base = (char *)m + f->offset;
		unsigned int fs = seed * 31 + i;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = 3;
			char *arr = calloc(n, elem_size(f->type));

			for (size_t j = 0; j < n; j++)
				fill_value(f, arr + j * elem_size(f->type), fs + j);
			*(char **)base = arr;
			*(size_t *)((char *)m + f->quantifier_offset) = n;
			continue;
		}
		fill_value(f, base, fs);
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_STRING &&
		    f->type != PROTOBUF_C_TYPE_MESSAGE) {
			*(protobuf_c_boolean *)((char *)m + f->quantifier_offset) = 1;
			/* Present with the default value: must survive decode/encode too. */
			if (fs % 4 == 0 && f->type != PROTOBUF_C_TYPE_BYTES)
				memset(base, 0, elem_size(f->type));
		}
	}
	return m;
}

/* ---- sample images ------------------------------------------------------------------------- */

static void raw_sample(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (i * 7 + (i >> 8)) & 0xff;
}

/* One image of @kind: two records (a head and two for pagemaps), or RAW_SIZE bytes. */
static int write_sample(int dirfd, enum cr_img_kind kind, uint32_t id)
{
	const struct cr_img_desc *d = img_desc(kind);
	struct cr_img *img = img_open(dirfd, kind, id, IMG_WRITE);
	int r = 0, nr;

	if (!img)
		return -errno;
	if (d->raw) {
		uint8_t *buf = malloc(RAW_SIZE);

		raw_sample(buf, RAW_SIZE);
		r = img_write_raw(img, buf, RAW_SIZE);
		free(buf);
	}
	nr = d->raw ? 0 : d->head ? 3 : 2;
	/* Images of one record keep one, as their readers (img_read_one) demand. */
	if (kind == CR_IMG_INVENTORY || kind == CR_IMG_CORE || kind == CR_IMG_MM ||
	    kind == CR_IMG_CREDS || kind == CR_IMG_FS || kind == CR_IMG_STATS_DUMP ||
	    kind == CR_IMG_STATS_RESTORE || kind == CR_IMG_IPC_VAR)
		nr = 1;
	for (int i = 0; i < nr && !r; i++) {
		ProtobufCMessage *m = fill_msg(img_desc_record(d, i), kind * 100 + i);

		r = img_write_record(img, m);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	if (r) {
		img_close(img);
		return r;
	}
	return img_close(img);
}

static int make_sample_dir(const char *path)
{
	int dirfd = img_dir_open(path, true), r = 0;

	if (dirfd < 0)
		return dirfd;
	for (int k = 0; k < CR_IMG_NR && !r; k++)
		r = write_sample(dirfd, k, SAMPLE_ID);
	close(dirfd);
	return r;
}

/* ---- fixtures: a temporary directory, captured logs ---------------------------------------- */

struct ctx {
	char dir[64];
	int dirfd;
	int logfd;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	/*
	 * tmpfs when there is one: ext4 flushes a file rewritten with O_TRUNC at close, and the
	 * corruption tests rewrite small files thousands of times.
	 */
	snprintf(c->dir, sizeof(c->dir), "%s/test-image.",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	/* mkdtemp() replaces the six trailing 'X's. */
	memset(c->dir + strlen(c->dir), 'X', 6);
	assert_non_null(mkdtemp(c->dir));
	c->dirfd = img_dir_open(c->dir, false);
	assert_true(c->dirfd >= 0);
	c->logfd = memfd_create("log", MFD_CLOEXEC);
	assert_true(c->logfd >= 0);
	assert_int_equal(log_set_fd(c->logfd), 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	char cmd[128];

	log_close();
	close(c->logfd);
	assert_int_equal(chdir("/"), 0);
	close(c->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
	assert_int_equal(system(cmd), 0);
	free(c);
	return 0;
}

/* The captured log text (static buffer), and forget it. */
static const char *take_log(struct ctx *c)
{
	static char buf[16384];
	ssize_t n = pread(c->logfd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	assert_int_equal(ftruncate(c->logfd, 0), 0);
	lseek(c->logfd, 0, SEEK_SET);
	return buf;
}

/* The captured log holds the printf-formatted text. */
static void __attribute__((format(printf, 2, 3))) expect_log(struct ctx *c, const char *fmt, ...)
{
	const char *log = take_log(c);
	char want[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	if (!strstr(log, want))
		fail_msg("log lacks \"%s\": %s", want, log);
}

static void *read_path(struct ctx *c, const char *name, size_t *len)
{
	void *buf = read_file_at(c->dirfd, name, len);

	assert_non_null(buf);
	return buf;
}

static void write_path(struct ctx *c, const char *name, const void *buf, size_t len)
{
	int fd = openat(c->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, buf, len), 0);
	close(fd);
}

/* Read a whole image as a restore would: every record, every page run checked. */
static int read_whole(struct ctx *c, const char *name)
{
	struct cr_img *img = img_open_name(c->dirfd, name, NULL, IMG_READ);
	ProtobufCMessage **recs;
	size_t n;
	int r;

	if (!img)
		return -errno;
	if (img_kind(img)->raw) {
		uint8_t want[RAW_SIZE], *got = malloc(RAW_SIZE);

		raw_sample(want, RAW_SIZE);
		r = img_raw_size(img) == RAW_SIZE
			    ? img_read_run(img, 0, got, RAW_SIZE, crc32c(0, want, RAW_SIZE))
			    : -EBADMSG;
		free(got);
	} else {
		r = img_read_all(img, &recs, &n);
		if (!r)
			img_free_records(recs, n);
	}
	img_close(img);
	return r;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_desc_table(void **state __unused)
{
	char name[64];

	for (int i = 0; i < CR_IMG_NR; i++) {
		const struct cr_img_desc *d = img_desc(i);

		assert_int_equal(d->kind, i);
		assert_true(d->magic != 0 && d->magic != 0xFFFFFFFFu);
		assert_true(d->raw == !d->pb);
		assert_ptr_equal(img_desc_by_magic(d->magic), d);
		assert_ptr_equal(img_desc_by_name(d->name), d);
		assert_int_equal(img_file_name(i, 7, name, sizeof(name)), 0);
		/* CRIU's stats-dump and stats-restore have no .img, the others all do */
		if (i == CR_IMG_STATS_DUMP || i == CR_IMG_STATS_RESTORE)
			assert_true(!strncmp(name, "stats-", 6) && !strchr(name, '.'));
		else
			assert_non_null(strstr(name, ".img"));
		for (int j = 0; j < i; j++)
			assert_true(img_desc(j)->magic != d->magic);
	}
	assert_null(img_desc(CR_IMG_NR));
	assert_int_equal(img_file_name(CR_IMG_CORE, 4242, name, sizeof(name)), 0);
	assert_string_equal(name, "core-4242.img");
	assert_int_equal(img_file_name(CR_IMG_CORE, 4242, name, 8), -ENAMETOOLONG);
}

/* crc32c_zeros(): the same value as crc32c() over that many zero bytes, after any prefix. */
static void test_crc32c_zeros(void **state __unused)
{
	static const uint64_t lens[] = { 0, 1, 2, 3, 7, 8, 63, 4095, 4096, 65537, (1u << 20) + 3 };
	uint8_t *zeros = calloc(1, (1u << 20) + 3);
	uint32_t prefix[] = { 0, crc32c(0, "123456789", 9), 0xffffffffu };

	assert_non_null(zeros);
	for (size_t p = 0; p < sizeof(prefix) / sizeof(prefix[0]); p++)
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
			assert_int_equal(crc32c_zeros(prefix[p], lens[i]),
					 crc32c(prefix[p], zeros, lens[i]));
	/* A hole in the middle of data: data, zeros, data. */
	assert_int_equal(crc32c(crc32c_zeros(crc32c(0, "ab", 2), 4096), "cd", 2),
			 crc32c(crc32c(crc32c(0, "ab", 2), zeros, 4096), "cd", 2));
	free(zeros);
}

static void test_crc32c(void **state __unused)
{
	uint8_t buf[1031];

	/* The check value of CRC-32C (RFC 3720). */
	assert_int_equal(crc32c(0, "123456789", 9), 0xE3069283);
	assert_int_equal(crc32c_sw(0, "123456789", 9), 0xE3069283);
	raw_sample(buf, sizeof(buf));
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < sizeof(buf) - off; len += 37) {
			uint32_t sw = crc32c_sw(0, buf + off, len);

			assert_int_equal(crc32c(0, buf + off, len), sw);
			if (arch_crc32c_have())
				assert_int_equal(arch_crc32c(0, buf + off, len), sw);
			/* Chaining: crc(a b) == crc(crc(a), b). */
			assert_int_equal(crc32c(crc32c(0, buf + off, len / 2), buf + off + len / 2,
						len - len / 2),
					 sw);
		}
	/* Buffers long enough for the three-stream path, at odd offsets and lengths. */
	{
		size_t big = 3 * 8192 * 3 + 4099;
		uint8_t *b = malloc(big);

		assert_non_null(b);
		for (size_t i = 0; i < big; i++)
			b[i] = (uint8_t)(i * 2654435761u >> 13);
		for (size_t off = 0; off < 3; off++)
			for (size_t len = 3 * 8192 - 5; len < big - off; len += 8192 + 13) {
				uint32_t sw = crc32c_sw(0x1234, b + off, len);

				assert_int_equal(crc32c(0x1234, b + off, len), sw);
			}
		free(b);
	}
}

/* Decode image @name to JSON, encode it back: the same bytes. */
static void roundtrip_file(struct ctx *c, const char *name)
{
	struct cr_options o = {};
	char img[160], json[160], back[160];
	_cleanup_free_ char *a = NULL, *b = NULL;
	size_t alen, blen;

	snprintf(img, sizeof(img), "%s/%s", c->dir, name);
	snprintf(json, sizeof(json), "%s/%s.json", c->dir, name);
	snprintf(back, sizeof(back), "%s/back-%s", c->dir, name);
	o.output = json;
	o.decode_pages = true;
	assert_int_equal(cr_decode(&o, img), 0);
	o.output = back;
	assert_int_equal(cr_encode(&o, json), 0);
	a = read_path(c, name, &alen);
	snprintf(back, sizeof(back), "back-%s", name);
	b = read_path(c, back, &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	assert_int_equal(read_whole(c, back), 0);
}

static void roundtrip_one(struct ctx *c, enum cr_img_kind kind)
{
	char name[64];

	assert_int_equal(write_sample(c->dirfd, kind, SAMPLE_ID), 0);
	assert_int_equal(img_file_name(kind, SAMPLE_ID, name, sizeof(name)), 0);
	roundtrip_file(c, name);
}

/* Fields of a newer schema (unknown here) survive decode and encode. */
static void test_roundtrip_unknown_fields(void **state)
{
	struct ctx *c = *state;
	uint8_t v1[] = { 0x96, 0x01 }, v2[] = { 3, 'a', 'b', 'c' }, v3[] = { 1, 2, 3, 4 };
	ProtobufCMessageUnknownField u[] = {
		{ .tag = 100, .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT, .len = 2, .data = v1 },
		{ .tag = 101,
		  .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
		  .len = 4,
		  .data = v2 },
		{ .tag = 102, .wire_type = PROTOBUF_C_WIRE_TYPE_32BIT, .len = 4, .data = v3 },
	};
	FsEntry fe = FS_ENTRY__INIT;
	_cleanup_free_ char *text = NULL;
	size_t len;

	fe.cwd.data = (uint8_t *)"/";
	fe.cwd.len = 1;
	fe.root = fe.cwd;
	fe.base.n_unknown_fields = ARRAY_SIZE(u);
	fe.base.unknown_fields = u;
	assert_int_equal(img_write_one(c->dirfd, CR_IMG_FS, 1, &fe.base), 0);
	roundtrip_file(c, "fs-1.img");
	text = read_path(c, "fs-1.img.json", &len);
	assert_non_null(strstr(text, "\"__unknown_fields__\""));
	assert_non_null(strstr(text, "\"tag\": 101"));
	assert_string_equal(take_log(c), "");
}

static void test_roundtrip_every_kind(void **state)
{
	for (int k = 0; k < CR_IMG_NR; k++)
		roundtrip_one(*state, k);
	assert_string_equal(take_log(*state), "");
}

/* A raw image decoded without --pages cannot be encoded: the message says what to do. */
static void test_encode_raw_needs_pages(void **state)
{
	struct ctx *c = *state;
	struct cr_options o = {};
	char img[128], json[128];

	assert_int_equal(write_sample(c->dirfd, CR_IMG_PAGES, 1), 0);
	snprintf(img, sizeof(img), "%s/pages-1.img", c->dir);
	snprintf(json, sizeof(json), "%s/pages.json", c->dir);
	o.output = json;
	assert_int_equal(cr_decode(&o, img), 0);
	o.output = img;
	assert_int_equal(cr_encode(&o, json), -EINVAL);
	assert_non_null(strstr(take_log(c), "decode the image with --pages"));
	assert_int_equal(faccessat(c->dirfd, "pages-1.img", F_OK, 0), -1);
}

/* Bytes: printable text as it is; binary and text starting "base64:" in base64. */
static void test_json_bytes_form(void **state)
{
	struct ctx *c = *state;
	PipeDataEntry pd = PIPE_DATA_ENTRY__INIT;
	struct cr_options o = {};
	struct cr_img *img;
	_cleanup_free_ char *text = NULL;
	char path[128];
	size_t len;

	img = img_open(c->dirfd, CR_IMG_PIPES_DATA, 0, IMG_WRITE);
	assert_non_null(img);
	pd.data.data = (uint8_t *)"plain text";
	pd.data.len = 10;
	assert_int_equal(img_write_record(img, &pd.base), 0);
	pd.data.data = (uint8_t *)"base64:abc";
	assert_int_equal(img_write_record(img, &pd.base), 0);
	pd.data.data = (uint8_t *)"\x00\xff";
	pd.data.len = 2;
	assert_int_equal(img_write_record(img, &pd.base), 0);
	pd.data.len = 0;
	assert_int_equal(img_write_record(img, &pd.base), 0);
	pd.pipe_ino = UINT64_MAX;
	assert_int_equal(img_write_record(img, &pd.base), 0);
	assert_int_equal(img_close(img), 0);

	snprintf(path, sizeof(path), "%s/pipes-data.img", c->dir);
	o.output = "pd.json";
	assert_int_equal(fchdir(c->dirfd), 0);
	assert_int_equal(cr_decode(&o, path), 0);
	text = read_path(c, "pd.json", &len);
	assert_non_null(strstr(text, "\"data\": \"plain text\""));
	assert_non_null(strstr(text, "\"data\": \"base64:YmFzZTY0OmFiYw==\""));
	assert_non_null(strstr(text, "\"data\": \"base64:AP8=\""));
	assert_non_null(strstr(text, "\"data\": \"\""));
	assert_non_null(strstr(text, "\"pipe_ino\": 18446744073709551615"));
	assert_non_null(strstr(text, "\"kind\": \"pipes-data\""));
}

/* Records larger than the write buffer, between small ones, read back and round trip. */
static void test_large_record(void **state)
{
	struct ctx *c = *state;
	PipeDataEntry pd = PIPE_DATA_ENTRY__INIT;
	size_t big = 300 * 1024;
	uint8_t *data = malloc(big);
	ProtobufCMessage **recs;
	struct cr_img *img;
	size_t n;

	raw_sample(data, big);
	img = img_open(c->dirfd, CR_IMG_PIPES_DATA, 0, IMG_WRITE);
	for (size_t i = 0; i < 5; i++) {
		pd.pipe_ino = i;
		pd.data.data = data;
		pd.data.len = i % 2 ? big - i : 70000 * i;
		assert_int_equal(img_write_record(img, &pd.base), 0);
	}
	assert_int_equal(img_close(img), 0);
	img = img_open(c->dirfd, CR_IMG_PIPES_DATA, 0, IMG_READ);
	assert_int_equal(img_read_all(img, &recs, &n), 0);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		PipeDataEntry *e = (PipeDataEntry *)recs[i];

		assert_int_equal(e->pipe_ino, i);
		assert_int_equal(e->data.len, i % 2 ? big - i : 70000 * i);
		assert_memory_equal(e->data.data, data, e->data.len);
	}
	img_free_records(recs, n);
	img_close(img);
	roundtrip_file(c, "pipes-data.img");
	free(data);
}

/* Encode refuses JSON that does not describe an image it can write, naming the problem. */
static void test_encode_refusals(void **state)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{ "{\"kind\": \"nope\"}", "unknown image kind" },
		{ "{\"a.img\": {\"kind\": \"fs\"}}", "encode its files one by one" },
		{ "{\"kind\": \"fs\", \"magic\": \"0x1\", \"version\": 1, \"flags\": 0}",
		  "\"magic\"" },
		{ "{\"kind\": \"fs\", \"magic\": \"0x21745a1c\", \"version\": 2, \"flags\": 0}",
		  "\"version\"" },
		{ "{\"kind\": \"fs\", \"magic\": \"0x21745a1c\", \"version\": 1, \"flags\": 0, "
		  "\"records\": [{\"cwd\": \"/\", \"root\": \"/\"}]}",
		  "required field \"umask\"" },
		{ "{\"kind\": \"fs\", \"magic\": \"0x21745a1c\", \"version\": 1, \"flags\": 0, "
		  "\"records\": [{\"cwd\": \"/\", \"root\": \"/\", \"umask\": 4294967296}]}",
		  "out of range" },
		{ "{\"kind\": \"fs\", \"magic\": \"0x21745a1c\", \"version\": 1, \"flags\": 0, "
		  "\"records\": [{\"cwd\": \"base64:!!!!\", \"root\": \"/\", \"umask\": 1}]}",
		  "FsEntry.cwd" },
		{ "{\"kind\": \"fs\", \"magic\": \"0x21745a1c\", \"version\": 1, \"flags\": 0, "
		  "\"records\": [{\"cwd\": \"/\", \"root\": \"/\", \"umask\": 1, \"x\": 1}]}",
		  "no field \"x\"" },
		{ "{\"kind\": \"fs\",}", "line 1, column 15" },
	};
	struct ctx *c = *state;
	struct cr_options o = { .output = "out.img" };

	assert_int_equal(fchdir(c->dirfd), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		write_path(c, "in.json", cases[i].json, strlen(cases[i].json));
		assert_true(cr_encode(&o, "in.json") < 0);
		assert_non_null(strstr(take_log(c), cases[i].msg));
		assert_int_equal(faccessat(c->dirfd, "out.img", F_OK, 0), -1);
	}
}

/* Change one byte at every offset of a small image of every kind: always an error. */
static void test_flip_every_byte(void **state)
{
	struct ctx *c = *state;

	for (int k = 0; k < CR_IMG_NR; k++) {
		_cleanup_free_ uint8_t *orig = NULL;
		char name[64], want[80];
		size_t len;

		assert_int_equal(write_sample(c->dirfd, k, 1), 0);
		assert_int_equal(img_file_name(k, 1, name, sizeof(name)), 0);
		orig = read_path(c, name, &len);
		assert_int_equal(read_whole(c, name), 0);
		snprintf(want, sizeof(want), "%s: offset ", name);
		for (size_t off = 0; off < len; off++) {
			orig[off] ^= 0x5a;
			write_path(c, name, orig, len);
			orig[off] ^= 0x5a;
			if (read_whole(c, name) >= 0)
				fail_msg("%s: a change at offset %zu was accepted", name, off);
			if (!strstr(take_log(c), want))
				fail_msg("%s: offset %zu: the error does not name file and offset",
					 name, off);
		}
	}
}

/* Cut a small image of every kind at every length: always an error. */
static void test_truncate_every_length(void **state)
{
	struct ctx *c = *state;

	for (int k = 0; k < CR_IMG_NR; k++) {
		_cleanup_free_ uint8_t *orig = NULL;
		char name[64], want[80];
		size_t len;

		assert_int_equal(write_sample(c->dirfd, k, 1), 0);
		assert_int_equal(img_file_name(k, 1, name, sizeof(name)), 0);
		orig = read_path(c, name, &len);
		snprintf(want, sizeof(want), "%s: offset ", name);
		for (size_t cut = 0; cut < len; cut++) {
			write_path(c, name, orig, cut);
			if (read_whole(c, name) >= 0)
				fail_msg("%s: cut at %zu was accepted", name, cut);
			if (!strstr(take_log(c), want))
				fail_msg("%s: cut at %zu: the error does not name file and offset",
					 name, cut);
		}
		/* And one byte too many: read_file_at() leaves a NUL after the data. */
		write_path(c, name, orig, len + 1);
		assert_true(read_whole(c, name) < 0);
		take_log(c);
	}
}

/* The exact message and offset for the usual ways an image goes bad. */
static void test_error_messages(void **state)
{
	struct ctx *c = *state;
	PstreeEntry pe = PSTREE_ENTRY__INIT;
	_cleanup_free_ uint8_t *orig = NULL;
	uint8_t *bad;
	struct cr_img *img;
	size_t len, rec1;
	uint32_t huge = 0x7fffffff;

	img = img_open(c->dirfd, CR_IMG_PSTREE, 0, IMG_WRITE);
	assert_non_null(img);
	pe.pid = 1;
	assert_int_equal(img_write_record(img, &pe.base), 0);
	assert_int_equal(img_write_record(img, &pe.base), 0);
	assert_int_equal(img_close(img), 0);
	orig = read_path(c, "pstree.img", &len);
	rec1 = 16 + 8 + pstree_entry__get_packed_size(&pe);
	assert_int_equal(len, rec1 + 8 + pstree_entry__get_packed_size(&pe) + 16);
	bad = malloc(len + 1);

#define EXPECT(err, ...)                                            \
	do {                                                        \
		write_path(c, "pstree.img", bad, blen);             \
		assert_int_equal(read_whole(c, "pstree.img"), err); \
		expect_log(c, __VA_ARGS__);                         \
	} while (0)
	size_t blen = len;

	memcpy(bad, orig, len);
	bad[0]++;
	EXPECT(-EBADMSG, "pstree.img: offset 0: bad magic");
	memcpy(bad, orig, len);
	bad[rec1 + 8]++;
	EXPECT(-EBADMSG, "pstree.img: offset %zu: record checksum mismatch", rec1);
	memcpy(bad, orig, len);
	memcpy(bad + rec1, &huge, 4);
	EXPECT(-EBADMSG, "pstree.img: offset %zu: bad record length 2147483647 (%zu bytes left)",
	       rec1, len - rec1);
	blen = rec1;
	memcpy(bad, orig, len);
	EXPECT(-ENODATA, "pstree.img: offset %zu: missing trailer (truncated file)", rec1);
	blen = len + 1;
	bad[len] = 0;
	EXPECT(-EBADMSG, "pstree.img: offset %zu: trailing garbage after the trailer", len);
	blen = len;
	bad[len - 16 + 8]++;
	EXPECT(-EBADMSG, "pstree.img: offset %zu: trailer counts 3 records, file has 2", len - 16);
	memcpy(bad, orig, len);
	bad[len - 16 + 4]++;
	EXPECT(-EBADMSG, "pstree.img: offset %zu: file checksum mismatch", len - 16);
	/* A version from a newer tool, with a valid header checksum: refused by name. */
	memcpy(bad, orig, len);
	bad[4] = 2;
	{
		uint32_t crc = crc32c(0, bad, 12);

		memcpy(bad + 12, &crc, 4);
	}
	EXPECT(-EPROTO, "pstree.img: offset 4: unknown format version 2 (this tool reads 1)");
	free(bad);
#undef EXPECT
	/* A missing image, and one that may be missing (no error logged). */
	assert_null(img_open(c->dirfd, CR_IMG_CORE, 9, IMG_READ));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(take_log(c), "core-9.img: open"));
	assert_null(img_open(c->dirfd, CR_IMG_CORE, 9, IMG_READ | IMG_OPTIONAL));
	assert_string_equal(take_log(c), "");
	/* The wrong kind where one is expected. */
	assert_null(img_open_name(c->dirfd, "pstree.img", img_desc(CR_IMG_CORE), IMG_READ));
	assert_non_null(strstr(take_log(c), "expected a core"));
}

/* Records of the wrong type, or of a one-record image read as such, are refused. */
static void test_record_types(void **state)
{
	struct ctx *c = *state;
	PstreeEntry pe = PSTREE_ENTRY__INIT;
	PagemapHead ph = PAGEMAP_HEAD__INIT;
	PagemapEntry pm = PAGEMAP_ENTRY__INIT;
	FileEntry fe = FILE_ENTRY__INIT;
	CoreEntry core = CORE_ENTRY__INIT;
	ProtobufCMessage *m;
	struct cr_img *img;

	img = img_open(c->dirfd, CR_IMG_PAGEMAP, 5, IMG_WRITE);
	assert_int_equal(img_write_record(img, &pm.base), -EINVAL); /* the head comes first */
	assert_int_equal(img_write_record(img, &ph.base), 0);
	assert_int_equal(img_write_record(img, &ph.base), -EINVAL);
	assert_int_equal(img_write_record(img, &pm.base), 0);
	assert_int_equal(img_close(img), 0);
	img = img_open(c->dirfd, CR_IMG_PAGEMAP, 5, IMG_READ);
	assert_int_equal(img_read_record(img, &pagemap_entry__descriptor, &m), -EINVAL);
	assert_int_equal(img_read_record(img, &pagemap_head__descriptor, &m), 1);
	protobuf_c_message_free_unpacked(m, NULL);
	assert_int_equal(img_read_record(img, &pagemap_entry__descriptor, &m), 1);
	protobuf_c_message_free_unpacked(m, NULL);
	assert_int_equal(img_read_record(img, NULL, &m), 0);
	assert_int_equal(img_read_record(img, NULL, &m), 0);
	assert_int_equal(img_close(img), 0);

	/* Another kind's record, and a required field unset (protobuf-c would crash). */
	img = img_open(c->dirfd, CR_IMG_FILES, 0, IMG_WRITE);
	assert_int_equal(img_write_record(img, &fe.base), 0);
	assert_int_equal(img_write_record(img, &pe.base), -EINVAL);
	expect_log(c, "files.img: record 1: a PstreeEntry cannot be written here");
	assert_int_equal(img_close(img), 0);
	assert_int_equal(img_write_one(c->dirfd, CR_IMG_CORE, 0, &core.base), -EINVAL);
	expect_log(c, "core-0.img: record 0: a CoreEntry with a required field unset");
}

static void test_read_one(void **state)
{
	struct ctx *c = *state;
	ProtobufCMessage *m = NULL;
	PstreeEntry pe = PSTREE_ENTRY__INIT;
	struct cr_img *img;
	uint8_t rec[10];

	assert_int_equal(write_sample(c->dirfd, CR_IMG_CORE, 3), 0);
	assert_int_equal(img_read_one(c->dirfd, CR_IMG_CORE, 3, &m), 0);
	assert_ptr_equal(m->descriptor, img_desc(CR_IMG_CORE)->pb);
	protobuf_c_message_free_unpacked(m, NULL);

	/* pstree has several records: reading it as a one-record image fails. */
	img = img_open(c->dirfd, CR_IMG_PSTREE, 0, IMG_WRITE);
	pe.pid = 1;
	assert_int_equal(img_write_record(img, &pe.base), 0);
	assert_int_equal(img_write_record(img, &pe.base), 0);
	assert_int_equal(img_close(img), 0);
	assert_int_equal(pstree_entry__pack(&pe, rec), sizeof(rec));
	assert_int_equal(img_read_one(c->dirfd, CR_IMG_PSTREE, 0, &m), -EBADMSG);
	expect_log(c, "pstree.img: offset %zu: more than the one record", 24 + sizeof(rec));
	img = img_open(c->dirfd, CR_IMG_PSTREE, 0, IMG_WRITE);
	assert_int_equal(img_close(img), 0);
	assert_int_equal(img_read_one(c->dirfd, CR_IMG_PSTREE, 0, &m), -ENODATA);
	expect_log(c, "pstree.img: offset 16: no record, one expected");
}

/* Write errors come back as -errno with the file named. */
static void test_write_errors(void **state)
{
	struct ctx *c = *state;
	struct cr_img *img;
	PipeDataEntry pd = PIPE_DATA_ENTRY__INIT;

	img = img_open_name(AT_FDCWD, "/dev/full", img_desc(CR_IMG_PIPES_DATA), IMG_WRITE);
	assert_non_null(img);
	assert_int_equal(img_write_record(img, &pd.base), 0); /* buffered */
	assert_int_equal(img_close(img), -ENOSPC);
	assert_non_null(strstr(take_log(c), "/dev/full: write: No space left on device"));

	img = img_open_name(AT_FDCWD, "/dev/full", img_desc(CR_IMG_PAGES), IMG_WRITE);
	assert_null(img);
	assert_int_equal(errno, ENOSPC);
	assert_non_null(strstr(take_log(c), "/dev/full: write"));

	assert_null(img_open_name(c->dirfd, "no/such/dir.img", img_desc(CR_IMG_FS), IMG_WRITE));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(take_log(c), "no/such/dir.img: open"));
}

/* In a child: without CAP_DAC_OVERRIDE, then on a read-only mount, images cannot be created. */
static int child_write_refusals(struct ctx *c)
{
	cap_t none = cap_init();
	char ro[192];

	if (mkdirat(c->dirfd, "ro", 0755) || mkdirat(c->dirfd, "noperm", 0500))
		return 10;
	snprintf(ro, sizeof(ro), "%s/ro", c->dir);
	if (unshare(CLONE_NEWNS) || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
	    mount("none", ro, "tmpfs", MS_RDONLY, NULL))
		return 11;
	/* By path: c->dirfd belongs to the parent's mount namespace and does not see the mount. */
	strcat(ro, "/fs-1.img");
	if (img_open_name(AT_FDCWD, ro, img_desc(CR_IMG_FS), IMG_WRITE) || errno != EROFS)
		return 12;
	if (!none || cap_set_proc(none))
		return 13;
	cap_free(none);
	if (img_open_name(c->dirfd, "noperm/fs-1.img", img_desc(CR_IMG_FS), IMG_WRITE) ||
	    errno != EACCES)
		return 14;
	return 0;
}

static void test_write_refusals(void **state)
{
	struct ctx *c = *state;
	const char *log;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_write_refusals(c));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The mount lived in the child's namespace only. */
	log = take_log(c);
	assert_non_null(strstr(log, "ro/fs-1.img: open: Read-only file system"));
	assert_non_null(strstr(log, "noperm/fs-1.img: open: Permission denied"));
}

/* Page runs: data page aligned in the file, each run checked against its pagemap crc. */
static void test_pages_runs(void **state)
{
	struct ctx *c = *state;
	uint8_t *buf = malloc(RAW_SIZE), *got = malloc(RAW_SIZE);
	struct cr_img *img;
	struct stat st;

	raw_sample(buf, RAW_SIZE);
	img = img_open(c->dirfd, CR_IMG_PAGES, 8, IMG_WRITE);
	assert_int_equal(lseek(img_raw_fd(img), 0, SEEK_CUR), IMG_RAW_DATA_OFF);
	assert_int_equal(img_write_raw(img, buf, PAGE_SIZE), 0);
	/* What splice would do: write straight to the fd. */
	assert_int_equal(write_all(img_raw_fd(img), buf + PAGE_SIZE, RAW_SIZE - PAGE_SIZE), 0);
	assert_int_equal(img_close(img), 0);
	assert_int_equal(fstatat(c->dirfd, "pages-8.img", &st, 0), 0);
	assert_int_equal(st.st_size, IMG_RAW_DATA_OFF + RAW_SIZE);

	img = img_open(c->dirfd, CR_IMG_PAGES, 8, IMG_READ);
	assert_non_null(img);
	assert_int_equal(img_raw_size(img), RAW_SIZE);
	assert_int_equal(img_read_run(img, PAGE_SIZE, got, PAGE_SIZE,
				      crc32c(0, buf + PAGE_SIZE, PAGE_SIZE)),
			 0);
	assert_memory_equal(got, buf + PAGE_SIZE, PAGE_SIZE);
	assert_int_equal(img_read_run(img, 0, got, PAGE_SIZE, 1234), -EBADMSG);
	assert_non_null(
		strstr(take_log(c), "pages-8.img: offset 4096: page run checksum mismatch"));
	assert_int_equal(img_read_raw(img, RAW_SIZE - 10, got, 11), -ENODATA);
	expect_log(c, "pages-8.img: offset %lu: read of 11 bytes past",
		   IMG_RAW_DATA_OFF + RAW_SIZE - 10);
	assert_int_equal(img_close(img), 0);
	free(buf);
	free(got);
}

/* decode DIR: one object keyed by the sorted file names, one entry per image. */
static void test_decode_dir(void **state)
{
	struct ctx *c = *state;
	struct cr_options o = { .output = "../dir.json" };
	_cleanup_free_ char *text = NULL;
	struct json_value *v;
	char sub[128], err[128];
	size_t len;

	snprintf(sub, sizeof(sub), "%s/imgs", c->dir);
	assert_int_equal(make_sample_dir(sub), 0);
	assert_int_equal(chdir(sub), 0);
	assert_int_equal(cr_decode(&o, "."), 0);
	text = read_path(c, "dir.json", &len);
	v = json_parse(text, len, err, sizeof(err));
	assert_non_null(v);
	assert_int_equal(v->type, JSON_OBJECT);
	assert_int_equal(v->n, CR_IMG_NR);
	for (size_t i = 0; i < v->n; i++) {
		const struct json_value *k = json_get(v->items[i], "kind");

		assert_non_null(k);
		assert_non_null(img_desc_by_name(k->str));
		if (i)
			assert_true(strcmp(v->keys[i - 1], v->keys[i]) < 0);
	}
	json_free(v);

	/* A bad file: the others are still shown, the error is returned. */
	write_path(c, "imgs/fs-42.img", "garbage", 7);
	assert_int_equal(cr_decode(&o, "."), -EBADMSG);
	free(text);
	text = read_path(c, "dir.json", &len);
	v = json_parse(text, len, err, sizeof(err));
	assert_non_null(v);
	assert_int_equal(v->n, CR_IMG_NR);
	assert_non_null(json_get(json_get(v, "fs-42.img"), "error"));
	assert_non_null(json_get(json_get(v, "pstree.img"), "records"));
	json_free(v);
	assert_non_null(strstr(take_log(c), "fs-42.img: offset 0: bad magic"));
	assert_int_equal(chdir("/"), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_desc_table),
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_crc32c_zeros),
		cmocka_unit_test_setup_teardown(test_roundtrip_every_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_unknown_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_encode_raw_needs_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_bytes_form, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_encode_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flip_every_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate_every_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pages_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decode_dir, setup, teardown),
	};

	if (argc == 3 && !strcmp(argv[1], "--sample-dir")) {
		int r = make_sample_dir(argv[2]);

		if (r)
			fprintf(stderr, "cannot write the sample images in %s: %s\n", argv[2],
				strerror(-r));
		return r ? 1 : 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
