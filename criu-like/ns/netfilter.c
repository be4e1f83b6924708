// SPDX-License-Identifier: GPL-2.0
/*
 * The netfilter rules of a container's network namespace
 * (Documentation/netfilter.md, "Rules").
 *
 * Dump, with the dumper's thread in the tree's namespace (the tools are
 * forked from it and run there): `nft list ruleset` through libnftables;
 * the tables iptables-nft made with xt expressions (nft prints them as
 * `xt match NAME`, which it cannot read back) are left out of that text and
 * saved with iptables-nft-save instead; the legacy tables (the kernel lists
 * them in /proc/net/ip_tables_names) with iptables-legacy-save. criu-like's
 * own tables, chains and rules (the network lock, the packet holder) are
 * never saved. Then the whole is installed in a scratch namespace made for
 * it and read back: what does not come back the same (an extension a tool
 * cannot save, a set element nft cannot print) is refused, naming the line.
 *
 * Restore, in the new namespace right after its lock (net.c make_ns()):
 * nft -f with the text (no flush: the lock's table is there and stays),
 * then iptables-*-restore --noflush (the rules are appended: the lock's
 * rules, inserted first, still drop everything until the tree runs).
 */
#define LOG_PREFIX "ns: netfilter: "

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../net/net-lock-int.h"
#include "image.h"
#include "log.h"
#include "nfq-hold.h"
#include "netfilter.h"
#include "ns.h"
#include "util.h"

/* criu-like's own: the lock's tables and chains, the holder's chains, the netns lock's rules. */
#define OWN_TABLE "criu_like_"
#define OWN_COMMENT "criu-like-netns"

static bool own_chain(const char *name)
{
	return !strncmp(name, "CRLK_", 5) || !strncmp(name, "CRLH_", 5);
}

/* ---- text, pure --------------------------------------------------------------------------- */

struct strbuf {
	char *s;
	size_t len, size;
};

static int sb_add(struct strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->size) {
		size_t size = (b->len + n + 1) * 2;
		char *p = realloc(b->s, size);

		if (!p)
			return -ENOMEM;
		b->s = p;
		b->size = size;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
	return 0;
}

static char *sb_take(struct strbuf *b)
{
	char *s = b->s ? b->s : strdup("");

	b->s = NULL;
	b->len = b->size = 0;
	return s;
}

/* The word "xt" then "match", "target" or "watcher", outside quotes: a compat expression. */
static bool has_xt(const char *line, size_t len)
{
	bool quoted = false;
	size_t i;

	for (i = 0; i < len; i++) {
		if (line[i] == '"')
			quoted = !quoted;
		if (quoted || (i && line[i - 1] != ' ' && line[i - 1] != '\t'))
			continue;
		if (len - i > 3 && !strncmp(line + i, "xt ", 3) &&
		    (!strncmp(line + i + 3, "match", 5) || !strncmp(line + i + 3, "target", 6) ||
		     !strncmp(line + i + 3, "watcher", 7)))
			return true;
	}
	return false;
}

static bool line_has(const char *line, size_t len, const char *what)
{
	size_t n = strlen(what), i;

	for (i = 0; i + n <= len; i++)
		if (!memcmp(line + i, what, n))
			return true;
	return false;
}

/* A rule of ours inside a table that is not: the netns lock's, a jump to a lock chain. */
static bool own_rule(const char *line, size_t len)
{
	return line_has(line, len, OWN_COMMENT) || line_has(line, len, "jump CRLK_") ||
	       line_has(line, len, "jump CRLH_") || line_has(line, len, "goto CRLK_") ||
	       line_has(line, len, "goto CRLH_") || line_has(line, len, "-j CRLK_") ||
	       line_has(line, len, "-j CRLH_") || line_has(line, len, "-g CRLK_");
}

