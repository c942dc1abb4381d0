/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The EGD server (--egd-server): DRBG output for EGD clients (QEMU's
 * rng-egd, libvirt's egd backend) on a unix or TCP socket.
 *
 * It has its own CTR_DRBG, seeded and reseeded from tested raw blocks
 * with --stdout's rules (no output unseeded or after a failed reseed, a
 * reseed at least every reseed_bytes and reseed_seconds, everything
 * dropped on egd_server_discard()).  It takes a block only when the
 * kernel's output does not want one (the daemon's loop decides), so the
 * kernel comes first and nothing the kernel is credited for ever reaches
 * a client.  Its ledger is never spent: clients are credited nothing by
 * rngfeed.
 *
 * Clients are served round-robin, a bounded amount per client per turn,
 * each under its own rate limit and all under a total budget.  A client
 * costs at most one fd, EGD_IN_MAX + EGD_OUT_MAX bytes and a small socket
 * send buffer; one that sends garbage is closed, one that stops reading
 * is dropped after EGD_STALL_S, connections past max_clients (or past
 * per_peer from one process or address) are closed at once.  Every such
 * event is counted and logged at most EGD_LOG_BURST times per
 * EGD_LOG_WINDOW_S.
 *
 * Single-threaded: only the daemon's main loop calls it.
 */
#ifndef RNGFEED_EGD_SERVER_H
#define RNGFEED_EGD_SERVER_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/output.h"
#include "rngfeed/sourceset.h"

#define EGD_IN_MAX 1024u         /* unparsed request bytes per client */
#define EGD_OUT_MAX 65536u      /* replies not yet sent, per client */
#define EGD_SNDBUF 65536         /* the socket's send buffer, per client */
#define EGD_QUANTUM 65536u      /* bytes per client per turn, at most */
#define EGD_STALL_S 10.0         /* a client that reads nothing for this
				  * long with replies waiting is dropped */
#define EGD_ANSWER_WAIT_S 1.0   /* a 0x00/0x01 waits this long at most
				  * for a lapsed DRBG's reseed */
#define EGD_LOG_BURST 5u
#define EGD_LOG_WINDOW_S 10.0
#define EGD_MAX_CLIENTS 1000u    /* the largest max_clients */
#define EGD_CLIENTS_KEPT 16u     /* clients gone, still in the metrics */
#define EGD_MAX_LISTEN 1u        /* listening sockets */
#define EGD_POLL_MAX (EGD_MAX_CLIENTS + EGD_MAX_LISTEN)

struct egd_server;

struct egd_server_params {
	const char *addr;          /* egd_addr_parse()'s form */
	unsigned int mode;         /* unix socket permissions (0660) */
	const char *owner;         /* "USER[:GROUP]" for the unix socket;
				    * "" = as created */
	unsigned int max_clients;  /* 1..EGD_MAX_CLIENTS */
	unsigned int per_peer;     /* connections from one process (unix)
				    * or address (tcp) at once */
	uint64_t rate;             /* bytes/s per client; 0 = no limit */
	uint64_t budget;           /* bytes/s for all clients; 0 = none */
	double idle_timeout;       /* s; a client that sends nothing this
				    * long while owed nothing is dropped;
				    * 0 = never */
	uint64_t reseed_bytes;     /* as --stdout */
	double reseed_seconds;
	const struct conditioner_env *env; /* tests; NULL = the real one */
};

struct egd_client_stats {
	unsigned long id;          /* connection number since start */
	char peer[48];             /* "pid 123 uid 0" or "127.0.0.1:5555" */
	uint64_t served;           /* bytes of output */
	uint64_t requests;
	uint64_t refused;          /* 0x03 writes */
	bool departed;             /* one of the last EGD_CLIENTS_KEPT to
				    * leave; its counters are final */
};

struct egd_server_stats {
	uint64_t served, requests, refused;
	uint64_t accepted;         /* connections taken */
	uint64_t rejected;         /* connections closed at once: a cap */
	uint64_t disconnects;      /* clients that closed */
	uint64_t dropped;          /* clients closed for garbage or stalling */
	uint64_t reseeds, discards;
	size_t clients;            /* connected now */
};

/*
 * Listen on @p->addr (or take the socket systemd passed for it, see
 * sd_listen_fds(3)) and set up the DRBG.  Before threads exist: it sets
 * the umask for a moment.  0, or -errno with a one-line reason in @why.
 */
int egd_server_new(struct egd_server **out, const struct egd_server_params *p,
		   char *why, size_t why_len);
/* Close everything (unlinking a socket it created), wipe; NULL ok. */
void egd_server_free(struct egd_server *s);

/* The fds to poll, into @pfd (@cap entries); how many. */
size_t egd_server_pollfds(const struct egd_server *s, struct pollfd *pfd,
			  size_t cap);
/* What poll(2) said about those fds: accept, read, write. */
void egd_server_events(struct egd_server *s, const struct pollfd *pfd,
		       size_t n, double now);
/* Does the server need a tested block to go on serving? */
bool egd_server_wants(const struct egd_server *s, double now);
/*
 * The server's part of a loop turn, before the kernel output absorbs:
 * when the kernel output wants blocks (@kernel_wants) the server takes
 * none and drops its claim (the kernel comes first).  Otherwise, when it
 * needs one, it takes a waiting block and reseeds, and asks the readers
 * for the next.  Returns true while it has asked since the kernel last
 * wanted: the blocks that arrive are then the server's, and the caller
 * must not absorb them into the kernel's conditioner (with clients the
 * kernel's ledger receives no block it would not have without them).
 */
bool egd_server_turn(struct egd_server *s, struct source_set *set,
		     bool kernel_wants, double now);
/*
 * Serve the clients, round-robin.  1 when there is more to do at once,
 * else 0 with *@wait lowered to when there may be.
 */
int egd_server_step(struct egd_server *s, double now, double *wait);
/* A VM generation change: drop the DRBG state and unsent output. */
void egd_server_discard(struct egd_server *s);

void egd_server_get_stats(const struct egd_server *s,
			  struct egd_server_stats *out);
/* One summary line (exit, SIGUSR1): what was served, to how many. */
void egd_server_log_summary(const struct egd_server *s);

struct metrics_egd;
struct metrics_egd_client;
/* The server's part of the metrics snapshot: totals into @out, a line
 * per connected client, then per one of the last EGD_CLIENTS_KEPT that
 * left (oldest first), into @lines (@cap of them). */
void egd_server_metrics(const struct egd_server *s, struct metrics_egd *out,
			struct metrics_egd_client *lines, size_t cap);

/* --egd-only: no kernel output at all; the loop serves clients only. */
extern const struct output_ops egd_server_output;

#endif
