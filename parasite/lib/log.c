// SPDX-License-Identifier: GPL-2.0
#include "parasite-lib.h"

struct out {
	char *buf;
	size_t len, cap;
};

static void put(struct out *o, char c)
{
	if (o->len < o->cap)
		o->buf[o->len] = c;
	o->len++;
}

static void put_num(struct out *o, unsigned long v, unsigned int base, int neg)
{
	char tmp[24];
	int n = 0;

	if (neg)
		put(o, '-');
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n)
		put(o, tmp[--n]);
}

static void format(struct out *o, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		int lng = 0;
		const char *s;
		long v;

		if (*fmt != '%') {
			put(o, *fmt);
			continue;
		}
		if (*++fmt == 'l') {
			lng = 1;
			fmt++;
		}
		switch (*fmt) {
		case 's':
			for (s = va_arg(ap, const char *); *s; s++)
				put(o, *s);
			break;
		case 'd':
			v = lng ? va_arg(ap, long) : va_arg(ap, int);
			put_num(o, v < 0 ? -(unsigned long)v : (unsigned long)v, 10, v < 0);
			break;
		case 'u':
			put_num(o, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int), 10,
				0);
			break;
		case 'x':
			put_num(o, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int), 16,
				0);
			break;
		default:
			put(o, '?');
			break;
		}
	}
}

void plog(struct parasite_log *log, const char *fmt, ...)
{
	struct out o;
	va_list ap;

	if (log->head >= log->size)
		return;
	o.buf = log->buf + log->head;
	o.len = 0;
	o.cap = log->size - log->head;
	va_start(ap, fmt);
	format(&o, fmt, ap);
	va_end(ap);
	put(&o, '\n');
	if (o.len > o.cap) {
		log->dropped++;
		return;
	}
	log->head += (unsigned int)o.len;
}
