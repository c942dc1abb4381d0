// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The EGD server's replies: each request answered in order from the
 * server's DRBG output, under the client's rate limit and the total
 * budget.  See egd_internal.h.
 *
 *   tested block ──▶ server's DRBG ──generate──▶ pool ──▶ client out buffers
 *                      (--stdout rules)          (each byte to one client,
 *                                                 wiped as it leaves)
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/egd_internal.h"

/* ---- the DRBG and the pool ------------------------------------------------- */

bool egd_may_generate(const struct egd_server *s, double now)
{
	struct conditioner_stats cs;

	conditioner_get_stats(s->cond, &cs);
	return conditioner_seeded(s->cond) &&
	       cs.since_reseed < s->p.reseed_bytes &&
	       now - cs.last_reseed < s->p.reseed_seconds;
}

void egd_pool_wipe(struct egd_server *s)
{
	if (s->pool_len)
		explicit_bzero(s->pool, s->pool_len);
	s->pool_off = s->pool_len = 0;
}

/* Output waiting in the pool, refilled from the DRBG when empty and the
 * reseed rules allow; else the server is starved. */
static size_t pool_avail(struct egd_server *s, double now)
{
	struct conditioner_stats cs;
	size_t len;

	/* Output as old as a reseed period is not handed out. */
	if (s->pool_off < s->pool_len &&
	    now - s->pool_time >= s->p.reseed_seconds)
		egd_pool_wipe(s);
	if (s->pool_off < s->pool_len)
		return s->pool_len - s->pool_off;
	egd_pool_wipe(s);
	if (!egd_may_generate(s, now)) {
		s->starved = true;
		return 0;
	}
	conditioner_get_stats(s->cond, &cs);
	len = EGD_POOL_BYTES;
	if (s->p.reseed_bytes - cs.since_reseed < len)
		len = (size_t)(s->p.reseed_bytes - cs.since_reseed);
	if (conditioner_generate_batch(s->cond, s->pool, len) < 0) {
		/* The state was dropped (said already): starved until
		 * the next reseed. */
		s->starved = true;
		return 0;
	}
	s->pool_len = len;
	s->pool_time = now;
	return len;
}

/* ---- token buckets --------------------------------------------------------- */

void egd_bucket_fill(double *tokens, double *filled_at, uint64_t rate,
		     double now)
{
	/* A burst of a quarter second, at least one request's worth. */
	double cap = fmax((double)rate / 4, EGD_MAX_READ);

	if (!rate)
		return;
	*tokens = fmin(cap, *tokens + (now - *filled_at) * (double)rate);
	*filled_at = now;
}

/* Bytes @c may take now (rate, budget and pool). */
static size_t allowance(struct egd_server *s, struct egd_client *c,
			double now)
{
	size_t n = pool_avail(s, now);

	if (s->p.rate && c->tokens < (double)n)
		n = c->tokens > 0 ? (size_t)c->tokens : 0;
	if (s->p.budget && s->tokens < (double)n)
		n = s->tokens > 0 ? (size_t)s->tokens : 0;
	return n;
}

/* Move @n bytes of output from the pool to @c's out buffer. */
static void take(struct egd_server *s, struct egd_client *c, size_t n)
{
	if (n == 0 || !c->out)
		return;
	memcpy(c->out + c->out_len, s->pool + s->pool_off, n);
	explicit_bzero(s->pool + s->pool_off, n);
	s->pool_off += n;
	c->out_len += n;
	c->served += n;
	s->st.served += n;
	if (s->p.rate)
		c->tokens -= (double)n;
	if (s->p.budget)
		s->tokens -= (double)n;
}

/* ---- replies ----------------------------------------------------------------- */

static void out_compact(struct egd_client *c)
{
	size_t n = c->out_len - c->out_off;

	if (c->out_off == 0 || !c->out)
		return;
	memmove(c->out, c->out + c->out_off, n);
	explicit_bzero(c->out + n, c->out_len - n);
	c->out_off = 0;
	c->out_len = n;
}

static size_t out_room(struct egd_client *c)
{
	out_compact(c);
	return EGD_OUT_MAX - c->out_len;
}