/* "table FAMILY NAME {": FAMILY NAME into @buf. */
static bool table_head(const char *line, size_t len, char *buf, size_t size)
{
	size_t n;

	if (len < 8 || strncmp(line, "table ", 6) || line[len - 1] != '{')
		return false;
	n = len - 6 - 1;
	while (n && line[6 + n - 1] == ' ')
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(buf, line + 6, n);
	buf[n] = 0;
	return true;
}

struct nft_table {
	struct strbuf text;
	char name[128]; /* "FAMILY NAME" */
	bool xt, drop_chain;
	bool content; /* a rule, a set, an object, a policy that drops... */
	bool objects; /* a set, a map, a named object, flags: more than chains */
};

static bool word_in(const char *list, const char *word, size_t len);

/* "ip filter" and the like: a table of iptables-nft's, or of the same name. */
static bool ipt_table_name(const char *name)
{
	static const char *const names[] = { "filter", "nat", "mangle", "raw", "security" };
	const char *sp = strchr(name, ' ');
	size_t i;

	if (!sp || (strncmp(name, "ip ", 3) && strncmp(name, "ip6 ", 4)))
		return false;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(sp + 1, names[i]))
			return true;
	return false;
}

/* Inside a table: a line that is more than an empty chain accepting everything. */
static bool content_line(const char *line, size_t len)
{
	size_t depth = strspn(line, "\t");

	if (depth == len || (depth == 1 && (line_has(line, len, "chain ") || line[1] == '}')))
		return false;
	if (depth == 2 && !strncmp(line + 2, "type ", 5) && !line_has(line, len, "policy drop"))
		return false;
	return depth >= 1;
}

/*
 * iptables-nft claims the table (@claimed4/@claimed6: the tables its save
 * lists) and it holds nothing but chains: iptables-nft-save gives it back,
 * and only then does iptables-nft still know it after the restore.
 */
static bool ipt_routed(const struct nft_table *t, const char *claimed4, const char *claimed6)
{
	const char *sp = strchr(t->name, ' ');
	const char *claimed = !strncmp(t->name, "ip ", 3) ? claimed4 : claimed6;

	return ipt_table_name(t->name) && !t->objects && claimed && sp &&
	       word_in(claimed, sp + 1, strlen(sp + 1));
}

static int list_add(struct strbuf *b, const char *word, char sep)
{
	return sb_add(b, word, strlen(word)) ?: sb_add(b, &sep, 1);
}

/* The end of a table: into one of @s's parts, or dropped. */
static int table_end(struct nft_table *t, const char *claimed4, const char *claimed6,
		     struct strbuf *out, struct strbuf part[4])
{
	const char *name = strchr(t->name, ' ');
	int err = 0;

	if (name && !strncmp(name + 1, OWN_TABLE, strlen(OWN_TABLE)))
		;
	/* empty base chains that accept: what iptables-nft (the lock, the holder) leaves */
	else if (!t->content && ipt_table_name(t->name))
		;
	else if (ipt_routed(t, claimed4, claimed6))
		err = sb_add(&part[0], t->text.s, t->text.len)
			      ?: list_add(&part[!strncmp(t->name, "ip ", 3) ? 1 : 2], name + 1,
					  ' ');
	else if (t->xt)
		err = list_add(&part[3], t->name, '\n');
	else
		err = sb_add(out, t->text.s, t->text.len);
	t->text.len = 0;
	if (t->text.s)
		t->text.s[0] = 0;
	return err;
}

static int nft_line(struct nft_table *t, const char *line, size_t len)
{
	/* "\tchain NAME {" ... "\t}" */
	if (len > 8 && !strncmp(line, "\tchain ", 7) && line[len - 1] == '{') {
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)(len - 7 - 2), line + 7);
		t->drop_chain = own_chain(name);
	} else if (t->drop_chain) {
		if (len == 2 && !strncmp(line, "\t}", 2))
			t->drop_chain = false;
		return 0;
	} else if (len > 1 && line[0] == '\t' && line[1] != '\t' && line[1] != '}') {
		t->objects = true;
	}
	if (t->drop_chain)
		return 0;
	if (has_xt(line, len))
		t->xt = true;
	if (len > 2 && line[0] == '\t' && line[1] == '\t' && own_rule(line, len))
		return 0;
	if (content_line(line, len))
		t->content = true;
	return sb_add(&t->text, line, len) ?: sb_add(&t->text, "\n", 1);
}

