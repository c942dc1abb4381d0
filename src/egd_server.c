// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The EGD server: its clients (accepting, reading, sending, dropping),
 * the loop's side and its reports; the listening socket is egd_listen.c,
 * the replies and rate limits egd_reply.c.
 * See include/rngfeed/egd_server.h for the contract.
 *
 *   tested block ──▶ server's DRBG ──generate──▶ pool ──▶ client out buffers
 *                      (--stdout rules)          (each byte to one client,
 *                                                 wiped as it leaves)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rngfeed/egd_internal.h"
#include "rngfeed/egd_listen.h"
#include "rngfeed/log.h"
#include "rngfeed/metrics.h"
#include "rngfeed/util.h"

#define ACCEPT_BURST 64        /* connections taken per turn at most */
#define ACCEPT_PAUSE_S 1.0     /* after EMFILE: stop accepting this long */
/* An idle client keeps its out buffer this long: freed and allocated
 * again between two requests, the heap's top was trimmed and faulted
 * back in (a tenth of the server's time with 8 busy clients). */
#define IDLE_RELEASE_S 1.0

/* ---- clients --------------------------------------------------------------- */

/* --egd-idle-timeout: a client the server owes nothing that has sent
 * nothing for that long (idle, or stopped in the middle of a request)
 * gives its slot back.  When it will be due, into *@wait. */
static bool idle_too_long(const struct egd_server *s,
			  const struct egd_client *c, double now, double *wait)
{
	if (s->p.idle_timeout <= 0 || c->have_req || c->closing ||
	    c->out_off < c->out_len || c->in_off < c->in_len)
		return false;
	if (now - c->active_at >= s->p.idle_timeout)
		return true;
	*wait = fmin(*wait, c->active_at + s->p.idle_timeout - now);
	return false;
}

static void client_free(struct egd_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->out) {
		explicit_bzero(c->out, EGD_OUT_MAX);
		free(c->out);
	}
	explicit_bzero(c, sizeof(*c));
	free(c);
}

static void client_stats(const struct egd_client *c,
			 struct egd_client_stats *out)
{
	*out = (struct egd_client_stats){
		.id = c->id,
		.served = c->served,
		.requests = c->requests,
		.refused = c->refused,
	};
	snprintf(out->peer, sizeof(out->peer), "%s", c->peer);
}

/* Remove client @i; @dropped: the server's decision, not the client's. */
static void client_close(struct egd_server *s, size_t i, bool dropped)
{
	client_stats(s->clients[i], &s->gone[s->gone_next]);
	s->gone[s->gone_next].departed = true;
	s->gone_next = (s->gone_next + 1) % EGD_CLIENTS_KEPT;
	if (s->n_gone < EGD_CLIENTS_KEPT)
		s->n_gone++;
	client_free(s->clients[i]);
	s->clients[i] = s->clients[--s->n];
	s->clients[s->n] = NULL;
	if (dropped)
		s->st.dropped++;
	else
		s->st.disconnects++;
}

/* A client idle for IDLE_RELEASE_S gives its out buffer back; when it
 * will be due, into *@wait. */
static void out_release(struct egd_client *c, double now, double *wait)
{
	if (!c->out || c->out_len > c->out_off || c->have_req ||
	    c->in_off < c->in_len) {
		c->idle_since = 0;
		return;
	}
	if (c->idle_since == 0)
		c->idle_since = now;
	if (now - c->idle_since < IDLE_RELEASE_S) {
		*wait = fmin(*wait, c->idle_since + IDLE_RELEASE_S - now);
		return;
	}
	c->idle_since = 0;
	explicit_bzero(c->out, EGD_OUT_MAX);
	free(c->out);
	c->out = NULL;
	c->out_off = c->out_len = 0;
}

/* Send what is waiting; -errno when the client is gone. */
static int client_flush(struct egd_client *c, double now)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (c->stalled_since == 0)
				c->stalled_since = now;
			return 0;
		}
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		explicit_bzero(c->out + c->out_off, (size_t)w);
		c->out_off += (size_t)w;
		c->stalled_since = 0;
		c->active_at = now;
	}
	c->out_off = c->out_len = 0;
	c->stalled_since = 0;
	return 0;
}

