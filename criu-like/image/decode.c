// SPDX-License-Identifier: GPL-2.0
/*
 * decode: any image as JSON, generically from the protobuf-c descriptors;
 * encode: that JSON back into the same bytes. The JSON form is described in
 * Documentation/image-format.md.
 */
#define LOG_PREFIX "decode: "
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cr.h"
#include "image.h"
#include "json.h"
#include "log.h"
#include "util.h"

#define UNKNOWN_KEY "__unknown_fields__"
#define DECODE_DATA_MAX (256u << 20)

/* ---- protobuf message -> JSON ------------------------------------------------------------- */

static size_t pb_elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	default:
		return 4; /* 32-bit integers, float, enum */
	}
}

#define MEMBER(m, off) ((char *)(m) + (off))

/* Whether protobuf-c packs field @f of @m (the same rule as its packer). */
static bool pb_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	const void *ptr;

	if (f->label != PROTOBUF_C_LABEL_OPTIONAL)
		return true;
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return *(const uint32_t *)MEMBER(m, f->quantifier_offset) == f->id;
	if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE) {
		ptr = *(const void *const *)MEMBER(m, f->offset);
		return ptr && ptr != f->default_value;
	}
	return *(const protobuf_c_boolean *)MEMBER(m, f->quantifier_offset);
}

static void pb_to_json(struct json_writer *w, const ProtobufCMessage *m);

static void pb_value_to_json(struct json_writer *w, const ProtobufCFieldDescriptor *f,
			     const void *p)
{
	const ProtobufCEnumValue *ev;
	const char *s;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return jw_i64(w, *(const int32_t *)p);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return jw_u64(w, *(const uint32_t *)p);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return jw_i64(w, *(const int64_t *)p);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return jw_u64(w, *(const uint64_t *)p);
	case PROTOBUF_C_TYPE_FLOAT:
		return jw_double(w, *(const float *)p);
	case PROTOBUF_C_TYPE_DOUBLE:
		return jw_double(w, *(const double *)p);
	case PROTOBUF_C_TYPE_BOOL:
		return jw_bool(w, *(const protobuf_c_boolean *)p);
	case PROTOBUF_C_TYPE_ENUM:
		ev = protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
		if (ev)
			return jw_string(w, ev->name, strlen(ev->name));
		return jw_i64(w, *(const int *)p); /* a value from a newer schema */
	case PROTOBUF_C_TYPE_STRING:
		s = *(const char *const *)p;
		return jw_string(w, s ? s : "", s ? strlen(s) : 0);
	case PROTOBUF_C_TYPE_BYTES:
		return jw_bytes(w, ((const ProtobufCBinaryData *)p)->data,
				((const ProtobufCBinaryData *)p)->len);
	case PROTOBUF_C_TYPE_MESSAGE:
		return pb_to_json(w, *(const ProtobufCMessage *const *)p);
	}
}

/*
 * Fields from a newer schema, as protobuf-c keeps them: raw, to be packed
 * again after the known fields (where a newer writer, numbering new fields
 * after the old ones, put them too).
 */
