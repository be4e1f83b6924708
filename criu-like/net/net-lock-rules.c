// SPDX-License-Identifier: GPL-2.0
/*
 * The network lock's pure half: the text handed to `nft -f -` and to
 * iptables-restore, the names of the tables and chains, and the cleanup rule
 * that tells the lock of a crashed run from one kept for a complete dump.
 * Nothing here runs a program or reads the system (test-net-lock.c).
 */
#define LOG_PREFIX "net-lock: "

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "net-lock.h"
#include "util.h"

/*
 * Before the usual filter chains (priority 0) and mangle-based firewalls'
 * own accept rules: a firewall that accepts established traffic early
 * must not let the locked connection through. After conntrack (-200).
 */
#define NFT_PRIORITY (-150)

static const char *const kind_names[] = {
	[NETLOCK_NFTABLES] = "nftables",
	[NETLOCK_IPTABLES] = "iptables",
	[NETLOCK_SKIP] = "skip",
};

int netlock_parse_kind(const char *s, enum netlock_kind *ret)
{
	size_t i;

	if (!s) {
		*ret = NETLOCK_NFTABLES;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(kind_names); i++)
		if (!strcmp(s, kind_names[i])) {
			*ret = (enum netlock_kind)i;
			return 0;
		}
	return -EINVAL;
}

const char *netlock_kind_name(enum netlock_kind kind)
{
	return (size_t)kind < ARRAY_SIZE(kind_names) ? kind_names[kind] : "?";
}

int netlock_name_kind(const char *name, enum netlock_kind *ret)
{
	if (!strncmp(name, NETLOCK_NFT_PREFIX, strlen(NETLOCK_NFT_PREFIX)))
		*ret = NETLOCK_NFTABLES;
	else if (!strncmp(name, NETLOCK_IPT_PREFIX, strlen(NETLOCK_IPT_PREFIX)))
		*ret = NETLOCK_IPTABLES;
	else
		return -EINVAL;
	return 0;
}

int netlock_make_name(enum netlock_kind kind, bool kept, pid_t pid, uint64_t start_or_stamp,
		      char *buf, size_t size)
{
	const char *prefix;
	int n;

	if (kind == NETLOCK_NFTABLES)
		prefix = kept ? NETLOCK_NFT_KEPT_PREFIX : NETLOCK_NFT_PREFIX;
	else if (kind == NETLOCK_IPTABLES)
		prefix = kept ? NETLOCK_IPT_KEPT_PREFIX : NETLOCK_IPT_PREFIX;
	else
		return -EINVAL;
	/* kept: the stamp in hex keeps an iptables chain name within its 28 characters */
	n = snprintf(buf, size, kept ? "%s%d_%" PRIx64 : "%s%d_%" PRIu64, prefix, pid,
		     start_or_stamp);
	if (n < 0 || (size_t)n >= size || (kind == NETLOCK_IPTABLES && n > 28))
		return -ENAMETOOLONG;
	return 0;
}

/* "<digits>_<digits or hex>" and nothing else. */
static bool parse_pid_stamp(const char *s, bool hex, pid_t *pid, uint64_t *stamp)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '_' || v == 0 || v > INT32_MAX)
		return false;
	*pid = (pid_t)v;
	s = end + 1;
	if (!*s || !(hex ? strchr("0123456789abcdef", *s) : strchr("0123456789", *s)))
		return false;
	v = strtoull(s, &end, hex ? 16 : 10);
	if (errno || *end)
		return false;
	*stamp = v;
	return true;
}

/*
 * The cleanup rule: a name of ours either says "kept" (a complete dump
 * recorded it in its inventory and its restore removes it), or carries the
 * pid and start time of the criu-like that installed it; once that process
 * is gone, nothing will ever remove the lock but this rule.
 */
enum netlock_verdict netlock_judge(const char *name, netlock_alive_fn alive, void *arg)
{
	enum netlock_kind kind;
	const char *kept_prefix;
	uint64_t stamp;
	pid_t pid;

	if (netlock_name_kind(name, &kind))
		return NETLOCK_FOREIGN;
	kept_prefix = kind == NETLOCK_NFTABLES ? NETLOCK_NFT_KEPT_PREFIX : NETLOCK_IPT_KEPT_PREFIX;
	if (!strncmp(name, kept_prefix, strlen(kept_prefix)))
		return parse_pid_stamp(name + strlen(kept_prefix), true, &pid, &stamp)
			       ? NETLOCK_KEPT
			       : NETLOCK_FOREIGN;
	name += kind == NETLOCK_NFTABLES ? strlen(NETLOCK_NFT_PREFIX) : strlen(NETLOCK_IPT_PREFIX);
	if (!parse_pid_stamp(name, false, &pid, &stamp))
		return NETLOCK_FOREIGN;
	return alive(pid, stamp, arg) ? NETLOCK_LIVE : NETLOCK_STALE;
}