/* Read what fits into the in buffer; -errno or -ECONNRESET at EOF. */
static int client_read(struct egd_client *c, double now)
{
	ssize_t r;

	if (c->in_off == c->in_len)
		c->in_off = c->in_len = 0;
	if (c->in_off > 0) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (c->in_len == EGD_IN_MAX)
		return 0;
	do
		r = recv(c->fd, c->in + c->in_len, EGD_IN_MAX - c->in_len,
			 MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	if (r == 0)
		return -ECONNRESET;
	c->in_len += (size_t)r;
	c->active_at = now;
	return 0;
}

/* ---- accepting ------------------------------------------------------------- */

static size_t peer_count(const struct egd_server *s, const struct egd_client *c)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++)
		if (c->peer_pid ? s->clients[i]->peer_pid == c->peer_pid
				: strcmp(s->clients[i]->peer, c->peer) == 0)
			k++;
	return k;
}

static void describe_peer(struct egd_client *c, const struct sockaddr_storage *sa)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->ss_family == AF_UNIX) {
		struct ucred cr;
		socklen_t l = sizeof(cr);

		if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0) {
			c->peer_pid = (unsigned long)cr.pid;
			snprintf(c->peer, sizeof(c->peer), "pid %lu uid %lu",
				 (unsigned long)cr.pid, (unsigned long)cr.uid);
		} else {
			snprintf(c->peer, sizeof(c->peer), "unix");
		}
	} else if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(c->peer, sizeof(c->peer), "%s", ip);
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(c->peer, sizeof(c->peer), "%s", ip);
	}
}

static void accept_one(struct egd_server *s, int fd, double now)
{
	struct sockaddr_storage sa;
	struct egd_client *c = calloc(1, sizeof(*c));
	int sndbuf = EGD_SNDBUF;
	const char *why = NULL;

	if (!c) {
		close(fd);
		s->st.rejected++;
		return;
	}
	c->fd = fd;
	c->id = ++s->next_id;
	sa.ss_family = (sa_family_t)(s->addr.kind == EGD_ADDR_UNIX ? AF_UNIX
				     : s->addr.kind == EGD_ADDR_TCP4 ? AF_INET
								     : AF_INET6);
	{
		socklen_t l = sizeof(sa);

		if (getpeername(fd, (struct sockaddr *)&sa, &l) < 0)
			sa.ss_family = AF_UNSPEC;
		if (s->addr.kind == EGD_ADDR_UNIX)
			sa.ss_family = AF_UNIX;
	}
	describe_peer(c, &sa);
	if (s->n >= s->p.max_clients)
		why = "the server has max clients";
	else if (peer_count(s, c) >= s->p.per_peer)
		why = "its peer has the most connections allowed";
	if (why) {
		egd_log(s, now, "connection %lu (%s) refused: %s", c->id, c->peer,
			why);
		s->st.rejected++;
		client_free(c);
		return;
	}
	/* A client that stops reading holds at most this in the kernel. */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	egd_parser_init(&c->parser);
	c->tokens = fmax((double)s->p.rate / 4, EGD_MAX_READ);
	c->filled_at = now;
	c->active_at = now;
	s->clients[s->n++] = c;
	s->st.accepted++;
	log_debug("egd: client %lu (%s) connected", c->id, c->peer);
}

static void accept_all(struct egd_server *s, double now)
{
	for (int k = 0; k < ACCEPT_BURST; k++) {
		int fd = accept4(s->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			accept_one(s, fd, now);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/* The connection stays queued: poll would say so
			 * again at once.  Rest instead of spinning. */
			egd_log(s, now, "accept: %s; pausing %.0f s",
				strerror(errno), ACCEPT_PAUSE_S);
			s->accept_paused_until = now + ACCEPT_PAUSE_S;
		}
		return;
	}
}