static void unknown_to_json(struct json_writer *w, const ProtobufCMessage *m)
{
	jw_key(w, UNKNOWN_KEY);
	jw_begin_array(w);
	for (unsigned int i = 0; i < m->n_unknown_fields; i++) {
		const ProtobufCMessageUnknownField *u = &m->unknown_fields[i];

		jw_begin_object(w);
		jw_key(w, "tag");
		jw_u64(w, u->tag);
		jw_key(w, "wire_type");
		jw_u64(w, u->wire_type);
		jw_key(w, "data");
		jw_bytes(w, u->data, u->len);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void pb_to_json(struct json_writer *w, const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	jw_begin_object(w);
	for (unsigned int i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = MEMBER(m, f->offset);

		if (!pb_present(m, f))
			continue;
		jw_key(w, f->name);
		if (f->label != PROTOBUF_C_LABEL_REPEATED) {
			pb_value_to_json(w, f, base);
			continue;
		}
		jw_begin_array(w);
		for (size_t j = 0; j < *(const size_t *)MEMBER(m, f->quantifier_offset); j++)
			pb_value_to_json(w, f, *(char *const *)base + j * pb_elem_size(f->type));
		jw_end_array(w);
	}
	if (m->n_unknown_fields)
		unknown_to_json(w, m);
	jw_end_object(w);
}

/* ---- JSON -> protobuf message ------------------------------------------------------------- */

static int json_to_pb(const struct json_value *o, const ProtobufCMessageDescriptor *d,
		      ProtobufCMessage **ret);

static int json_int(const struct json_value *v, ProtobufCType t, void *p)
{
	int64_t s;
	uint64_t u;
	int r;

	switch (t) {
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		r = json_to_u64(v, &u);
		if (!r && u > UINT32_MAX)
			r = -ERANGE;
		if (!r)
			*(uint32_t *)p = u;
		return r;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return json_to_u64(v, p);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return json_to_i64(v, p);
	default: /* 32-bit signed, enum numbers */
		r = json_to_i64(v, &s);
		if (!r && (s < INT32_MIN || s > INT32_MAX))
			r = -ERANGE;
		if (!r)
			*(int32_t *)p = s;
		return r;
	}
}

static int json_to_value(const struct json_value *v, const ProtobufCFieldDescriptor *f, void *p)
{
	const ProtobufCEnumValue *ev;
	double dbl;
	int r;

	switch (f->type) {
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		r = json_to_double(v, &dbl);
		if (!r && f->type == PROTOBUF_C_TYPE_FLOAT)
			*(float *)p = dbl;
		else if (!r)
			*(double *)p = dbl;
		return r;
	case PROTOBUF_C_TYPE_BOOL:
		if (v->type != JSON_BOOL)
			return -EINVAL;
		*(protobuf_c_boolean *)p = v->boolean;
		return 0;
	case PROTOBUF_C_TYPE_ENUM:
		if (v->type != JSON_STRING)
			return json_int(v, f->type, p);
		ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, v->str);
		if (!ev)
			return -EINVAL;
		*(int *)p = ev->value;
		return 0;
	case PROTOBUF_C_TYPE_STRING:
		if (v->type != JSON_STRING || strlen(v->str) != v->len)
			return -EINVAL;
		*(char **)p = strdup(v->str);
		return *(char **)p ? 0 : -ENOMEM;
	case PROTOBUF_C_TYPE_BYTES:
		return json_to_bytes(v, &((ProtobufCBinaryData *)p)->data,
				     &((ProtobufCBinaryData *)p)->len);
	case PROTOBUF_C_TYPE_MESSAGE:
		return json_to_pb(v, f->descriptor, p);
	default:
		return json_int(v, f->type, p);
	}
}

static int json_to_field(const struct json_value *v, ProtobufCMessage *m,
			 const ProtobufCFieldDescriptor *f)
{
	char *base = MEMBER(m, f->offset);
	size_t esz = pb_elem_size(f->type);
	char *arr;
	int r;

	if (f->label != PROTOBUF_C_LABEL_REPEATED) {
		r = json_to_value(v, f, base);
		if (r || f->label != PROTOBUF_C_LABEL_OPTIONAL)
			return r;
		/* The presence rule of pb_present(), set. */
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			*(uint32_t *)MEMBER(m, f->quantifier_offset) = f->id;
		else if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
			*(protobuf_c_boolean *)MEMBER(m, f->quantifier_offset) = 1;
		return 0;
	}
	if (v->type != JSON_ARRAY)
		return -EINVAL;
	if (!v->n)
		return 0;
	arr = calloc(v->n, esz);
	if (!arr)
		return -ENOMEM;
	/* Set the count first: a failure half way is then freed by protobuf-c like the rest. */
	*(char **)base = arr;
	*(size_t *)MEMBER(m, f->quantifier_offset) = v->n;
	for (size_t i = 0; i < v->n; i++) {
		r = json_to_value(v->items[i], f, arr + i * esz);
		if (r)
			return r;
	}
	return 0;
}

static int json_to_unknown(const struct json_value *v, ProtobufCMessage *m)
{
	if (v->type != JSON_ARRAY || m->unknown_fields)
		return -EINVAL;
	m->unknown_fields = calloc(v->n ? v->n : 1, sizeof(*m->unknown_fields));
	if (!m->unknown_fields)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++) {
		ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
		const struct json_value *data = json_get(v->items[i], "data");
		ProtobufCBinaryData b;
		uint64_t tag, wt;
		int r;

		if (json_to_u64(json_get(v->items[i], "tag"), &tag) || !tag || tag >= 1u << 29 ||
		    json_to_u64(json_get(v->items[i], "wire_type"), &wt) ||
		    (wt != PROTOBUF_C_WIRE_TYPE_VARINT && wt != PROTOBUF_C_WIRE_TYPE_64BIT &&
		     wt != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED &&
		     wt != PROTOBUF_C_WIRE_TYPE_32BIT) ||
		    !data)
			return -EINVAL;
		u->tag = tag;
		u->wire_type = wt;
		r = json_to_bytes(data, &b.data, &b.len);
		if (r)
			return r;
		u->data = b.data;
		u->len = b.len;
		m->n_unknown_fields = i + 1;
	}
	return 0;
}