void nf_split_fini(struct nf_split *s)
{
	free(s->nft);
	free(s->ipt);
	free(s->ipt4);
	free(s->ipt6);
	free(s->xt);
	memset(s, 0, sizeof(*s));
}

int nf_nft_split(const char *text, const char *claimed4, const char *claimed6, struct nf_split *s)
{
	struct strbuf out = { 0 }, part[4] = { { 0 } };
	struct nft_table t = { 0 };
	bool in_table = false;
	const char *line, *next;
	int err = 0, i;

	memset(s, 0, sizeof(*s));
	for (line = text; !err && line && *line; line = next) {
		size_t len;

		next = strchr(line, '\n');
		len = next ? (size_t)(next - line) : strlen(line);
		if (next)
			next++;
		if (!in_table && table_head(line, len, t.name, sizeof(t.name))) {
			in_table = true;
			t.xt = t.drop_chain = t.content = t.objects = false;
			err = sb_add(&t.text, line, len) ?: sb_add(&t.text, "\n", 1);
			continue;
		}
		if (!in_table) {
			/* between tables: blank lines, nothing else in a listing */
			err = sb_add(&out, line, len) ?: sb_add(&out, "\n", 1);
			continue;
		}
		err = nft_line(&t, line, len);
		if (!err && len == 1 && line[0] == '}') {
			in_table = false;
			err = table_end(&t, claimed4, claimed6, &out, part);
		}
	}
	free(t.text.s);
	s->nft = sb_take(&out);
	s->ipt = sb_take(&part[0]);
	s->ipt4 = sb_take(&part[1]);
	s->ipt6 = sb_take(&part[2]);
	s->xt = sb_take(&part[3]);
	for (i = 0; i < 4; i++)
		free(part[i].s);
	if (!err && (!s->nft || !s->ipt || !s->ipt4 || !s->ipt6 || !s->xt))
		err = -ENOMEM;
	if (err)
		nf_split_fini(s);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One table of @text from @line on, without blank lines and empty accepting base chains. */
static const char *canon_table(const char *line, struct strbuf *b)
{
	const char *next = line;

	for (; line && *line; line = next) {
		size_t len = strcspn(line, "\n");

		next = line[len] ? line + len + 1 : line + len;
		if (!len)
			continue;
		/* "\tchain X {", "\t\ttype ... policy accept;", "\t}" and nothing else */
		if (!strncmp(line, "\tchain ", 7)) {
			const char *type = next, *end = type + strcspn(type, "\n");
			const char *close = *end ? end + 1 : end;

			if (!strncmp(type, "\t\ttype ", 7) && end - type >= 14 &&
			    !strncmp(end - 14, "policy accept;", 14) &&
			    !strncmp(close, "\t}\n", 3)) {
				next = close + 3;
				continue;
			}
		}
		if (sb_add(b, line, len) || sb_add(b, "\n", 1))
			return NULL;
		if (len == 1 && line[0] == '}')
			return next;
	}
	return next;
}

char *nf_nft_canon(const char *text)
{
	struct strbuf b = { 0 }, all = { 0 };
	char **tables = NULL;
	size_t n = 0, i;
	const char *p = text ? text : "";
	char *ret = NULL;

	while (*p) {
		char **t;

		p += strspn(p, "\n");
		if (!*p)
			break;
		p = canon_table(p, &b);
		t = realloc(tables, (n + 1) * sizeof(*t));
		if (!p || !t)
			goto out;
		tables = t;
		tables[n++] = sb_take(&b);
		if (!tables[n - 1])
			goto out;
	}
	qsort(tables, n, sizeof(*tables), cmp_str);
	for (i = 0; i < n; i++)
		if (sb_add(&all, tables[i], strlen(tables[i])))
			goto out;
	ret = sb_take(&all);
out:
	for (i = 0; i < n; i++)
		free(tables[i]);
	free(tables);
	free(b.s);
	free(all.s);
	return ret;
}

static bool word_in(const char *list, const char *word, size_t len)
{
	const char *p = list;

	while (p && *p) {
		size_t n = strcspn(p, " ");

		if (n == len && !strncmp(p, word, len))
			return true;
		p += n;
		p += strspn(p, " ");
	}
	return false;
}

/* One line of an iptables-save table: kept? Counts what is the table's own in *@own. */
static bool ipt_keep(const char *line, size_t len, bool *own)
{
	char chain[64];

	if (line[0] == ':') {
		const char *sp = memchr(line, ' ', len);

		snprintf(chain, sizeof(chain), "%.*s", sp ? (int)(sp - line - 1) : (int)len - 1,
			 line + 1);
		if (own_chain(chain))
			return false;
		/* a chain of the table's own ("-"), or a built-in one that does not accept */
		if (sp && strncmp(sp, " ACCEPT ", 8) &&
		    !(len - (size_t)(sp - line) == 7 && !strncmp(sp, " ACCEPT", 7)))
			*own = true;
		return true;
	}
	/* "[p:b] -A CHAIN ..." with -c */
	if (line[0] == '[') {
		const char *sp = memchr(line, ' ', len);

		if (!sp)
			return true;
		len -= (size_t)(sp + 1 - line);
		line = sp + 1;
	}
	if (len > 3 && !strncmp(line, "-A ", 3)) {
		snprintf(chain, sizeof(chain), "%.*s", (int)strcspn(line + 3, " "), line + 3);
		if (own_chain(chain) || own_rule(line, len))
			return false;
		*own = true;
	}
	return true;
}

char *nf_ipt_strip(const char *text, const char *only)
{
	struct strbuf out = { 0 }, table = { 0 };
	bool in_table = false, own = false, wanted = false;
	const char *line, *next;
	int err = 0;

	for (line = text; !err && line && *line; line = next) {
		size_t len;

		next = strchr(line, '\n');
		len = next ? (size_t)(next - line) : strlen(line);
		if (next)
			next++;
		if (!len || line[0] == '#')
			continue;
		if (line[0] == '*') {
			in_table = true;
			own = false;
			wanted = !only || word_in(only, line + 1, len - 1);
			table.len = 0;
		} else if (!in_table) {
			continue;
		} else if (len == 6 && !strncmp(line, "COMMIT", 6)) {
			in_table = false;
			if (own && wanted)
				err = sb_add(&out, table.s, table.len)
					      ?: sb_add(&out, "COMMIT\n", 7);
			continue;
		} else if (!ipt_keep(line, len, &own)) {
			continue;
		}
		err = sb_add(&table, line, len) ?: sb_add(&table, "\n", 1);
	}
	free(table.s);
	if (err) {
		free(out.s);
		errno = -err;
		return NULL;
	}
	return sb_take(&out);
}

/* @s at a line: its length without the " expires TIME" parts (they count down). */
static size_t line_norm(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	while (*s && *s != '\n' && n + 1 < size) {
		if (!strncmp(s, " expires ", 9)) {
			s += 9;
			s += strcspn(s, " ,}\n");
			continue;
		}
		buf[n++] = *s++;
	}
	buf[n] = 0;
	return n;
}

size_t nf_text_diff(const char *a, const char *b, char *buf, size_t size)
{
	char la[1024], lb[1024];
	size_t line = 1;

	a = a ? a : "";
	b = b ? b : "";
	while (*a || *b) {
		line_norm(a, la, sizeof(la));
		line_norm(b, lb, sizeof(lb));
		if (strcmp(la, lb)) {
			snprintf(buf, size, "%s", *a ? la : lb);
			return line;
		}
		a += strcspn(a, "\n");
		b += strcspn(b, "\n");
		a += *a == '\n';
		b += *b == '\n';
		line++;
	}
	return 0;
}

/* ---- reading a namespace ------------------------------------------------------------------ */

static void rules_fini(NfRulesEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_sysctls; i++) {
		free(e->sysctls[i]->name);
		free(e->sysctls[i]->value);
		free(e->sysctls[i]);
	}
	free(e->sysctls);
	free(e->nft);
	free(e->ipt_legacy);
	free(e->ip6t_legacy);
	free(e->ipt_nft);
	free(e->ip6t_nft);
	nf_rules_entry__init(e);
}

