/* ras_client: the connection and the protocol (see ras_client.h and
 * docs/ras.md). One overall deadline bounds every step: connect, each
 * reply, the report; the report is bounded in size too. */
#include "ras_client.h"

#include <ncclwatch/segment.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "../../escape.h"

const char *const nw_ras_func_names[NW_RAS_NFUNCS] = { "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce" };
const uint16_t nw_ras_func_ops[NW_RAS_NFUNCS] = { NW_OP_BROADCAST, NW_OP_REDUCE, NW_OP_ALLGATHER, NW_OP_REDUCESCATTER,
	NW_OP_ALLREDUCE };

const char *nw_ras_default_addr(void)
{
	const char *s = getenv("NCCL_RAS_ADDR");
	return s && *s ? s : NW_RAS_DEFAULT_ADDR;
}

int nw_ras_addr_of_pid(pid_t pid, char *buf, size_t len, int *enabled)
{
	char path[64], env[65536];
	snprintf(buf, len, "%s", NW_RAS_DEFAULT_ADDR);
	if (enabled) *enabled = 1;
	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f) return -1;
	size_t n = fread(env, 1, sizeof env - 1, f);
	fclose(f);
	env[n] = 0;
	for (size_t i = 0; i < n; i += strlen(env + i) + 1) {
		const char *v = env + i;
		if (!strncmp(v, "NCCL_RAS_ADDR=", 14) && v[14]) snprintf(buf, len, "%s", v + 14);
		else if (!strncmp(v, "NCCL_RAS_ENABLE=", 16) && enabled) *enabled = strtoll(v + 16, NULL, 0) == 1;
	}
	return 0;
}

static void set_err(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int ms_left(double deadline)
{
	double left = deadline - mono();
	return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

/* "what the peer said", printable and short, for a message */
static void quote(char *dst, size_t len, const char *src, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 5 < len && i < 60; i++) {
		unsigned char c = (unsigned char)src[i];
		if (c == '\n') break;
		if (c >= 32 && c < 127) dst[o++] = (char)c;
		else o += (size_t)snprintf(dst + o, len - o, "\\x%02x", c);
	}
	dst[o] = 0;
	if (n > 60 && o + 4 < len) strcat(dst, "...");
}

static int split_addr(const char *addr, char *host, size_t hlen, char *port, size_t plen)
{
	if (addr[0] == '[') {
		const char *rb = strchr(addr, ']');
		if (!rb || (rb[1] && rb[1] != ':')) return -1;
		snprintf(host, hlen, "%.*s", (int)(rb - addr - 1), addr + 1);
		snprintf(port, plen, "%s", rb[1] ? rb + 2 : "28028");
	} else {
		const char *colon = strrchr(addr, ':');
		if (colon && strchr(addr, ':') != colon) return -1;  /* a bare IPv6 address needs [] */
		snprintf(host, hlen, "%.*s", colon ? (int)(colon - addr) : (int)strlen(addr), addr);
		snprintf(port, plen, "%s", colon ? colon + 1 : "28028");
	}
	if (!*host || !*port) return -1;
	for (const char *p = port; *p; p++) if (*p < '0' || *p > '9') return -1;
	return 0;
}

static int connect_one(const struct addrinfo *ai, double deadline, int *refused)
{
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) return fd;
	if (errno != EINPROGRESS) { if (errno == ECONNREFUSED) *refused = 1; close(fd); return -1; }
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int n;
	while ((n = poll(&p, 1, ms_left(deadline))) < 0 && errno == EINTR) {}
	int soerr = 0;
	socklen_t sl = sizeof soerr;
	if (n <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
		if (soerr == ECONNREFUSED) *refused = 1;
		close(fd);
		return -1;
	}
	return fd;
}

static int send_line(int fd, const char *line, double deadline)
{
	size_t n = strlen(line), off = 0;
	while (off < n) {
		ssize_t w = send(fd, line + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) { off += (size_t)w; continue; }
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		if (poll(&p, 1, ms_left(deadline)) <= 0) return -1;
	}
	return 0;
}