static int json_to_pb(const struct json_value *o, const ProtobufCMessageDescriptor *d,
		      ProtobufCMessage **ret)
{
	ProtobufCMessage *m;
	int r = 0;

	if (o->type != JSON_OBJECT) {
		pr_err("a %s must be a JSON object, not a %s\n", d->name, json_type_name(o->type));
		return -EINVAL;
	}
	m = calloc(1, d->sizeof_message);
	if (!m)
		return -ENOMEM;
	d->message_init(m);
	for (size_t i = 0; i < o->n && !r; i++) {
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field_by_name(d, o->keys[i]);

		if (!f && !strcmp(o->keys[i], UNKNOWN_KEY)) {
			r = json_to_unknown(o->items[i], m);
			if (r == -EINVAL)
				pr_err("%s: bad %s\n", d->name, UNKNOWN_KEY);
		} else if (!f) {
			pr_err("%s has no field \"%s\"\n", d->name, o->keys[i]);
			r = -EINVAL;
		} else if ((r = json_to_field(o->items[i], m, f)) && r != -ENOMEM) {
			pr_err("%s.%s: bad value (a %s)%s\n", d->name, f->name,
			       json_type_name(o->items[i]->type),
			       r == -ERANGE ? ": out of range" : "");
		}
	}
	for (unsigned int i = 0; i < d->n_fields && !r; i++) {
		if (d->fields[i].label == PROTOBUF_C_LABEL_REQUIRED &&
		    !json_get(o, d->fields[i].name)) {
			pr_err("%s: required field \"%s\" is missing\n", d->name,
			       d->fields[i].name);
			r = -EINVAL;
		}
	}
	if (r) {
		protobuf_c_message_free_unpacked(m, NULL);
		return r;
	}
	*ret = m;
	return 0;
}

/* ---- image files -> JSON ------------------------------------------------------------------ */

static int decode_raw(struct json_writer *w, struct cr_img *img, bool pages)
{
	uint64_t size = img_raw_size(img);
	_cleanup_free_ uint8_t *data = NULL;
	int r;

	jw_key(w, "size");
	jw_u64(w, size);
	if (!pages)
		return 0;
	/* The data goes through memory three times (bytes, base64, JSON text): keep it sane. */
	if (size > DECODE_DATA_MAX) {
		pr_err("%s: %" PRIu64 " bytes of data: --pages shows at most %u MiB\n",
		       img_name(img), size, DECODE_DATA_MAX >> 20);
		return -EFBIG;
	}
	data = malloc(size ? size : 1);
	if (!data) {
		pr_err("%s: no memory for %" PRIu64 " bytes of data\n", img_name(img), size);
		return -ENOMEM;
	}
	r = img_read_raw(img, 0, data, size);
	if (r)
		return r;
	jw_key(w, "data");
	jw_bytes(w, data, size);
	return 0;
}