/* The name of ours on one line of `nft list tables` ("table inet NAME") or `iptables -S`. */
static bool listing_name(enum netlock_kind kind, const char *line, size_t len, char *buf,
			 size_t size)
{
	const char *lead = kind == NETLOCK_NFTABLES ? "table inet " : "-N ";
	const char *prefix = kind == NETLOCK_NFTABLES ? NETLOCK_NFT_PREFIX : NETLOCK_IPT_PREFIX;
	size_t l = strlen(lead);

	if (len <= l || strncmp(line, lead, l))
		return false;
	line += l;
	len -= l;
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\r'))
		len--;
	if (len >= size || len < strlen(prefix) || strncmp(line, prefix, strlen(prefix)) ||
	    memchr(line, ' ', len))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	return true;
}

static bool listed(char *const *names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

char **netlock_list_names(enum netlock_kind kind, const char *listing)
{
	size_t n = 0, bytes = 0, pass, len;
	char name[NETLOCK_NAME_MAX], **names = NULL, *strs = NULL;
	const char *p, *nl;

	/* pass 0 counts, pass 1 fills one block: the array, then the strings */
	for (pass = 0; pass < 2; pass++) {
		n = 0;
		for (p = listing; *p; p = nl + (*nl == '\n')) {
			nl = strchrnul(p, '\n');
			len = (size_t)(nl - p);
			if (!listing_name(kind, p, len, name, sizeof(name)))
				continue;
			if (pass == 0) {
				bytes += strlen(name) + 1;
			} else if (listed(names, n, name)) {
				continue; /* iptables -S, then ip6tables -S: both families */
			} else {
				names[n] = strcpy(strs, name);
				strs += strlen(name) + 1;
			}
			n++;
		}
		if (pass == 0) {
			names = malloc((n + 1) * sizeof(*names) + bytes);
			if (!names)
				return NULL;
			strs = (char *)(names + n + 1);
		}
	}
	names[n] = NULL;
	return names;
}

int netlock_nft_elem(const struct inet_tuple *t, char *buf, size_t size)
{
	char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
	int n;

	if ((t->family != AF_INET && t->family != AF_INET6) ||
	    !inet_ntop(t->family, t->src, l, sizeof(l)) ||
	    !inet_ntop(t->family, t->dst, r, sizeof(r)))
		return -EINVAL;
	n = snprintf(buf, size, "%s . %u . %s . %u", l, t->sport, r, t->dport);
	return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}

/* The elements of family @family among @t, ", "-separated, after @lead; then "}\n". */
static int put_elems(FILE *f, const char *lead, int family, const struct inet_tuple *t, size_t n)
{
	char e[2 * INET6_ADDRSTRLEN + 32];
	bool first = true;
	size_t i;

	for (i = 0; i < n; i++) {
		if (t[i].family != family)
			continue;
		if (netlock_nft_elem(&t[i], e, sizeof(e)))
			return -EINVAL;
		fprintf(f, "%s%s", first ? lead : ", ", e);
		first = false;
	}
	if (!first)
		fprintf(f, " }\n");
	return 0;
}

/* fclose() is what sets *@text: read it only after. */
static char *close_text(FILE *f, char **text, int err)
{
	if (fclose(f) || err) {
		free(*text);
		errno = err ? -err : ENOMEM;
		return NULL;
	}
	return *text;
}

/*
 * A set per family of 4-tuples as seen from the dumped socket: an outgoing
 * packet matches saddr.sport.daddr.dport, an incoming one the reverse. A
 * loopback connection goes through both hooks on lo: each of its ends that
 * is locked catches it on one side or the other.
 */
char *netlock_nft_create(const char *name, const char *old, const struct inet_tuple *t, size_t n,
			 const char *dir)
{
	char *text = NULL;
	size_t size;
	FILE *f = open_memstream(&text, &size);
	int err;

	if (!f)
		return NULL;
	/* add + delete first: a leftover of the same name is replaced, not merged */
	fprintf(f, "add table inet %s\ndelete table inet %s\ntable inet %s {\n", name, name, name);
	if (dir && netlock_dir_recordable(dir))
		fprintf(f, "\tcomment \"" NETLOCK_DIR_TAG "%s\"\n", dir);
	fprintf(f, "\tset v4 {\n\t\ttype ipv4_addr . inet_service . ipv4_addr . inet_service\n");
	err = put_elems(f, "\t\telements = { ", AF_INET, t, n);
	fprintf(f, "\t}\n\tset v6 {\n\t\ttype ipv6_addr . inet_service . ipv6_addr . "
		   "inet_service\n");
	if (!err)
		err = put_elems(f, "\t\telements = { ", AF_INET6, t, n);
	fprintf(f,
		"\t}\n"
		"\tchain input {\n\t\ttype filter hook input priority %d; policy accept;\n"
		"\t\tip daddr . tcp dport . ip saddr . tcp sport @v4 drop\n"
		"\t\tip6 daddr . tcp dport . ip6 saddr . tcp sport @v6 drop\n\t}\n"
		"\tchain output {\n\t\ttype filter hook output priority %d; policy accept;\n"
		"\t\tip saddr . tcp sport . ip daddr . tcp dport @v4 drop\n"
		"\t\tip6 saddr . tcp sport . ip6 daddr . tcp dport @v6 drop\n\t}\n}\n",
		NFT_PRIORITY, NFT_PRIORITY);
	if (old)
		fprintf(f, "delete table inet %s\n", old);
	return close_text(f, &text, err);
}

char *netlock_nft_add(const char *name, const struct inet_tuple *t, size_t n)
{
	char *text = NULL;
	size_t size, i;
	FILE *f = open_memstream(&text, &size);
	int err = 0, fam;

	if (!f)
		return NULL;
	for (i = 0; i < n && !err; i++)
		if (t[i].family != AF_INET && t[i].family != AF_INET6)
			err = -EINVAL;
	/* one command per family with elements; put_elems() leaves the others out */
	for (fam = 0; fam < 2 && !err; fam++) {
		int family = fam ? AF_INET6 : AF_INET;

		for (i = 0; i < n && t[i].family != family; i++)
			;
		if (i == n)
			continue;
		fprintf(f, "add element inet %s %s ", name, fam ? "v6" : "v4");
		err = put_elems(f, "{ ", family, t, n);
	}
	return close_text(f, &text, err);
}

char *netlock_nft_delete(const char *const *names)
{
	char *text = NULL;
	size_t size;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	/* nft 1.0.6 has no "destroy": an add first makes the delete never fail */
	for (; *names; names++)
		fprintf(f, "add table inet %s\ndelete table inet %s\n", *names, *names);
	return close_text(f, &text, 0);
}

/* The two DROP rules of @t, one per direction. */
static int put_ipt_rules(FILE *f, const char *chain, const struct inet_tuple *t)
{
	char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];

	if (!inet_ntop(t->family, t->src, l, sizeof(l)) ||
	    !inet_ntop(t->family, t->dst, r, sizeof(r)))
		return -EINVAL;
	fprintf(f, "-A %s -p tcp -s %s -d %s --sport %u --dport %u -j DROP\n", chain, r, l,
		t->dport, t->sport);
	fprintf(f, "-A %s -p tcp -s %s -d %s --sport %u --dport %u -j DROP\n", chain, l, r,
		t->sport, t->dport);
	return 0;
}