/* Buffered reads with the deadline. */
struct conn {
	int fd;
	double deadline;
	char *buf;
	size_t len, cap, max;
	int eof, timed_out, too_big;
};

static int fill(struct conn *c)
{
	if (c->len == c->cap) {
		if (c->cap >= c->max + 1) { c->too_big = 1; return -1; }
		size_t cap = c->cap ? c->cap * 2 : 8192;
		if (cap > c->max + 1) cap = c->max + 1;
		char *n = realloc(c->buf, cap + 1);
		if (!n) return -1;
		c->buf = n;
		c->cap = cap;
	}
	for (;;) {
		ssize_t r = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
		if (r > 0) { c->len += (size_t)r; return 0; }
		if (r == 0) { c->eof = 1; return -1; }
		if (errno == EINTR) continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) { c->eof = 1; return -1; }
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int n = poll(&p, 1, ms_left(c->deadline));
		if (n == 0) { c->timed_out = 1; return -1; }
		if (n < 0 && errno != EINTR) { c->eof = 1; return -1; }
	}
}

/* One reply line (without '\n') into line; the bytes after it stay buffered. */
static int read_line(struct conn *c, char *line, size_t len)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - c->buf);
			size_t k = n < len - 1 ? n : len - 1;
			memcpy(line, c->buf, k);
			line[k] = 0;
			if (k && line[k - 1] == '\r') line[k - 1] = 0;
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			return 0;
		}
		if (c->len > 4096) return -2;   /* a protocol reply is one short line */
		if (fill(c)) return -1;
	}
}

static int fail_read(struct conn *c, const char *addr, const char *what, double secs, char *err, size_t errlen)
{
	char q[128];
	if (c->timed_out) {
		set_err(err, errlen, "RAS at %s: no %s within %.0f s", addr, what, secs);
		return NW_RAS_NO_ANSWER;
	}
	if (c->too_big) {
		set_err(err, errlen, "RAS at %s: %s larger than %zu bytes", addr, what, c->max);
		return NW_RAS_BAD_PEER;
	}
	quote(q, sizeof q, c->buf ? c->buf : "", c->len);
	if (c->len) set_err(err, errlen, "RAS at %s: not NCCL's RAS protocol: sent '%s' instead of a %s", addr, q, what);
	else set_err(err, errlen, "RAS at %s: the connection closed before the %s", addr, what);
	return NW_RAS_BAD_PEER;
}

/* Connect to addr before the deadline: the socket, or -1 with err and *rc. */
static int ras_connect(const char *addr, double deadline, double secs, int *rc, char *err, size_t errlen)
{
	char host[256], port[32];
	if (split_addr(addr, host, sizeof host, port, sizeof port)) {
		set_err(err, errlen, "RAS address '%s': not host:port", addr);
		*rc = NW_RAS_ERROR;
		return -1;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g) {
		set_err(err, errlen, "RAS address '%s': %s", addr, gai_strerror(g));
		*rc = NW_RAS_ERROR;
		return -1;
	}
	int fd = -1, refused = 0;
	for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) fd = connect_one(a, deadline, &refused);
	freeaddrinfo(ai);
	if (fd < 0) {
		if (refused)
			set_err(err, errlen, "no RAS answers at %s: connection refused (no NCCL process there, NCCL_RAS_ENABLE=0, "
			        "or NCCL_RAS_ADDR differs)", addr);
		else
			set_err(err, errlen, "no RAS answers at %s: no connection within %.0f s", addr, secs);
		*rc = NW_RAS_NO_ANSWER;
	}
	return fd;
}

/* A client session: connected, CLIENT PROTOCOL answered. */
struct session {
	const char *addr;
	double secs;                  /* the whole exchange's deadline, in seconds from its start */
	struct conn c;
	char line[1100];              /* the last reply line */
};

static void session_end(struct session *s)
{
	free(s->c.buf);
	close(s->c.fd);
}