int egd_server_new(struct egd_server **out, const struct egd_server_params *p,
		   char *why, size_t why_len)
{
	struct egd_server *s;
	int r;

	*out = NULL;
	if (p->mode & 0002)
		return set_error(why, why_len,
			    "egd-socket-mode %04o is world-writable", p->mode);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct egd_server){ .p = *p, .lfd = -1 };
	s->p.addr = NULL;
	s->p.owner = NULL;
	snprintf(s->owner, sizeof(s->owner), "%s", p->owner ? p->owner : "");
	r = egd_addr_parse(p->addr, &s->addr, why, why_len);
	if (r < 0)
		goto fail;
	egd_addr_format(&s->addr, s->name, sizeof(s->name));
	s->clients = calloc(p->max_clients ? p->max_clients : 1,
			    sizeof(*s->clients));
	s->pool = malloc(EGD_POOL_BYTES);
	r = -ENOMEM;
	if (!s->clients || !s->pool)
		goto fail;
	r = conditioner_new(&s->cond, p->env);
	if (r < 0) {
		set_error(why, why_len, "egd: cannot set up its CTR_DRBG: %s",
			  strerror(-r));
		goto fail;
	}
	s->lfd = egd_listen_open(&(struct egd_listen_params){
					 .addr = &s->addr,
					 .name = s->name,
					 .mode = p->mode,
					 .owner = s->owner,
				 },
				 &s->created, why, why_len);
	if (s->lfd < 0) {
		r = s->lfd;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	egd_server_free(s);
	return r;
}

void egd_server_free(struct egd_server *s)
{
	if (!s)
		return;
	/* At exit: what the last window suppressed is said too. */
	egd_log_flush(&s->rl, 0);
	while (s->clients && s->n)
		client_close(s, s->n - 1, false);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->created)
		unlink(s->addr.path);
	if (s->pool) {
		explicit_bzero(s->pool, EGD_POOL_BYTES);
		free(s->pool);
	}
	conditioner_free(s->cond);
	free(s->clients);
	explicit_bzero(s, sizeof(*s));
	free(s);
}

/* ---- the loop's side ------------------------------------------------------- */

size_t egd_server_pollfds(const struct egd_server *s, struct pollfd *pfd,
			  size_t cap)
{
	size_t k = 0;

	if (k < cap)
		pfd[k++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
	for (size_t i = 0; i < s->n && k < cap; i++) {
		const struct egd_client *c = s->clients[i];
		short ev = 0;

		/* Input only while there is room for it: a client that
		 * pipelines requests waits in its own socket buffer. */
		if (c->in_len - c->in_off < EGD_IN_MAX && !c->closing)
			ev |= POLLIN;
		if (c->out_off < c->out_len)
			ev |= POLLOUT;
		pfd[k++] = (struct pollfd){ .fd = c->fd, .events = ev };
	}
	return k;
}

static struct egd_client *client_by_fd(const struct egd_server *s, int fd,
				       size_t *idx)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->clients[i]->fd == fd) {
			*idx = i;
			return s->clients[i];
		}
	return NULL;
}

void egd_server_events(struct egd_server *s, const struct pollfd *pfd,
		       size_t n, double now)
{
	for (size_t k = 0; k < n; k++) {
		struct egd_client *c;
		size_t i;

		if (!pfd[k].revents)
			continue;
		if (pfd[k].fd == s->lfd) {
			if (now >= s->accept_paused_until)
				accept_all(s, now);
			continue;
		}
		c = client_by_fd(s, pfd[k].fd, &i);
		if (!c)
			continue;
		if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) {
			int r = client_read(c, now);

			/* Closed (or reset): whatever it asked for is
			 * not wanted any more. */
			if (r < 0)
				client_close(s, i, false);
		}
	}
}

bool egd_server_wants(const struct egd_server *s, double now)
{
	return s->starved && !egd_may_generate(s, now);
}