char *netlock_ipt_add(const char *chain, bool create, int family, const struct inet_tuple *t,
		      size_t n)
{
	char *text = NULL;
	size_t size, i;
	FILE *f;
	int err = 0;

	if (family != AF_INET && family != AF_INET6) {
		errno = EINVAL;
		return NULL;
	}
	f = open_memstream(&text, &size);
	if (!f)
		return NULL;
	fprintf(f, "*filter\n");
	/* -I: first in INPUT and OUTPUT, before any ACCEPT of established traffic */
	if (create)
		fprintf(f, ":%s - [0:0]\n-I INPUT -j %s\n-I OUTPUT -j %s\n", chain, chain, chain);
	for (i = 0; i < n && !err; i++)
		if (t[i].family == family)
			err = put_ipt_rules(f, chain, &t[i]);
	fprintf(f, "COMMIT\n");
	return close_text(f, &text, err);
}

char *netlock_ipt_keep(const char *chain, const char *kept, const char *dir)
{
	char *text = NULL;
	int n;

	/*
	 * A rule with only a comment match names @dir (it drops nothing). Added
	 * before the rename: iptables-restore cannot find a chain renamed in the
	 * same transaction.
	 */
	if (dir && netlock_dir_recordable(dir))
		n = asprintf(&text,
			     "*filter\n-A %s -m comment --comment \"" NETLOCK_DIR_TAG
			     "%s\"\n-E %s %s\nCOMMIT\n",
			     chain, dir, chain, kept);
	else
		n = asprintf(&text, "*filter\n-E %s %s\nCOMMIT\n", chain, kept);
	return n < 0 ? NULL : text;
}