/* Send cmd, read its one-line reply into s->line: NW_RAS_OK, or an error
 * code with err set ("what" names the reply in the message). */
static int command(struct session *s, const char *cmd, const char *what, char *err, size_t errlen)
{
	if (send_line(s->c.fd, cmd, s->c.deadline)) {
		set_err(err, errlen, "RAS at %s: the connection broke while sending a command", s->addr);
		return NW_RAS_BAD_PEER;
	}
	if (read_line(&s->c, s->line, sizeof s->line))
		return fail_read(&s->c, s->addr, what, s->secs, err, errlen);
	return NW_RAS_OK;
}

/* The reply in s->line was not the one wanted: "RAS at ADDR: <why>: answered '<line>'<after>". */
static int refused(struct session *s, const char *why, const char *after, char *err, size_t errlen)
{
	char q[128];
	quote(q, sizeof q, s->line, strlen(s->line));
	set_err(err, errlen, "RAS at %s: %s'%s'%s", s->addr, why, q, after);
	return NW_RAS_BAD_PEER;
}

/* Connect and agree on protocol 2: NW_RAS_OK (then session_end), or an error. */
static int session_start(struct session *s, const struct nw_ras_query_opts *o, char *err, size_t errlen)
{
	s->addr = o->addr ? o->addr : nw_ras_default_addr();
	s->secs = o->deadline_s > 0 ? o->deadline_s : NW_RAS_DEFAULT_DEADLINE_S;
	double deadline = mono() + s->secs;
	int rc = NW_RAS_OK;
	int fd = ras_connect(s->addr, deadline, s->secs, &rc, err, errlen);
	if (fd < 0)
		return rc;
	s->c = (struct conn){ .fd = fd, .deadline = deadline,
	                      .max = o->max_bytes ? o->max_bytes : NW_RAS_DEFAULT_MAX_BYTES };
	if ((rc = command(s, "CLIENT PROTOCOL 2\n", "SERVER PROTOCOL reply", err, errlen)) == NW_RAS_OK &&
	    strncasecmp(s->line, "SERVER PROTOCOL ", 16))
		rc = refused(s, "not NCCL's RAS protocol: answered ", " to CLIENT PROTOCOL", err, errlen);
	if (rc != NW_RAS_OK)
		session_end(s);
	return rc;
}

int nw_ras_monitor(const struct nw_ras_query_opts *o, const char *groups, int json, FILE *out, char *err, size_t errlen)
{
	struct nw_ras_query_opts dflt = { .server_timeout_s = -1 };
	struct session s;
	int rc = session_start(&s, o ? o : &dflt, err, errlen);
	if (rc != NW_RAS_OK)
		return rc;
	char cmd[1100];
	if (json && (rc = command(&s, "SET FORMAT json\n", "reply to SET FORMAT", err, errlen)) == NW_RAS_OK &&
	    strcasecmp(s.line, "OK"))
		rc = refused(&s, "no JSON events (NCCL before 2.28.7?): answered ", " to SET FORMAT json", err, errlen);
	snprintf(cmd, sizeof cmd, "MONITOR%s%.1000s\n", groups ? " " : "", groups ? groups : "");
	if (rc == NW_RAS_OK && (rc = command(&s, cmd, "reply to MONITOR", err, errlen)) == NW_RAS_OK &&
	    strcasecmp(s.line, "OK"))
		rc = refused(&s, "MONITOR refused (it needs NCCL 2.29.2 or later): answered ", "", err, errlen);
	/* events until the server closes, the deadline, or the size bound
	 * (then NW_RAS_LIMIT: the user must know the watch was cut short);
	 * shown as sent but escaped (../escape.h), a UTF-8 character cut by a
	 * read kept for the next */
	unsigned esc = json ? NW_ESC_JSON : NW_ESC_LINES;
	size_t limit = s.c.max, shown = 0;
	int capped = 0;
	while (rc == NW_RAS_OK && !capped) {
		struct conn *c = &s.c;
		if (c->len) {
			size_t n = c->len, w;
			if (n >= limit - shown) {
				nw_put_escaped_n(out, c->buf, limit - shown, esc);
				w = limit - shown;
				capped = 1;
			} else {
				w = nw_put_escaped_part(out, c->buf, n, esc);
			}
			fflush(out);
			memmove(c->buf, c->buf + w, c->len - w);
			c->len -= w;
			shown += w;
		}
		if (!capped && fill(c))
			break;   /* eof, deadline: the watch ends */
	}
	if (rc == NW_RAS_OK && !capped && s.c.len)
		nw_put_escaped_n(out, s.c.buf, s.c.len, esc);   /* a character cut at the end */
	if (fflush(out) != 0 && rc == NW_RAS_OK) {
		set_err(err, errlen, "RAS at %s: --monitor: writing the events failed", s.addr);
		rc = NW_RAS_ERROR;
	}
	if (rc == NW_RAS_OK && capped) {
		set_err(err, errlen, "RAS at %s: --monitor stopped after %zu bytes of events, its limit, before its timeout",
		        s.addr, limit);
		rc = NW_RAS_LIMIT;
	}
	session_end(&s);
	return rc;
}