/* The tables the kernel lists in /proc/net/@names (legacy x_tables), "" when none. */
static void legacy_names(const char *names, char *buf, size_t size)
{
	char path[96];
	ssize_t len;
	int fd;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/thread-self/net/%s", names);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = read(fd, buf, size - 1);
	close(fd);
	buf[len > 0 ? len : 0] = 0;
	for (len = 0; buf[len]; len++)
		if (buf[len] == '\n')
			buf[len] = ' ';
	while (len > 0 && buf[len - 1] == ' ')
		buf[--len] = 0;
}

/* @tool -c, stripped (@only: those tables), into *@ret (NULL when nothing is left). */
static int save_tool(pid_t pid, const char *tool, const char *only, char **ret)
{
	const char *const argv[] = { tool, "-c", NULL };
	_cleanup_free_ char *out = NULL;
	char *s;
	int err;

	*ret = NULL;
	err = run_tool(argv, NULL, &out, false);
	if (err) {
		pr_errno(err, "pid %d: cannot read the rules of its network namespace with %s", pid,
			 tool);
		return err;
	}
	s = nf_ipt_strip(out, only);
	if (!s)
		return -ENOMEM;
	if (*s)
		*ret = s;
	else
		free(s);
	return 0;
}

/* The tables of other families than ip and ip6 with xt expressions: refused by name. */
static int refuse_xt(pid_t pid, const char *xt)
{
	char fam[16], name[96];

	if (!xt || sscanf(xt, "%15s %95s", fam, name) != 2)
		return 0;
	pr_err("pid %d: its network namespace has nftables table %s %s with xt expressions (%s): "
	       "nft cannot print them back and no iptables tool saves that table\n",
	       pid, fam, name,
	       !strcmp(fam, "bridge") ? "ebtables-nft rules"
	       : !strcmp(fam, "arp")  ? "arptables-nft rules"
				      : "compat extensions");
	return -EOPNOTSUPP;
}