char *netlock_ipt_delete(const char *chain)
{
	char *text = NULL;

	if (asprintf(&text, "*filter\n-D INPUT -j %s\n-D OUTPUT -j %s\n-F %s\n-X %s\nCOMMIT\n",
		     chain, chain, chain, chain) < 0)
		return NULL;
	return text;
}

/* ---- the packet holder's rules (nfq-hold.c) ------------------------------------------------ */

/*
 * Table raw, ahead of conntrack and of every lock: chain @chain_I jumped to
 * from PREROUTING holds what comes to the tree, @chain_O from OUTPUT what it
 * sends. No --queue-bypass: with no listener on @queue the packets are
 * dropped. Each connection's two directions are in both chains: a loopback
 * peer's packet is held at OUTPUT, before the iptables lock (filter OUTPUT)
 * would drop it, and queued again at PREROUTING once released (the holder
 * lets it through at once).
 */
char *netlock_hold_ipt_add(const char *chain, bool create, int family, const struct inet_tuple *t,
			   size_t n, bool netns, int queue)
{
	char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
	char *text = NULL;
	size_t size, i;
	FILE *f;
	int err = 0, c;

	if ((family != AF_INET && family != AF_INET6) || queue < 0 || queue > 65535) {
		errno = EINVAL;
		return NULL;
	}
	f = open_memstream(&text, &size);
	if (!f)
		return NULL;
	fprintf(f, "*raw\n");
	if (create)
		fprintf(f,
			":%s_I - [0:0]\n:%s_O - [0:0]\n-I PREROUTING -j %s_I\n-I OUTPUT -j %s_O\n",
			chain, chain, chain, chain);
	/* a container's whole namespace: everything but lo */
	if (netns)
		fprintf(f,
			"-A %s_I ! -i lo -j NFQUEUE --queue-num %d\n"
			"-A %s_O ! -o lo -j NFQUEUE --queue-num %d\n",
			chain, queue, chain, queue);
	for (i = 0; i < n && !err; i++) {
		if (t[i].family != family)
			continue;
		if (!inet_ntop(family, t[i].src, l, sizeof(l)) ||
		    !inet_ntop(family, t[i].dst, r, sizeof(r))) {
			err = -EINVAL;
			break;
		}
		/* both directions in both chains, as the iptables lock has them */
		for (c = 0; c < 2; c++) {
			fprintf(f,
				"-A %s_%c -p tcp -s %s -d %s --sport %u --dport %u -j NFQUEUE "
				"--queue-num %d\n",
				chain, "IO"[c], r, l, t[i].dport, t[i].sport, queue);
			fprintf(f,
				"-A %s_%c -p tcp -s %s -d %s --sport %u --dport %u -j NFQUEUE "
				"--queue-num %d\n",
				chain, "IO"[c], l, r, t[i].sport, t[i].dport, queue);
		}
	}
	fprintf(f, "COMMIT\n");
	return close_text(f, &text, err);
}

char *netlock_hold_ipt_delete(const char *chain)
{
	char *text = NULL;

	if (asprintf(&text,
		     "*raw\n-D PREROUTING -j %s_I\n-D OUTPUT -j %s_O\n-F %s_I\n-F %s_O\n-X %s_I\n"
		     "-X %s_O\nCOMMIT\n",
		     chain, chain, chain, chain, chain, chain) < 0)
		return NULL;
	return text;
}

/* Is the line @p of @len bytes exactly @lit? */
static bool line_is(const char *p, size_t len, const char *lit)
{
	return len == strlen(lit) && !strncmp(p, lit, len);
}

bool netlock_listing_has(const char *listing, const char *line)
{
	const char *p = listing;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (line_is(p, strcspn(p, "\n"), line))
			return true;
	return false;
}