/* Take a waiting block and reseed; true if it did. */
static bool absorb_one(struct egd_server *s, struct source_set *set)
{
	unsigned int idx, credit;

	if (!conditioner_holding(s->cond)) {
		if (!sourceset_take(set, s->block, &idx, &credit))
			return false;
		conditioner_hold(s->cond, idx, credit, s->block);
		explicit_bzero(s->block, sizeof(s->block));
		if (!conditioner_seeded(s->cond))
			log_info("egd: CTR_DRBG instantiated from a tested %s "
				 "block",
				 sourceset_config(set, idx)->driver->name);
	}
	/* Whole: nothing of this DRBG is ever credited. */
	if (conditioner_absorb(s->cond, false) != 1)
		return false;
	s->starved = false;
	return true;
}

bool egd_server_turn(struct egd_server *s, struct source_set *set,
		     bool kernel_wants, double now)
{
	if (kernel_wants) {
		s->claim = false;
		return false;
	}
	if (!egd_server_wants(s, now))
		return s->claim;
	/* Ask for a block whether this reseeded or not: the next one, so
	 * that it is waiting when the next limit comes (as --stdout
	 * does; the reader holds it and reads nothing more meanwhile), or
	 * the one still needed (a request stands until it is met, and a
	 * discard drops what was waiting). */
	(void)absorb_one(s, set);
	sourceset_request(set, false);
	s->claim = true;
	return true;
}

int egd_server_step(struct egd_server *s, double now, double *wait)
{
	bool was_starved = s->starved, more = false;
	size_t n = s->n;

	s->starved = false;
	egd_log_tick(&s->rl, now, wait);
	egd_bucket_fill(&s->tokens, &s->filled_at, s->p.budget, now);
	if (s->accept_paused_until > now)
		*wait = fmin(*wait, s->accept_paused_until - now);
	for (size_t k = 0; k < n && s->n > 0; k++) {
		size_t i = (s->rr + k) % s->n;
		struct egd_client *c = s->clients[i];
		enum serve_result res;

		egd_bucket_fill(&c->tokens, &c->filled_at, s->p.rate, now);
		res = egd_serve(s, c, now);
		if (res == SERVE_BAD)
			egd_log(s, now,
				"client %lu (%s) sent garbage: closed after "
				"the replies before it",
				c->id, c->peer);
		if (client_flush(c, now) < 0) {
			client_close(s, i, c->closing);
			continue;
		}
		if (c->closing && c->out_off == c->out_len) {
			client_close(s, i, true);
			continue;
		}
		if (idle_too_long(s, c, now, wait)) {
			egd_log(s, now,
				"client %lu (%s) sent nothing for %.0f s%s: "
				"dropped",
				c->id, c->peer, s->p.idle_timeout,
				egd_parser_midway(&c->parser)
					? " in the middle of a request"
					: "");
			client_close(s, i, true);
			continue;
		}
		if (c->stalled_since > 0 &&
		    now - c->stalled_since >= EGD_STALL_S) {
			egd_log(s, now,
				"client %lu (%s) read nothing for %.0f s: "
				"dropped",
				c->id, c->peer, EGD_STALL_S);
			client_close(s, i, true);
			continue;
		}
		if (c->stalled_since > 0)
			*wait = fmin(*wait, c->stalled_since + EGD_STALL_S - now);
		out_release(c, now, wait);
		/* More asked, more can be sent: loop again at once.  A
		 * full out buffer that drained is the same: its requests
		 * are still unread, and no fd would wake the loop. */
		if ((res == SERVE_MORE || res == SERVE_FULL) &&
		    c->out_off == c->out_len)
			more = true;
		if (c->asked_at > 0)
			*wait = fmin(*wait, fmax(0.001, c->asked_at +
						 EGD_ANSWER_WAIT_S - now));
		if (res == SERVE_WAIT && c->out_off == c->out_len) {
			/* Waiting for tokens (the DRBG wakes the loop by
			 * the readers' eventfd). */
			if (s->p.rate && c->tokens < EGD_MAX_READ)
				*wait = fmin(*wait, fmax(0.001,
					(EGD_MAX_READ - c->tokens) /
					(double)s->p.rate));
			if (s->p.budget && s->tokens < EGD_MAX_READ)
				*wait = fmin(*wait, fmax(0.001,
					(EGD_MAX_READ - s->tokens) /
					(double)s->p.budget));
		}
	}
	if (s->n)
		s->rr = (s->rr + 1) % s->n;
	/* Newly starved: a turn at once, so that the loop asks the
	 * readers for a block before it sleeps. */
	if (s->starved && !was_starved)
		more = true;
	if (s->starved && egd_may_generate(s, now) == false)
		*wait = fmin(*wait, s->p.reseed_seconds);
	return more ? 1 : 0;
}