static int decode_records(struct json_writer *w, struct cr_img *img)
{
	ProtobufCMessage *m;
	int r;

	jw_key(w, "records");
	jw_begin_array(w);
	while ((r = img_read_record(img, NULL, &m)) > 0) {
		pb_to_json(w, m);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	jw_end_array(w);
	return r;
}

static void jw_error(struct json_writer *w, int err)
{
	const char *msg = strerror(-err);

	jw_key(w, "error");
	jw_string(w, msg, strlen(msg));
}

/*
 * One image file as a JSON object; the image layer logs what is wrong with
 * it, and the object ends with an "error" key then.
 */
static int decode_file(struct json_writer *w, int dirfd, const char *name, bool pages)
{
	struct cr_img *img = img_open_name(dirfd, name, NULL, IMG_READ);
	const struct cr_img_desc *d;
	char magic[16];
	int r;

	jw_begin_object(w);
	if (!img) {
		r = -errno;
		jw_error(w, r);
		jw_end_object(w);
		return r;
	}
	d = img_kind(img);
	snprintf(magic, sizeof(magic), "0x%08x", d->magic);
	jw_key(w, "kind");
	jw_string(w, d->name, strlen(d->name));
	jw_key(w, "magic");
	jw_string(w, magic, strlen(magic));
	jw_key(w, "version");
	jw_u64(w, img_version(img));
	jw_key(w, "flags");
	jw_u64(w, img_flags(img));
	r = d->raw ? decode_raw(w, img, pages) : decode_records(w, img);
	if (r)
		jw_error(w, r);
	jw_end_object(w);
	img_close(img);
	return r;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* A kind's file name without "%u" nor ".img" (CRIU's stats-dump, stats-restore). */
static bool plain_image_name(const char *name)
{
	const struct cr_img_desc *d;
	unsigned int k;

	for (k = 0; (d = img_desc((enum cr_img_kind)k)); k++)
		if (!strcmp(d->pattern, name))
			return true;
	return false;
}

/* The *.img names in @dirfd, and stats-dump/stats-restore, sorted. */
static int list_images(int dirfd, char ***ret, size_t *ret_n)
{
	_cleanup_closedir_ DIR *dir = NULL;
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	int fd = dup(dirfd);

	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return neg_errno();
	}
	while ((errno = 0, de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		char **nn;

		if ((len < 5 || strcmp(de->d_name + len - 4, ".img")) &&
		    !plain_image_name(de->d_name))
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			free_names(nn ? nn : names, n);
			return -ENOMEM;
		}
		names = nn;
		n++;
	}
	if (errno) {
		free_names(names, n);
		return neg_errno();
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*ret = names;
	*ret_n = n;
	return 0;
}

/* Every image of a directory, keyed by file name; the first error is returned. */
static int decode_dir(struct json_writer *w, int dirfd, const char *path, bool pages)
{
	char **names = NULL;
	size_t n = 0;
	int r, first_err = 0;

	r = list_images(dirfd, &names, &n);
	if (r) {
		pr_errno(r, "cannot list %s", path);
		return r;
	}
	jw_begin_object(w);
	for (size_t i = 0; i < n; i++) {
		jw_key(w, names[i]);
		r = decode_file(w, dirfd, names[i], pages);
		first_err = first_err ?: r;
	}
	jw_end_object(w);
	free_names(names, n);
	return first_err;
}

static int write_output(const char *out, const char *buf, size_t len)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (!out || !strcmp(out, "-"))
		return write_all(STDOUT_FILENO, buf, len);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		pr_perror("cannot create %s", out);
		return neg_errno();
	}
	r = write_all(fd, buf, len);
	if (!r && close(TAKE_FD(fd)))
		r = neg_errno();
	if (r)
		pr_errno(r, "cannot write %s", out);
	return r;
}

int cr_decode(const struct cr_options *o, const char *path)
{
	struct json_writer w;
	struct stat st;
	int r, dirfd;

	if (stat(path, &st)) {
		pr_perror("cannot decode %s", path);
		return neg_errno();
	}
	jw_init(&w);
	if (S_ISDIR(st.st_mode)) {
		dirfd = img_dir_open(path, false);
		if (dirfd < 0)
			return dirfd;
		r = decode_dir(&w, dirfd, path, o->decode_pages);
		close(dirfd);
	} else {
		r = decode_file(&w, AT_FDCWD, path, o->decode_pages);
	}
	/* A directory is shown even when one of its files is bad; a lone bad file is not. */
	if (!r || S_ISDIR(st.st_mode)) {
		int wr = jw_finish(&w);

		if (!wr)
			wr = write_output(o->output, w.buf, w.len);
		r = r ?: wr;
	}
	jw_free(&w);
	return r;
}

/* ---- JSON -> image file ------------------------------------------------------------------- */

static char *read_input(const char *in, size_t *ret_len)
{
	return read_file_at(AT_FDCWD, strcmp(in, "-") ? in : "/dev/stdin", ret_len);
}