bool netlock_raw_table_bare(const char *listing)
{
	const char *p = listing;
	size_t chains = 0;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = strcspn(p, "\n");

		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		if (!len || line_is(p, len, "}") || line_is(p, len, "table ip raw {") ||
		    line_is(p, len, "table ip6 raw {"))
			continue;
		if (line_is(p, len, "chain PREROUTING {") || line_is(p, len, "chain OUTPUT {")) {
			chains++;
			continue;
		}
		/* "type filter hook prerouting priority raw; policy accept;" */
		if (!strncmp(p, "type filter hook ", 17) && len >= 31 &&
		    !strncmp(p + len - 14, "policy accept;", 14))
			continue;
		return false; /* a rule, another chain, a set, a policy drop... */
	}
	return chains > 0;
}

size_t netlock_hold_chain_pids(const char *listing, pid_t *pids, size_t max)
{
	const char *p = listing;
	size_t n = 0, i;
	char end;
	int pid;

	for (; p && *p && n < max; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		/* "-N CRLH_<pid>_I": one per holder (its _O twin goes with it) */
		if (sscanf(p, "-N CRLH_%d_I%c", &pid, &end) != 2 || end != '\n' || pid <= 0)
			continue;
		for (i = 0; i < n && pids[i] != pid; i++)
			;
		if (i == n)
			pids[n++] = pid;
	}
	return n;
}

/* "ADDR:PORT" or "[ADDR6]:PORT" of @len bytes at @s. */
static int parse_endpoint(const char *s, size_t len, int *family, uint8_t *addr, uint16_t *port)
{
	char buf[INET6_ADDRSTRLEN + 8], *colon, *a = buf;
	unsigned long p;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	colon = strrchr(buf, ':');
	if (!colon || parse_ulong(colon + 1, &p) || p == 0 || p > 65535)
		return -EINVAL;
	*colon = '\0';
	*family = AF_INET;
	if (buf[0] == '[' && colon > buf + 1 && colon[-1] == ']') {
		colon[-1] = '\0';
		a++;
		*family = AF_INET6;
	}
	if (inet_pton(*family, a, addr) != 1)
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

int netlock_parse_tuple(const char *s, struct inet_tuple *t)
{
	const char *comma = strchr(s, ',');
	int fam2;

	memset(t, 0, sizeof(*t));
	if (!comma || parse_endpoint(s, (size_t)(comma - s), &t->family, t->src, &t->sport) ||
	    parse_endpoint(comma + 1, strlen(comma + 1), &fam2, t->dst, &t->dport) ||
	    fam2 != t->family)
		return -EINVAL;
	return 0;
}

/* Both tools take it in double quotes with no escape: no quote, backslash or newline. */
bool netlock_dir_recordable(const char *dir)
{
	size_t len = strlen(dir);

	return dir[0] == '/' && len <= NETLOCK_DIR_MAX && !strpbrk(dir, "\"\\\n");
}

int netlock_recorded_dir(const char *listing, char *buf, size_t size)
{
	const char *tag = "\"" NETLOCK_DIR_TAG, *p = strstr(listing, tag), *end;

	if (!p)
		return -ENOENT;
	p += strlen(tag);
	end = strchr(p, '"');
	if (!end || (size_t)(end - p) >= size || end == p)
		return -EINVAL;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	return 0;
}

int netlock_kept_pid(const char *name, pid_t *ret)
{
	enum netlock_kind kind;
	const char *prefix;
	uint64_t stamp;

	if (netlock_name_kind(name, &kind))
		return -EINVAL;
	prefix = kind == NETLOCK_NFTABLES ? NETLOCK_NFT_KEPT_PREFIX : NETLOCK_IPT_KEPT_PREFIX;
	if (strncmp(name, prefix, strlen(prefix)) ||
	    !parse_pid_stamp(name + strlen(prefix), true, ret, &stamp))
		return -EINVAL;
	return 0;
}

/*
 * A kept lock lives as long as the images that record it: the directory it
 * names (@dir) holds a complete inventory whose network_lock is @name
 * (@images_lock, NULL without one). While its dumper runs, the lock is
 * being handed over (the inventory is written just after the rename). A lock
 * that names no directory (a path it could not hold) is left alone.
 */
enum netlock_verdict netlock_judge_kept(const char *name, const char *dir, const char *images_lock,
					bool dumper_runs)
{
	if (!dir || dumper_runs)
		return NETLOCK_KEPT;
	return images_lock && !strcmp(images_lock, name) ? NETLOCK_KEPT : NETLOCK_STALE;
}
