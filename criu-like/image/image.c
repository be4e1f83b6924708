// SPDX-License-Identifier: GPL-2.0
#define LOG_PREFIX "image: "
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "fault.h"
#include "image.h"
#include "image-int.h"
#include "log.h"
#include "util.h"

/* On-disk structures, little-endian: fields go through htole*() and le*toh(). */
struct img_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t crc; /* crc32c of the 12 bytes above */
};

struct img_raw_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t reserved;
	uint64_t data_size;
	uint32_t crc; /* crc32c of the 24 bytes above */
	uint32_t pad;
	/* zeros up to IMG_RAW_DATA_OFF */
};

struct img_rec_hdr {
	uint32_t len;
	uint32_t crc; /* crc32c of len (4 bytes) then the payload */
};

#define IMG_TRAILER_MARK 0xFFFFFFFFu

struct img_trailer {
	uint32_t mark;
	uint32_t file_crc; /* crc32c of every byte before the trailer */
	uint64_t nr_records;
};

_Static_assert(sizeof(struct img_hdr) == 16, "header layout");
_Static_assert(sizeof(struct img_raw_hdr) == 32, "raw header layout");
_Static_assert(sizeof(struct img_trailer) == 16, "trailer layout");

#define IMG_WBUF_SIZE (64u << 10)

struct cr_img {
	int fd;
	bool writing;
	bool done; /* reading: the trailer was checked */
	bool tracked; /* writing: goes into the dump's list of images (img_track_writes()) */
	const struct cr_img_desc *d;
	char *name;
	uint32_t version;
	uint32_t flags;
	int err; /* first error, sticky */
	uint64_t off; /* bytes read or written so far */
	uint64_t size; /* reading: the file size; writing: once complete */
	uint64_t raw_size; /* raw images: data bytes */
	uint64_t nr_records; /* records read or written */
	uint32_t crc; /* crc32c of bytes [0, off) */
	char *wbuf;
	size_t wlen;
	char *rbuf; /* reading records: [rstart, rstart + rlen) of the file */
	uint64_t rstart;
	size_t rlen;
};

/* Log a bad image once and make the error sticky. */
static int __attribute__((format(printf, 4, 5)))
img_bad(struct cr_img *img, int err, uint64_t off, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pr_err("%s: offset %llu: %s\n", img->name, (unsigned long long)off, why);
	img->err = err;
	return err;
}

static int img_io_err(struct cr_img *img, int err, const char *what)
{
	pr_errno(err, "%s: %s", img->name, what);
	if (!img->err)
		img->err = err;
	return err;
}

static void img_free(struct cr_img *img)
{
	if (img->fd >= 0)
		close(img->fd);
	free(img->wbuf);
	free(img->rbuf);
	free(img->name);
	free(img);
}

int img_dir_open(const char *path, bool create)
{
	int fd;

	if (create && mkdir(path, 0700) && errno != EEXIST) {
		pr_perror("cannot create image directory %s", path);
		return neg_errno();
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("cannot open image directory %s", path);
		return neg_errno();
	}
	return fd;
}