/*
 * The tables @tool (iptables-nft-save, ip6tables-nft-save) knows as its own,
 * "filter nat" into @names, its output -c in *@ret_save; only when @ruleset
 * has a table of @family ("ip", "ip6") at all.
 */
static int ipt_claimed(pid_t pid, const char *tool, const char *family, const char *ruleset,
		       char **ret_save, char *names, size_t size)
{
	const char *const argv[] = { tool, "-c", NULL };
	char head[16], bad[128] = "";
	const char *p;
	int err;

	names[0] = 0;
	*ret_save = NULL;
	snprintf(head, sizeof(head), "table %s ", family);
	for (p = ruleset; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, head, strlen(head)))
			break;
	if (!p)
		return 0;
	err = run_tool(argv, NULL, ret_save, false);
	if (err) {
		pr_errno(err, "pid %d: cannot read the rules of its network namespace with %s", pid,
			 tool);
		return err;
	}
	/* "# Table `nat' contains incompatible base-chains, use 'nft' tool...": nft's */
	for (p = *ret_save; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t n = strcspn(p, "'\n");

		if (!strncmp(p, "# Table `", 9) && p[n] == '\'' &&
		    n - 9 + 2 < sizeof(bad) - strlen(bad))
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%.*s ", (int)n - 9,
				 p + 9);
	}
	for (p = *ret_save; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t n = strcspn(p + 1, "\n");

		if (*p == '*' && !word_in(bad, p + 1, n) && strlen(names) + n + 2 < size)
			snprintf(names + strlen(names), size - strlen(names), "%s%.*s",
				 *names ? " " : "", (int)n, p + 1);
	}
	return 0;
}