int nw_ras_query(const struct nw_ras_query_opts *o, struct nw_ras_report *out, char *err, size_t errlen)
{
	struct nw_ras_query_opts dflt = { .server_timeout_s = -1 };
	if (!o)
		o = &dflt;
	memset(out, 0, sizeof *out);
	struct session s;
	int rc = session_start(&s, o, err, errlen);
	if (rc != NW_RAS_OK)
		return rc;
	int json = !o->force_text;
	if (o->server_timeout_s >= 0) {
		char cmd[64];
		snprintf(cmd, sizeof cmd, "TIMEOUT %d\n", o->server_timeout_s);
		if ((rc = command(&s, cmd, "reply to TIMEOUT", err, errlen)) == NW_RAS_OK && strcasecmp(s.line, "OK"))
			rc = refused(&s, "answered ", " to TIMEOUT", err, errlen);
	}
	/* NCCL 2.28.7+; older servers answer "ERROR: Unknown command" and keep the connection */
	if (rc == NW_RAS_OK && json &&
	    (rc = command(&s, "SET FORMAT json\n", "reply to SET FORMAT", err, errlen)) == NW_RAS_OK) {
		if (!strncasecmp(s.line, "ERROR: Unknown command", 22))
			json = 0;
		else if (strcasecmp(s.line, "OK"))
			rc = refused(&s, "answered ", " to SET FORMAT json", err, errlen);
	}
	if (rc == NW_RAS_OK && send_line(s.c.fd, o->verbose ? "VERBOSE STATUS\n" : "STATUS\n", s.c.deadline)) {
		set_err(err, errlen, "RAS at %s: the connection broke while sending a command", s.addr);
		rc = NW_RAS_BAD_PEER;
	}
	/* the report is streamed until the server closes the connection */
	while (rc == NW_RAS_OK && !s.c.eof)
		if (fill(&s.c) && !s.c.eof)
			rc = fail_read(&s.c, s.addr, "complete report", s.secs, err, errlen);
	if (rc == NW_RAS_OK && s.c.len == 0) {
		set_err(err, errlen, "RAS at %s: the connection closed without a report", s.addr);
		rc = NW_RAS_BAD_PEER;
	}
	if (rc == NW_RAS_OK) {
		s.c.buf[s.c.len] = 0;
		char name[200];
		snprintf(name, sizeof name, "RAS at %s", s.addr);
		/* the buffer becomes the report's raw text (no copy), its slack
		 * from doubling given back first */
		char *buf = realloc(s.c.buf, s.c.len + 1);
		if (buf) s.c.buf = buf;
		buf = s.c.buf;
		s.c.buf = NULL;
		if (nw_ras_parse_owned(name, buf, s.c.len, json, out, err, errlen))
			rc = NW_RAS_BAD_PEER;
		else
			snprintf(out->addr, sizeof out->addr, "%s", s.addr);
	}
	session_end(&s);
	return rc;
}
