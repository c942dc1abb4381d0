/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the EGD server: its state and clients, shared by egd_server.c
 * (the server, its listener and sessions: accepting, reading, sending,
 * dropping) and egd_reply.c (the replies to requests, the DRBG's pool and
 * the rate limits).  Nothing else includes this; the contract is
 * egd_server.h.
 */
#ifndef RNGFEED_EGD_INTERNAL_H
#define RNGFEED_EGD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/egd_proto.h"
#include "rngfeed/egd_server.h"

#define EGD_POOL_BYTES 65536u  /* generated ahead, one DRBG batch */

struct egd_client {
	int fd;
	unsigned long id;
	char peer[48];
	unsigned long peer_pid;     /* unix: the peer process; 0 = tcp */
	struct egd_parser parser;
	uint8_t in[EGD_IN_MAX];
	size_t in_off, in_len;
	bool have_req;              /* req is being answered */
	struct egd_request req;
	unsigned int left;          /* READ_BLOCK: bytes still owed */
	uint8_t *out;               /* EGD_OUT_MAX bytes while busy; NULL
				     * while idle (an idle client costs
				     * this struct and its socket) */
	size_t out_off, out_len;    /* unsent: out[out_off, out_len) */
	double tokens, filled_at;   /* the rate limit's bucket */
	double stalled_since;       /* replies waiting, none taken; 0 */
	double idle_since;          /* nothing asked, nothing waiting; 0 */
	double active_at;           /* the last byte received or sent */
	double asked_at;            /* 0x00/0x01 waiting for a reseed; 0 */
	bool closing;               /* sent garbage: its replies, then close */
	uint64_t served, requests, refused;
};

struct ratelimit {
	double window;
	unsigned int n, suppressed;
};

struct egd_server {
	struct egd_server_params p;
	struct egd_addr addr;
	char owner[64];
	char name[160];             /* the address, for messages */
	int lfd;
	bool created;               /* we bound (and will unlink) the path */
	double accept_paused_until;
	struct conditioner *cond;
	uint8_t block[MONITOR_BLOCK_BYTES];
	uint8_t *pool;              /* EGD_POOL_BYTES */
	size_t pool_off, pool_len;  /* unused output: pool[off, len) */
	double pool_time;           /* when the pool was generated */
	bool starved;               /* a client waits for the DRBG */
	bool claim;                 /* asked the readers for blocks since the
				     * kernel last wanted one: waiting blocks
				     * are the server's */
	double tokens, filled_at;   /* the total budget's bucket */
	struct egd_client **clients;
	size_t n;
	size_t rr;                  /* round-robin start */
	unsigned long next_id;
	struct ratelimit rl;
	struct egd_server_stats st;
	/* The last EGD_CLIENTS_KEPT clients that left, for the metrics:
	 * their series stay, so what they were served is not lost. */
	struct egd_client_stats gone[EGD_CLIENTS_KEPT];
	size_t n_gone, gone_next;
};

enum serve_result {
	SERVE_IDLE,    /* nothing more asked */
	SERVE_MORE,    /* the quantum is spent, more is asked */
	SERVE_FULL,    /* the out buffer has no room for the next reply */
	SERVE_WAIT,    /* waiting: rate, budget or DRBG */
	SERVE_BAD,     /* garbage after the replies before it: close */
};

/* egd_log.c: a log line, at most EGD_LOG_BURST per EGD_LOG_WINDOW_S. */
void egd_log(struct egd_server *s, double now, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Say how many were suppressed, if any; a new window from @now. */
void egd_log_flush(struct ratelimit *rl, double now);
/* The suppressed count is said when its window ends, even if no later
 * message comes: when that is, into *@wait. */
void egd_log_tick(struct ratelimit *rl, double now, double *wait);

/* egd_reply.c */
/* May the server's DRBG generate now (seeded, reseed rules kept)? */
bool egd_may_generate(const struct egd_server *s, double now);
/* Drop the unused output of the pool. */
void egd_pool_wipe(struct egd_server *s);
/* Refill a token bucket of @rate bytes/s (0: no limit) up to @now. */
void egd_bucket_fill(double *tokens, double *filled_at, uint64_t rate,
		     double now);
/* Answer @c's requests in order, up to EGD_QUANTUM bytes of output. */
enum serve_result egd_serve(struct egd_server *s, struct egd_client *c,
			    double now);

#endif