/* iptables-save text @save of the tables @names, into *@ret (NULL: none). */
static int ipt_pick(const char *save, const char *names, char **ret)
{
	*ret = NULL;
	if (!save || !names || !*names)
		return 0;
	*ret = nf_ipt_strip(save, names);
	if (!*ret)
		return -ENOMEM;
	if (!**ret) {
		free(*ret);
		*ret = NULL;
	}
	return 0;
}

/*
 * Everything of this thread's namespace into @e; -EOPNOTSUPP naming what is
 * not saved. *@ipt_view: the tables iptables-nft saves, as nft lists them.
 */
static int rules_read(pid_t pid, NfRulesEntry *e, char **ipt_view)
{
	_cleanup_free_ char *out = NULL, *save4 = NULL, *save6 = NULL;
	char names[256], claimed4[128], claimed6[128];
	struct nf_split sp = { 0 };
	int err;

	nf_rules_entry__init(e);
	*ipt_view = NULL;
	legacy_names("arp_tables_names", names, sizeof(names));
	if (*names) {
		pr_err("pid %d: its network namespace has legacy arptables tables (%s): arptables "
		       "rules are not dumped\n",
		       pid, names);
		return -EOPNOTSUPP;
	}
	/* a dump's: the context made before the freeze in the namespace (ns/net-ahead.c) */
	err = nft_exec(ns_net_nft_list(), "list ruleset", &out, false);
	if (err == -ENOENT) {
		pr_warn("pid %d: neither libnftables nor nft is here: its nftables ruleset is not "
			"read\n",
			pid);
	} else if (err) {
		pr_errno(err, "pid %d: cannot list the nftables ruleset of its network namespace",
			 pid);
		return err;
	} else {
		err = ipt_claimed(pid, "iptables-nft-save", "ip", out, &save4, claimed4,
				  sizeof(claimed4)) ?:
			      ipt_claimed(pid, "ip6tables-nft-save", "ip6", out, &save6, claimed6,
					  sizeof(claimed6)) ?:
			      nf_nft_split(out, claimed4, claimed6, &sp) ?:
			      refuse_xt(pid, sp.xt) ?:
			      ipt_pick(save4, sp.ipt4, &e->ipt_nft) ?:
			      ipt_pick(save6, sp.ipt6, &e->ip6t_nft);
		if (!err) {
			e->nft = TAKE_PTR(sp.nft);
			*ipt_view = TAKE_PTR(sp.ipt);
		}
		nf_split_fini(&sp);
		if (err)
			return err;
	}
	legacy_names("ip_tables_names", names, sizeof(names));
	if (*names)
		err = save_tool(pid, "iptables-legacy-save", NULL, &e->ipt_legacy);
	legacy_names("ip6_tables_names", names, sizeof(names));
	if (!err && *names)
		err = save_tool(pid, "ip6tables-legacy-save", NULL, &e->ip6t_legacy);
	return err;
}

/* ---- the netfilter sysctls ---------------------------------------------------------------- */

#define NF_SYSCTL_DIR "/proc/sys/net/netfilter"

static int sysctl_add(NfRulesEntry *e, const char *name, const char *value)
{
	NfSysctlEntry **v = realloc(e->sysctls, (e->n_sysctls + 1) * sizeof(*v)), *s;

	if (!v)
		return -ENOMEM;
	e->sysctls = v;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	nf_sysctl_entry__init(s);
	s->name = strdup(name);
	s->value = strdup(value);
	e->sysctls[e->n_sysctls++] = s;
	return s->name && s->value ? 0 : -ENOMEM;
}