void egd_server_discard(struct egd_server *s)
{
	conditioner_discard(s->cond);
	egd_pool_wipe(s);
	/* Output generated from the old state and not yet sent is not
	 * sent: a client owed part of a reply cannot be resynchronised,
	 * so it is closed (QEMU reconnects). */
	for (size_t i = s->n; i-- > 0;)
		if (s->clients[i]->out_off < s->clients[i]->out_len)
			client_close(s, i, true);
}

void egd_server_get_stats(const struct egd_server *s,
			  struct egd_server_stats *out)
{
	struct conditioner_stats cs;

	conditioner_get_stats(s->cond, &cs);
	*out = s->st;
	out->reseeds = cs.reseeds;
	out->discards = cs.discards;
	out->clients = s->n;
}

void egd_server_log_summary(const struct egd_server *s)
{
	struct egd_server_stats st;

	egd_server_get_stats(s, &st);
	log_notice("  egd %s: %llu bytes served in %llu requests to %llu "
		   "clients (%zu connected now); %llu writes refused, %llu "
		   "connections refused, %llu clients dropped, %llu "
		   "disconnected; its DRBG %llu reseeds, %llu discards",
		   s->name, (unsigned long long)st.served,
		   (unsigned long long)st.requests,
		   (unsigned long long)st.accepted, st.clients,
		   (unsigned long long)st.refused,
		   (unsigned long long)st.rejected,
		   (unsigned long long)st.dropped,
		   (unsigned long long)st.disconnects,
		   (unsigned long long)st.reseeds,
		   (unsigned long long)st.discards);
}

static struct metrics_egd_client metrics_line(const struct egd_client_stats *c)
{
	struct metrics_egd_client l = {
		.id = c->id,
		.served = c->served,
		.requests = c->requests,
		.refused = c->refused,
	};

	memcpy(l.peer, c->peer, sizeof(l.peer));
	return l;
}

void egd_server_metrics(const struct egd_server *s, struct metrics_egd *out,
			struct metrics_egd_client *lines, size_t cap)
{
	struct egd_client_stats cs;
	struct egd_server_stats st;
	size_t k = 0;

	egd_server_get_stats(s, &st);
	for (size_t i = 0; i < s->n && k < cap; i++) {
		client_stats(s->clients[i], &cs);
		lines[k++] = metrics_line(&cs);
	}
	/* Then those that left, oldest first. */
	for (size_t j = 0; j < s->n_gone && k < cap; j++)
		lines[k++] = metrics_line(&s->gone[(s->gone_next +
						     EGD_CLIENTS_KEPT -
						     s->n_gone + j) %
						    EGD_CLIENTS_KEPT]);
	*out = (struct metrics_egd){
		.served = st.served,
		.requests = st.requests,
		.refused = st.refused,
		.accepted = st.accepted,
		.rejected = st.rejected,
		.disconnects = st.disconnects,
		.dropped = st.dropped,
		.reseeds = st.reseeds,
		.discards = st.discards,
		.clients = st.clients,
		.n_lines = k,
		.lines = lines,
	};
}

/* ---- --egd-only: an output that wants nothing ------------------------------- */

static bool none_wants(struct output *o, double now, double *wait)
{
	(void)o;
	(void)now;
	(void)wait;
	return false;
}

static bool none_absorb_due(struct output *o, double now)
{
	(void)o;
	(void)now;
	return false;
}

static int none_step(struct output *o, bool want, double now, double *wait)
{
	(void)o;
	(void)want;
	(void)now;
	(void)wait;
	return 0;
}

const struct output_ops egd_server_output = {
	.name = "egd",
	.wants = none_wants,
	.in_parts = false,
	.absorb_due = none_absorb_due,
	.step = none_step,
};