/*
 * What a 0x00 or 0x01 may say now.  When the pool is empty because the
 * DRBG waits for its reseed (an idle server's lapses after
 * reseed_seconds), the answer waits for that reseed, up to
 * EGD_ANSWER_WAIT_S: "nothing" would only be true for a moment, and a
 * 0x00 would then disagree with the 0x01 after it.  -1: wait.
 */
static long answer_now(struct egd_server *s, struct egd_client *c, double now)
{
	size_t a = allowance(s, c, now);

	if (a > 0 || pool_avail(s, now) > 0) {
		c->asked_at = 0;
		return (long)(a > LONG_MAX ? LONG_MAX : a);
	}
	if (c->asked_at == 0)
		c->asked_at = now;
	if (now - c->asked_at < EGD_ANSWER_WAIT_S)
		return -1;
	c->asked_at = 0;
	return 0;
}

enum serve_result egd_serve(struct egd_server *s, struct egd_client *c,
			    double now)
{
	size_t served = 0;

	if (c->closing)
		return SERVE_IDLE;
	if (!c->out) {
		if (!c->have_req && c->in_off == c->in_len)
			return SERVE_IDLE;
		c->out = malloc(EGD_OUT_MAX);
		if (!c->out)
			return SERVE_WAIT; /* again on the next turn */
	}
	for (;;) {
		struct egd_request *q = &c->req;
		size_t n;

		if (!c->have_req) {
			enum egd_event ev;

			if (c->in_off == c->in_len)
				return SERVE_IDLE;
			c->in_off += egd_parse(&c->parser, c->in + c->in_off,
					       c->in_len - c->in_off, &ev, q);
			if (ev == EGD_EV_BAD) {
				/* Everything before the garbage is answered
				 * (replies are in order): send that, then
				 * close. */
				c->closing = true;
				return SERVE_BAD;
			}
			if (ev == EGD_EV_MORE)
				return SERVE_IDLE;
			c->have_req = true;
			c->left = q->len;
			c->requests++;
			s->st.requests++;
		}
		switch (q->cmd) {
		case EGD_CMD_AVAILABLE: {
			long a;

			if (out_room(c) < 4)
				return SERVE_FULL;
			a = answer_now(s, c, now);
			if (a < 0)
				return SERVE_WAIT;
			egd_reply_available(c->out + c->out_len,
					    (unsigned long)a > UINT32_MAX / 8
						    ? UINT32_MAX
						    : (uint32_t)a * 8);
			c->out_len += 4;
			break;
		}
		case EGD_CMD_PID:
			if (out_room(c) < EGD_PID_REPLY_MAX)
				return SERVE_FULL;
			c->out_len += egd_reply_pid(c->out + c->out_len,
						    EGD_PID_REPLY_MAX,
						    (unsigned long)getpid());
			break;
		case EGD_CMD_WRITE:
			/* Refused: skipped by the parser, no reply. */
			c->refused++;
			s->st.refused++;
			egd_log(s, now,
				"client %lu (%s) sent %u bytes to write: "
				"refused, not mixed in",
				c->id, c->peer, q->len);
			break;
		case EGD_CMD_READ_NONBLOCK: {
			long a;

			if (out_room(c) < 1 + (size_t)q->len)
				return SERVE_FULL;
			a = q->len ? answer_now(s, c, now) : 0;
			if (a < 0)
				return SERVE_WAIT;
			n = (size_t)a;
			if (n > q->len)
				n = q->len;
			c->out[c->out_len++] = (uint8_t)n;
			take(s, c, n);
			served += n;
			break;
		}
		case EGD_CMD_READ_BLOCK:
			n = out_room(c);
			if (n > c->left)
				n = c->left;
			if (n > EGD_QUANTUM - served)
				n = EGD_QUANTUM - served;
			if (n > 0) {
				size_t a = allowance(s, c, now);

				n = n < a ? n : a;
			}
			if (c->left > 0 && n == 0)
				return served >= EGD_QUANTUM ? SERVE_MORE
				       : out_room(c) == 0    ? SERVE_FULL
							      : SERVE_WAIT;
			take(s, c, n);
			served += n;
			c->left -= (unsigned int)n;
			if (c->left > 0)
				continue;
			break;
		}
		c->have_req = false;
		if (served >= EGD_QUANTUM)
			return SERVE_MORE;
	}
}