/* What this namespace may change under /proc/sys/net/netfilter/ (its mode says: 0644 here). */
static int sysctls_read(NfRulesEntry *e)
{
	DIR *d = opendir(NF_SYSCTL_DIR);
	struct dirent *de;
	int err = 0;

	if (!d)
		return 0; /* no nf_conntrack: nothing to keep */
	while (!err && (de = readdir(d))) {
		char value[256];
		struct stat st;
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, 0) ||
		    !S_ISREG(st.st_mode) || !(st.st_mode & S_IWUSR))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC);
		len = fd < 0 ? -1 : read(fd, value, sizeof(value) - 1);
		if (fd >= 0)
			close(fd);
		if (len <= 0)
			continue;
		while (len > 0 && value[len - 1] == '\n')
			len--;
		value[len] = 0;
		err = sysctl_add(e, de->d_name, value);
	}
	closedir(d);
	return err;
}

/* Written back where the new namespace lets them be: the others are warnings. */
static void sysctls_write(const NfRulesEntry *e)
{
	size_t i;

	for (i = 0; i < e->n_sysctls; i++) {
		const NfSysctlEntry *s = e->sysctls[i];
		char path[256];
		int fd;

		if (strchr(s->name, '/') || s->name[0] == '.')
			continue;
		snprintf(path, sizeof(path), NF_SYSCTL_DIR "/%s", s->name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, s->value, strlen(s->value)) < 0)
			pr_warn("sysctl net/netfilter/%s cannot be set to \"%s\" here: %s\n",
				s->name, s->value, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
}

static bool rules_empty(const NfRulesEntry *e)
{
	return !(e->nft && e->nft[strspn(e->nft, "\n")]) && !e->ipt_legacy && !e->ip6t_legacy &&
	       !e->ipt_nft && !e->ip6t_nft;
}

/* ---- installing them ---------------------------------------------------------------------- */

static int restore_tool(const char *tool, const char *text)
{
	const char *const argv[] = { tool, "-w", "-c", "--noflush", NULL };
	char path[256];

	if (!text)
		return 0;
	if (find_tool(tool, path, sizeof(path))) {
		pr_err("%s is not installed (looked in $PATH and /usr/sbin, /sbin): the rules "
		       "it saved cannot be restored\n",
		       tool);
		return -ENOENT;
	}
	return run_tool(argv, text, NULL, false);
}

int nf_rules_restore(const NfRulesEntry *e)
{
	int err = 0;

	if (!e)
		return 0;
	/* the tree had a table raw: not one that the holder's rules made (nfq-hold.h) */
	nfq_hold_raw_theirs[0] = (e->ipt_nft && strstr(e->ipt_nft, "*raw\n")) ||
				 (e->nft && strstr(e->nft, "table ip raw {"));
	nfq_hold_raw_theirs[1] = (e->ip6t_nft && strstr(e->ip6t_nft, "*raw\n")) ||
				 (e->nft && strstr(e->nft, "table ip6 raw {"));
	/* no flush: the lock's table is in this namespace already and stays until the tree runs */
	if (e->nft && e->nft[strspn(e->nft, "\n")])
		err = nft_exec(NULL, e->nft, NULL, false);
	if (!err)
		err = restore_tool("iptables-legacy-restore", e->ipt_legacy);
	if (!err)
		err = restore_tool("ip6tables-legacy-restore", e->ip6t_legacy);
	if (!err)
		err = restore_tool("iptables-nft-restore", e->ipt_nft);
	if (!err)
		err = restore_tool("ip6tables-nft-restore", e->ip6t_nft);
	/* their rules made conntrack live here: its settings now, before its entries */
	if (!err)
		sysctls_write(e);
	if (err)
		pr_errno(err, "cannot restore the netfilter rules of the network namespace");
	return err;
}

/* ---- the scratch namespace ---------------------------------------------------------------- */

static bool same(pid_t pid, const char *what, const char *a, const char *b)
{
	char line[256];
	size_t n = nf_text_diff(a, b, line, sizeof(line));

	if (!n)
		return true;
	pr_err("pid %d: its %s do not come back the same once restored (line %zu: `%s`): a rule "
	       "or set element the tool cannot print back is not dumped\n",
	       pid, what, n, line);
	return false;
}

/* The tables iptables-nft gives back, compared as nft lists them: no table mistaken for one. */
static bool same_view(pid_t pid, const char *a, const char *b)
{
	_cleanup_free_ char *ca = nf_nft_canon(a), *cb = nf_nft_canon(b);

	return ca && cb && same(pid, "iptables-nft tables (as nft lists them)", ca, cb);
}

/* In a child, in a namespace of its own: install @e, read it back, compare. */
static int check_child(pid_t pid, const NfRulesEntry *e, const char *ipt_view)
{
	NfRulesEntry back = NF_RULES_ENTRY__INIT;
	_cleanup_free_ char *view = NULL;
	char path[256];
	int ok;

	if (unshare(CLONE_NEWNET)) {
		pr_perror("cannot make a scratch network namespace to check the rules");
		return 2;
	}
	/* a forked child of a process that may have threads: exec nft rather than dlopen it */
	if (!find_tool("nft", path, sizeof(path)))
		setenv("CRIU_LIKE_NFT", "cli", 1);
	if (nf_rules_restore(e)) {
		pr_err("pid %d: the netfilter rules of its network namespace cannot be installed "
		       "again (above): not dumped\n",
		       pid);
		return 1;
	}
	if (rules_read(pid, &back, &view))
		return 1;
	ok = same(pid, "nftables ruleset", e->nft, back.nft) &&
	     same(pid, "iptables-legacy rules", e->ipt_legacy, back.ipt_legacy) &&
	     same(pid, "ip6tables-legacy rules", e->ip6t_legacy, back.ip6t_legacy) &&
	     same(pid, "iptables-nft rules", e->ipt_nft, back.ipt_nft) &&
	     same(pid, "ip6tables-nft rules", e->ip6t_nft, back.ip6t_nft) &&
	     same_view(pid, ipt_view, view);
	rules_fini(&back);
	return ok ? 0 : 1;
}

static int check_restorable(pid_t pid, const NfRulesEntry *e, const char *ipt_view)
{
	int status;
	pid_t child = fork();

	if (child < 0)
		return neg_errno();
	if (!child)
		_exit(check_child(pid, e, ipt_view));
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return neg_errno();
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
		return -EOPNOTSUPP;
	pr_err("pid %d: the check of its netfilter rules in a scratch namespace failed\n", pid);
	return -EIO;
}

/* ---- dump and load ------------------------------------------------------------------------ */

int nf_rules_dump(pid_t pid, int dirfd, uint32_t id)
{
	_cleanup_free_ char *ipt_view = NULL;
	NfRulesEntry e;
	int err = rules_read(pid, &e, &ipt_view);

	if (!err && rules_empty(&e)) {
		rules_fini(&e);
		return 0;
	}
	if (!err)
		err = sysctls_read(&e);
	if (!err)
		err = check_restorable(pid, &e, ipt_view);
	if (!err) {
		pr_info("pid %d: netfilter rules: %zu bytes of nftables, legacy %s%s, nft %s%s\n",
			pid, e.nft ? strlen(e.nft) : 0, e.ipt_legacy ? "iptables " : "",
			e.ip6t_legacy ? "ip6tables" : "", e.ipt_nft ? "iptables " : "",
			e.ip6t_nft ? "ip6tables" : "");
		err = img_write_one(dirfd, CR_IMG_NFRULES, id, &e.base);
	}
	rules_fini(&e);
	return err;
}

int nf_rules_load(int dirfd, uint32_t id, NfRulesEntry **ret)
{
	struct cr_img *img = img_open(dirfd, CR_IMG_NFRULES, id, IMG_READ | IMG_OPTIONAL);

	*ret = NULL;
	if (!img)
		return errno == ENOENT ? 0 : -errno;
	img_close(img);
	return img_read_one(dirfd, CR_IMG_NFRULES, id, (ProtobufCMessage **)ret);
}