int img_dir_sync(int dirfd)
{
	if (fault_err(-EIO, "syncfs of the image directory") || syncfs(dirfd)) {
		pr_perror("syncfs of the image directory");
		return neg_errno();
	}
	return 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

static int img_flush(struct cr_img *img)
{
	int ret;

	if (img->err)
		return img->err;
	ret = fault_err(-ENOSPC, "%s: write", img->name);
	ret = ret ? ret : write_all(img->fd, img->wbuf, img->wlen);
	if (ret)
		return img_io_err(img, ret, "write");
	img->wlen = 0;
	return 0;
}

static int img_put(struct cr_img *img, const void *buf, size_t len)
{
	int ret;

	if (img->err)
		return img->err;
	img->crc = crc32c(img->crc, buf, len);
	img->off += len;
	if (img->wlen + len > IMG_WBUF_SIZE) {
		ret = img_flush(img);
		if (ret)
			return ret;
	}
	if (len > IMG_WBUF_SIZE) {
		ret = fault_err(-ENOSPC, "%s: write", img->name);
		ret = ret ? ret : write_all(img->fd, buf, len);
		return ret ? img_io_err(img, ret, "write") : 0;
	}
	memcpy(img->wbuf + img->wlen, buf, len);
	img->wlen += len;
	return 0;
}

static int img_start_write(struct cr_img *img)
{
	if (img->d->raw) {
		static const char zero[IMG_RAW_DATA_OFF];
		int ret = fault_err(-ENOSPC, "%s: write", img->name);

		ret = ret ? ret : write_all(img->fd, zero, sizeof(zero));

		/* The real header goes in at close: until then the magic is 0, "not complete". */
		return ret ? img_io_err(img, ret, "write") : 0;
	}
	img->wbuf = malloc(IMG_WBUF_SIZE);
	if (!img->wbuf)
		return img_io_err(img, -ENOMEM, "write buffer");

	struct img_hdr h = { .magic = htole32(img->d->magic),
			     .version = htole32(img->version),
			     .flags = htole32(img->flags) };

	h.crc = htole32(crc32c(0, &h, offsetof(struct img_hdr, crc)));
	return img_put(img, &h, sizeof(h));
}

/* A record that fits in the write buffer is packed right there: no copy, no allocation. */
static int img_put_record(struct cr_img *img, const ProtobufCMessage *msg, struct img_rec_hdr *rh)
{
	size_t len = le32toh(rh->len), total = sizeof(*rh) + len;
	uint8_t *p;
	int ret;

	if (img->wlen + total > IMG_WBUF_SIZE) {
		ret = img_flush(img);
		if (ret)
			return ret;
	}
	p = (uint8_t *)img->wbuf + img->wlen;
	protobuf_c_message_pack(msg, p + sizeof(*rh));
	rh->crc = htole32(crc32c(crc32c(0, &rh->len, sizeof(rh->len)), p + sizeof(*rh), len));
	memcpy(p, rh, sizeof(*rh));
	img->crc = crc32c(img->crc, p, total);
	img->wlen += total;
	img->off += total;
	img->nr_records++;
	return 0;
}

int img_write_record(struct cr_img *img, const ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *want;
	_cleanup_free_ uint8_t *buf = NULL;
	struct img_rec_hdr rh;
	size_t len;
	int ret;

	if (img->err)
		return img->err;
	want = img->d->raw ? NULL : img_desc_record(img->d, img->nr_records);
	if (!img->writing || !want || msg->descriptor != want) {
		pr_err("%s: record %llu: a %s cannot be written here\n", img->name,
		       (unsigned long long)img->nr_records, msg->descriptor->name);
		return -EINVAL;
	}
	/* protobuf-c would crash packing a missing required field. */
	if (!protobuf_c_message_check(msg)) {
		pr_err("%s: record %llu: a %s with a required field unset\n", img->name,
		       (unsigned long long)img->nr_records, msg->descriptor->name);
		return -EINVAL;
	}
	len = protobuf_c_message_get_packed_size(msg);
	if (len > IMG_RECORD_MAX) {
		pr_err("%s: record %llu: %zu bytes, more than the %u allowed\n", img->name,
		       (unsigned long long)img->nr_records, len, IMG_RECORD_MAX);
		return -E2BIG;
	}
	if (fault_hit("%s: record %llu", img->name, (unsigned long long)img->nr_records))
		return img_io_err(img, -ENOSPC, "write");
	rh.len = htole32(len);
	if (len + sizeof(rh) <= IMG_WBUF_SIZE)
		return img_put_record(img, msg, &rh);
	buf = malloc(len);
	if (!buf)
		return img_io_err(img, -ENOMEM, "record buffer");
	protobuf_c_message_pack(msg, buf);
	rh.crc = htole32(crc32c(crc32c(0, &rh.len, sizeof(rh.len)), buf, len));
	ret = img_put(img, &rh, sizeof(rh));
	if (!ret)
		ret = img_put(img, buf, len);
	if (!ret)
		img->nr_records++;
	return ret;
}

int img_write_raw(struct cr_img *img, const void *buf, size_t len)
{
	int ret;

	if (!img->writing || !img->d->raw)
		return -EINVAL;
	if (img->err)
		return img->err;
	ret = fault_err(-ENOSPC, "%s: write", img->name);
	ret = ret ? ret : write_all(img->fd, buf, len);
	return ret ? img_io_err(img, ret, "write") : 0;
}

static int img_finish_raw(struct cr_img *img)
{
	char buf[IMG_RAW_DATA_OFF] = {};
	struct img_raw_hdr *h = (struct img_raw_hdr *)buf;
	struct stat st;
	int ret;

	if (fstat(img->fd, &st))
		return img_io_err(img, neg_errno(), "fstat");
	if ((uint64_t)st.st_size < IMG_RAW_DATA_OFF)
		return img_io_err(img, -EIO, "raw image shorter than its header");
	h->magic = htole32(img->d->magic);
	h->version = htole32(img->version);
	h->flags = htole32(img->flags);
	h->data_size = htole64(st.st_size - IMG_RAW_DATA_OFF);
	img->size = st.st_size;
	h->crc = htole32(crc32c(0, h, offsetof(struct img_raw_hdr, crc)));
	ret = fault_err(-ENOSPC, "%s: write header", img->name);
	if (!ret && pwrite(img->fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		ret = neg_errno();
	return ret ? img_io_err(img, ret, "write header") : 0;
}

static int img_finish_write(struct cr_img *img)
{
	struct img_trailer t = { .mark = htole32(IMG_TRAILER_MARK) };
	int ret;

	if (img->err)
		return img->err;
	if (img->d->raw)
		return img_finish_raw(img);
	t.file_crc = htole32(img->crc);
	t.nr_records = htole64(img->nr_records);
	ret = img_put(img, &t, sizeof(t));
	if (!ret)
		ret = img_flush(img);
	/* img->crc now covers the trailer too: the crc32c of the whole file */
	img->size = img->off;
	return ret;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Read exactly @len bytes at @off, or report what is missing. */
static int img_pread(struct cr_img *img, void *buf, size_t len, uint64_t off, const char *what)
{
	size_t done = 0;

	if (off > img->size || len > img->size - off)
		return img_bad(img, -ENODATA, off, "short read: %s needs %zu bytes, %llu left",
			       what, len,
			       (unsigned long long)(img->size > off ? img->size - off : 0));
	while (done < len) {
		ssize_t n = pread(img->fd, (char *)buf + done, len - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return img_bad(img, neg_errno(), off + done, "read: %s", strerror(errno));
		if (n == 0)
			return img_bad(img, -ENODATA, off + done, "short read of %s", what);
		done += n;
	}
	return 0;
}

/*
 * img_pread() through a read-ahead buffer, for the records: three small
 * reads each (length, checksum, body) were three system calls, 12000 for a
 * pre-dump chain's pagemaps, 25-40 ms of a migration's restore on a loaded
 * machine. The file does not change while it is read.
 */
static int img_pread_rec(struct cr_img *img, void *buf, size_t len, uint64_t off, const char *what)
{
	size_t want;
	int ret;

	if (len > IMG_WBUF_SIZE / 2 || off > img->size || len > img->size - off)
		return img_pread(img, buf, len, off, what);
	if (!img->rbuf || off < img->rstart || off + len > img->rstart + img->rlen) {
		if (!img->rbuf)
			img->rbuf = malloc(IMG_WBUF_SIZE);
		if (!img->rbuf)
			return img_pread(img, buf, len, off, what);
		want = (size_t)min((uint64_t)IMG_WBUF_SIZE, img->size - off);
		img->rlen = 0;
		ret = img_pread(img, img->rbuf, want, off, what);
		if (ret)
			return ret;
		img->rstart = off;
		img->rlen = want;
	}
	memcpy(buf, img->rbuf + (off - img->rstart), len);
	return 0;
}

static int img_check_version(struct cr_img *img, uint32_t version, uint32_t flags)
{
	if (version != IMG_FORMAT_VERSION)
		return img_bad(img, -EPROTO, 4, "unknown format version %u (this tool reads %u)",
			       version, IMG_FORMAT_VERSION);
	/* No flag is defined yet: one set means a newer writer, whose meaning we cannot know. */
	if (flags)
		return img_bad(img, -EPROTO, 8, "unknown header flags %#x", flags);
	img->version = version;
	img->flags = flags;
	return 0;
}

static int img_check_kind(struct cr_img *img, uint32_t magic)
{
	const struct cr_img_desc *d = img_desc_by_magic(magic);

	if (!d || (img->d && img->d != d))
		return img_bad(img, -EBADMSG, 0, "bad magic %#010x%s%s", magic,
			       img->d ? ", expected a " : "", img->d ? img->d->name : "");
	img->d = d;
	return 0;
}

static int img_start_raw_read(struct cr_img *img)
{
	char buf[IMG_RAW_DATA_OFF] = {};
	struct img_raw_hdr *h = (struct img_raw_hdr *)buf;
	uint64_t data_size;
	int ret;

	ret = img_pread(img, buf, sizeof(buf), 0, "raw image header");
	if (ret)
		return ret;
	if (le32toh(h->crc) != crc32c(0, h, offsetof(struct img_raw_hdr, crc)))
		return img_bad(img, -EBADMSG, offsetof(struct img_raw_hdr, crc),
			       "header checksum mismatch");
	ret = img_check_version(img, le32toh(h->version), le32toh(h->flags));
	if (ret)
		return ret;
	for (size_t i = offsetof(struct img_raw_hdr, reserved); i < sizeof(buf); i++) {
		if (i >= offsetof(struct img_raw_hdr, data_size) &&
		    i < offsetof(struct img_raw_hdr, pad))
			continue;
		if (buf[i])
			return img_bad(img, -EBADMSG, i, "header padding is not zero");
	}
	data_size = le64toh(h->data_size);
	if (data_size != img->size - IMG_RAW_DATA_OFF)
		return img_bad(img, data_size > img->size ? -ENODATA : -EBADMSG, img->size,
			       "file has %llu data bytes, header says %llu (%s)",
			       (unsigned long long)(img->size - IMG_RAW_DATA_OFF),
			       (unsigned long long)data_size,
			       data_size > img->size - IMG_RAW_DATA_OFF ? "truncated"
									: "trailing garbage");
	img->raw_size = data_size;
	img->off = IMG_RAW_DATA_OFF;
	return 0;
}

static int img_start_read(struct cr_img *img)
{
	struct img_hdr h;
	struct stat st;
	int ret;

	if (fstat(img->fd, &st))
		return img_io_err(img, neg_errno(), "fstat");
	img->size = st.st_size;
	ret = img_pread(img, &h.magic, sizeof(h.magic), 0, "magic");
	if (ret)
		return ret;
	ret = img_check_kind(img, le32toh(h.magic));
	if (ret)
		return ret;
	if (img->d->raw)
		return img_start_raw_read(img);
	ret = img_pread(img, &h, sizeof(h), 0, "header");
	if (ret)
		return ret;
	if (le32toh(h.crc) != crc32c(0, &h, offsetof(struct img_hdr, crc)))
		return img_bad(img, -EBADMSG, offsetof(struct img_hdr, crc),
			       "header checksum mismatch");
	ret = img_check_version(img, le32toh(h.version), le32toh(h.flags));
	if (ret)
		return ret;
	img->crc = crc32c(0, &h, sizeof(h));
	img->off = sizeof(h);
	return 0;
}

static int img_read_trailer(struct cr_img *img)
{
	struct img_trailer t;
	int ret;

	ret = img_pread_rec(img, &t, sizeof(t), img->off, "trailer");
	if (ret)
		return ret;
	if (le32toh(t.file_crc) != img->crc)
		return img_bad(img, -EBADMSG, img->off, "file checksum mismatch");
	if (le64toh(t.nr_records) != img->nr_records)
		return img_bad(img, -EBADMSG, img->off,
			       "trailer counts %llu records, file has %llu",
			       (unsigned long long)le64toh(t.nr_records),
			       (unsigned long long)img->nr_records);
	if (img->off + sizeof(t) != img->size)
		return img_bad(img, -EBADMSG, img->off + sizeof(t),
			       "trailing garbage after the trailer");
	img->done = true;
	return 0;
}

int img_read_record(struct cr_img *img, const ProtobufCMessageDescriptor *expect,
		    ProtobufCMessage **ret)
{
	const ProtobufCMessageDescriptor *desc;
	_cleanup_free_ uint8_t *buf = NULL;
	struct img_rec_hdr rh;
	uint64_t off = img->off;
	uint32_t len;
	int r;

	if (img->err)
		return img->err;
	if (img->writing || img->d->raw)
		return -EINVAL;
	if (img->done)
		return 0;
	desc = img_desc_record(img->d, img->nr_records);
	if (expect && expect != desc) {
		pr_err("%s: record %llu is a %s, not a %s\n", img->name,
		       (unsigned long long)img->nr_records, desc->name, expect->name);
		return -EINVAL;
	}
	if (off == img->size)
		return img_bad(img, -ENODATA, off, "missing trailer (truncated file)");
	r = img_pread_rec(img, &rh.len, sizeof(rh.len), off, "record length");
	if (r)
		return r;
	len = le32toh(rh.len);
	if (len == IMG_TRAILER_MARK) {
		r = img_read_trailer(img);
		return r ? r : 0;
	}
	if (len > IMG_RECORD_MAX || len > img->size - off - min(img->size - off, 8))
		return img_bad(img, -EBADMSG, off, "bad record length %u (%llu bytes left)", len,
			       (unsigned long long)(img->size - off));
	r = img_pread_rec(img, &rh.crc, sizeof(rh.crc), off + 4, "record checksum");
	if (r)
		return r;
	buf = malloc(len ? len : 1);
	if (!buf)
		return img_io_err(img, -ENOMEM, "record buffer");
	r = img_pread_rec(img, buf, len, off + sizeof(rh), "record");
	if (r)
		return r;
	if (le32toh(rh.crc) != crc32c(crc32c(0, &rh.len, sizeof(rh.len)), buf, len))
		return img_bad(img, -EBADMSG, off, "record checksum mismatch");
	*ret = protobuf_c_message_unpack(desc, NULL, len, buf);
	if (!*ret)
		return img_bad(img, -EBADMSG, off + sizeof(rh), "record does not parse as a %s",
			       desc->name);
	img->crc = crc32c(crc32c(img->crc, &rh, sizeof(rh)), buf, len);
	img->off = off + sizeof(rh) + len;
	img->nr_records++;
	return 1;
}

void img_free_records(ProtobufCMessage **recs, size_t n)
{
	if (!recs)
		return;
	for (size_t i = 0; i < n; i++)
		protobuf_c_message_free_unpacked(recs[i], NULL);
	free(recs);
}

int img_read_all(struct cr_img *img, ProtobufCMessage ***ret, size_t *ret_n)
{
	ProtobufCMessage **recs = NULL, *m;
	size_t n = 0, cap = 0;
	int r;

	while ((r = img_read_record(img, NULL, &m)) > 0) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			ProtobufCMessage **nrecs = realloc(recs, ncap * sizeof(*recs));

			if (!nrecs) {
				protobuf_c_message_free_unpacked(m, NULL);
				r = img_io_err(img, -ENOMEM, "record list");
				break;
			}
			recs = nrecs;
			cap = ncap;
		}
		recs[n++] = m;
	}
	if (r < 0) {
		img_free_records(recs, n);
		return r;
	}
	*ret = recs;
	*ret_n = n;
	return 0;
}

/* ---- raw data ----------------------------------------------------------------------------- */

int img_read_raw(struct cr_img *img, uint64_t off, void *buf, size_t len)
{
	if (img->writing || !img->d->raw)
		return -EINVAL;
	if (fault_hit("%s: read at %llu", img->name, (unsigned long long)off))
		return img_bad(img, -EIO, IMG_RAW_DATA_OFF + off, "read: %s", strerror(EIO));
	if (off > img->raw_size || len > img->raw_size - off)
		return img_bad(img, -ENODATA, IMG_RAW_DATA_OFF + off,
			       "read of %zu bytes past the end of the data (%llu bytes)", len,
			       (unsigned long long)img->raw_size);
	return img_pread(img, buf, len, IMG_RAW_DATA_OFF + off, "page data");
}

/* The one message of a bad page run: the file, the byte offset in it, the run's size. */
static int img_bad_run(const struct cr_img *img, uint64_t off, uint64_t len, uint32_t got,
		       uint32_t crc)
{
	pr_err("%s: offset %llu: page run checksum mismatch: the run of %llu pages there does not "
	       "match its crc32c (%#x, pagemap says %#x)\n",
	       img->name, (unsigned long long)(IMG_RAW_DATA_OFF + off),
	       (unsigned long long)(len / PAGE_SIZE), got, crc);
	return -EBADMSG;
}

int img_check_run(const struct cr_img *img, uint64_t off, const void *buf, size_t len, uint32_t crc)
{
	uint32_t got = crc32c(0, buf, len);

	return got != crc ? img_bad_run(img, off, len, got, crc) : 0;
}

#define IMG_VERIFY_CHUNK (1u << 20)

int img_verify_run(struct cr_img *img, uint64_t off, uint64_t len, uint32_t crc)
{
	uint64_t done = 0;
	uint32_t got = 0;
	char *buf;
	int ret = 0;

	if (img->writing || !img->d->raw)
		return -EINVAL;
	if (off > img->raw_size || len > img->raw_size - off)
		return img_bad(img, -ENODATA, IMG_RAW_DATA_OFF + off,
			       "a run of %llu bytes past the end of the data (%llu bytes)",
			       (unsigned long long)len, (unsigned long long)img->raw_size);
	buf = malloc(min(len, (uint64_t)IMG_VERIFY_CHUNK) ?: 1);
	if (!buf)
		return -ENOMEM;
	while (!ret && done < len) {
		size_t n = min(len - done, (uint64_t)IMG_VERIFY_CHUNK);

		ret = img_read_raw(img, off + done, buf, n);
		got = ret ? got : crc32c(got, buf, n);
		done += n;
	}
	free(buf);
	if (!ret && got != crc)
		ret = img_bad_run(img, off, len, got, crc);
	return ret;
}

int img_read_run(struct cr_img *img, uint64_t off, void *buf, size_t len, uint32_t crc)
{
	int ret = img_read_raw(img, off, buf, len);

	return ret ? ret : img_check_run(img, off, buf, len, crc);
}

/* ---- open, close, accessors --------------------------------------------------------------- */

struct cr_img *img_open_name(int dirfd, const char *name, const struct cr_img_desc *d, int mode)
{
	bool writing = mode & IMG_WRITE;
	struct cr_img *img;
	int ret;

	if (writing && !d) {
		errno = EINVAL;
		return NULL;
	}
	img = calloc(1, sizeof(*img));
	if (!img || !(img->name = strdup(name))) {
		free(img);
		errno = ENOMEM;
		return NULL;
	}
	img->d = d;
	img->writing = writing;
	img->version = IMG_FORMAT_VERSION;
	img->fd = -1;
	/* a restore reads only what the dump wrote (logged there when refused) */
	ret = writing ? 0 : img_track_may_read(dirfd, name, mode);
	if (!ret) {
		img->fd = fault_err(writing ? -ENOSPC : -EIO, "%s: open", name) ? -1
			  : writing ? openat(dirfd, name,
					     O_WRONLY | O_CREAT | O_CLOEXEC |
						     (mode & IMG_KEEP ? 0 : O_TRUNC),
					     0600)
				    : openat(dirfd, name, O_RDONLY | O_CLOEXEC);
		ret = img->fd < 0 ? neg_errno() : 0;
		if (ret && !(ret == -ENOENT && (mode & IMG_OPTIONAL)))
			pr_errno(ret, "%s: open", name);
	}
	if (!ret && writing) {
		img->tracked = d->kind != CR_IMG_INVENTORY && img_track_is_written(dirfd);
		ret = img_start_write(img);
	} else if (!ret) {
		ret = img_start_read(img);
	}
	if (ret) {
		img_free(img);
		errno = -ret;
		return NULL;
	}
	return img;
}

struct cr_img *img_open(int dirfd, enum cr_img_kind kind, uint32_t id, int mode)
{
	char name[64];
	int ret = img_file_name(kind, id, name, sizeof(name));

	if (ret) {
		errno = -ret;
		return NULL;
	}
	return img_open_name(dirfd, name, img_desc(kind), mode);
}

int img_close(struct cr_img *img)
{
	int ret = 0, cerr;

	if (!img)
		return 0;
	if (img->writing) {
		ret = img_finish_write(img);
		cerr = close(img->fd) ? neg_errno() : fault_err(-EIO, "%s: close", img->name);
		if (cerr && !ret)
			ret = img_io_err(img, cerr, "close");
		img->fd = -1;
		if (!ret && img->tracked)
			ret = img_track_note(img->name, img->size, !img->d->raw, img->crc);
	}
	img_free(img);
	return ret;
}

const struct cr_img_desc *img_kind(const struct cr_img *img)
{
	return img->d;
}

const char *img_name(const struct cr_img *img)
{
	return img->name;
}

uint32_t img_version(const struct cr_img *img)
{
	return img->version;
}

uint32_t img_flags(const struct cr_img *img)
{
	return img->flags;
}

uint64_t img_offset(const struct cr_img *img)
{
	return img->off;
}

int img_raw_fd(const struct cr_img *img)
{
	return img->fd;
}

uint64_t img_raw_size(const struct cr_img *img)
{
	return img->raw_size;
}

int img_write_one(int dirfd, enum cr_img_kind kind, uint32_t id, const ProtobufCMessage *msg)
{
	struct cr_img *img = img_open(dirfd, kind, id, IMG_WRITE);
	int ret;

	if (!img)
		return -errno;
	ret = img_write_record(img, msg);
	if (ret) {
		img_close(img);
		return ret;
	}
	return img_close(img);
}

int img_read_one(int dirfd, enum cr_img_kind kind, uint32_t id, ProtobufCMessage **ret)
{
	struct cr_img *img = img_open(dirfd, kind, id, IMG_READ);
	ProtobufCMessage *m = NULL, *extra = NULL;
	uint64_t off;
	int r;

	if (!img)
		return -errno;
	r = img_read_record(img, NULL, &m);
	off = img->off;
	if (r == 0)
		r = img_bad(img, -ENODATA, off, "no record, one expected");
	else if (r > 0)
		r = img_read_record(img, NULL, &extra);
	if (r > 0) {
		r = img_bad(img, -EBADMSG, off, "more than the one record expected");
		protobuf_c_message_free_unpacked(extra, NULL);
	}
	img_close(img);
	if (r) {
		if (m)
			protobuf_c_message_free_unpacked(m, NULL);
		return r;
	}
	*ret = m;
	return 0;
}