/* The header fields of the JSON: the kind, and a magic/version/flags this tool can write. */
static const struct cr_img_desc *encode_header(const struct json_value *j)
{
	const struct json_value *kind = json_get(j, "kind"), *magic = json_get(j, "magic");
	const struct cr_img_desc *d;
	uint64_t version, flags;
	char want[16];

	if (!kind || kind->type != JSON_STRING) {
		pr_err("no \"kind\": the input is not the JSON of one image%s\n",
		       j->type == JSON_OBJECT && j->n && j->items[0]->type == JSON_OBJECT
			       ? " (a directory? encode its files one by one)"
			       : "");
		return NULL;
	}
	d = img_desc_by_name(kind->str);
	if (!d) {
		pr_err("unknown image kind \"%s\"\n", kind->str);
		return NULL;
	}
	snprintf(want, sizeof(want), "0x%08x", d->magic);
	if (!magic || magic->type != JSON_STRING || strcmp(magic->str, want)) {
		pr_err("\"magic\" must be \"%s\" for a %s image\n", want, d->name);
		return NULL;
	}
	if (json_to_u64(json_get(j, "version"), &version) || version != IMG_FORMAT_VERSION) {
		pr_err("\"version\" must be %u: this tool writes no other format\n",
		       IMG_FORMAT_VERSION);
		return NULL;
	}
	if (json_to_u64(json_get(j, "flags"), &flags) || flags) {
		pr_err("\"flags\" must be 0: no header flag is defined\n");
		return NULL;
	}
	return d;
}

static int encode_raw(struct cr_img *img, const struct json_value *j)
{
	const struct json_value *data = json_get(j, "data");
	ProtobufCBinaryData b = {};
	uint64_t size;
	int r;

	if (!data) {
		pr_err("%s: the JSON has no \"data\": decode the image with --pages to encode it\n",
		       img_name(img));
		return -EINVAL;
	}
	r = json_to_bytes(data, &b.data, &b.len);
	if (r) {
		pr_err("%s: \"data\" is not valid text or base64\n", img_name(img));
		return r;
	}
	if (json_to_u64(json_get(j, "size"), &size) || size != b.len) {
		pr_err("%s: \"size\" does not match the %zu bytes of \"data\"\n", img_name(img),
		       b.len);
		free(b.data);
		return -EINVAL;
	}
	r = img_write_raw(img, b.data, b.len);
	free(b.data);
	return r;
}

static int encode_records(struct cr_img *img, const struct json_value *j)
{
	const struct json_value *recs = json_get(j, "records");
	const struct cr_img_desc *d = img_kind(img);

	if (!recs || recs->type != JSON_ARRAY) {
		pr_err("%s: the JSON has no \"records\" array\n", img_name(img));
		return -EINVAL;
	}
	for (size_t i = 0; i < recs->n; i++) {
		ProtobufCMessage *m;
		int r = json_to_pb(recs->items[i], img_desc_record(d, i), &m);

		if (r) {
			pr_err("%s: record %zu cannot be encoded\n", img_name(img), i);
			return r;
		}
		r = img_write_record(img, m);
		protobuf_c_message_free_unpacked(m, NULL);
		if (r)
			return r;
	}
	return 0;
}

int cr_encode(const struct cr_options *o, const char *in)
{
	_cleanup_free_ char *text = NULL;
	struct json_value *j;
	const struct cr_img_desc *d;
	struct cr_img *img;
	char err[160];
	size_t len;
	int r;

	if (!o->output || !strcmp(o->output, "-")) {
		pr_err("encode writes an image file: name it with -O FILE\n");
		return -EINVAL;
	}
	text = read_input(in, &len);
	if (!text) {
		pr_perror("cannot read %s", in);
		return neg_errno();
	}
	j = json_parse(text, len, err, sizeof(err));
	if (!j) {
		r = -errno;
		pr_err("%s: %s\n", in, err);
		return r;
	}
	d = encode_header(j);
	if (!d) {
		json_free(j);
		return -EINVAL;
	}
	img = img_open_name(AT_FDCWD, o->output, d, IMG_WRITE);
	if (!img) {
		r = -errno;
	} else {
		int cr;

		r = d->raw ? encode_raw(img, j) : encode_records(img, j);
		cr = img_close(img);
		r = r ?: cr;
	}
	json_free(j);
	/* A half-written image must not be mistaken for a good one later. */
	if (r && img)
		unlink(o->output);
	return r;
}
