// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The conditioner: CTR_DRBG + credit ledger + the block being absorbed.
 * See include/rngfeed/conditioner.h for the contract.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/drbg.h"
#include "rngfeed/feeder.h"
#include "rngfeed/ledger.h"
#include "rngfeed/log.h"
#include "rngfeed/util.h"

#define ADDITIONAL_LEN 16 /* kernel bytes mixed into every generate */

struct conditioner {
	struct conditioner_env env;
	struct drbg *drbg;
	struct ledger ledger;
	struct conditioner_stats stats;

	/* The tested block being absorbed in parts. */
	uint8_t block[MONITOR_BLOCK_BYTES];
	unsigned int idx, credit;
	unsigned int parts, parts_done; /* equal: nothing held */
	uint8_t seed[DRBG_SEEDLEN];     /* the whole block's seed material */
	bool derived;                   /* ...is in seed */
};

static double monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int conditioner_new(struct conditioner **out,
		    const struct conditioner_env *env)
{
	struct conditioner *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	if (env)
		c->env = *env;
	if (!c->env.additional)
		c->env.additional = kernel_get_additional;
	if (!c->env.now)
		c->env.now = monotonic_now;
	ledger_init(&c->ledger);
	r = drbg_new(&c->drbg, NULL);
	if (r < 0) {
		free(c);
		return r;
	}
	*out = c;
	return 0;
}

static void drop_block(struct conditioner *c)
{
	explicit_bzero(c->block, sizeof(c->block));
	explicit_bzero(c->seed, sizeof(c->seed));
	c->derived = false;
	c->parts = c->parts_done = 0;
}

void conditioner_free(struct conditioner *c)
{
	if (!c)
		return;
	drbg_free(c->drbg);
	explicit_bzero(c, sizeof(*c));
	free(c);
}

bool conditioner_holding(const struct conditioner *c)
{
	return c->parts_done < c->parts;
}

void conditioner_hold(struct conditioner *c, unsigned int idx,
		      unsigned int credit,
		      const uint8_t block[MONITOR_BLOCK_BYTES])
{
	conditioner_hold_derived(c, idx, credit, block, NULL);
}

void conditioner_hold_derived(struct conditioner *c, unsigned int idx,
			      unsigned int credit,
			      const uint8_t block[MONITOR_BLOCK_BYTES],
			      const uint8_t *seed)
{
	memcpy(c->block, block, MONITOR_BLOCK_BYTES);
	c->idx = idx;
	c->credit = credit;
	c->parts = ledger_block_parts(MONITOR_BLOCK_BYTES, credit);
	c->parts_done = 0;
	c->derived = seed != NULL;
	if (seed)
		memcpy(c->seed, seed, sizeof(c->seed));
	else
		explicit_bzero(c->seed, sizeof(c->seed));
}

/*
 * Nonce: unique per instantiation (time and PID).  Personalization: what
 * makes this machine and this start differ (machine-id, boot id, host
 * name, PID, clocks), so two machines or two starts with identical source
 * output still get different DRBG states (SP 800-90A 8.7.1).
 */
static void make_nonce(uint8_t nonce[16])
{
	struct timespec rt, mono;
	uint64_t a, b;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	a = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	b = ((uint64_t)getpid() << 40) ^
	    ((uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec);
	memcpy(nonce, &a, 8);
	memcpy(nonce + 8, &b, 8);
}

static size_t make_personalization(char *buf, size_t len)
{
	char machine[64] = "", boot[64] = "", host[64] = "";
	struct timespec rt, mono;
	int n;

	read_text_file("/etc/machine-id", machine, sizeof(machine));
	read_text_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	gethostname(host, sizeof(host) - 1);
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	n = snprintf(buf, len, "rngfeed %s|%s|%s|%s|%d|%lld.%09ld|%lld.%09ld",
		     RNGFEED_VERSION, machine, boot, host, (int)getpid(),
		     (long long)rt.tv_sec, rt.tv_nsec, (long long)mono.tv_sec,
		     mono.tv_nsec);
	return n < 0 ? 0 : ((size_t)n < len ? (size_t)n : len - 1);
}

/* The DRBG failed: whatever it held is not trusted any more, so nothing
 * it held is credited. */
static int drop_state(struct conditioner *c, const char *what, int r)
{
	log_err("CTR_DRBG %s failed: %s", what, strerror(-r));
	drbg_uninstantiate(c->drbg);
	ledger_discard(&c->ledger);
	drop_block(c);
	c->stats.failures++;
	return r;
}

/* Tested raw input into the DRBG, and its credit into the ledger;
 * @derived: that input's seed material (drbg_df_derive()), or NULL. */
static int seed(struct conditioner *c, const uint8_t *data, size_t len,
		const uint8_t *derived)
{
	int r;

	if (derived && drbg_is_instantiated(c->drbg)) {
		r = drbg_reseed_derived(c->drbg, derived);
	} else if (!drbg_is_instantiated(c->drbg)) {
		uint8_t nonce[16];
		char pers[512];
		size_t plen = make_personalization(pers, sizeof(pers));

		make_nonce(nonce);
		r = drbg_instantiate(c->drbg, data, len, nonce, sizeof(nonce),
				     (const uint8_t *)pers, plen);
		explicit_bzero(nonce, sizeof(nonce));
	} else {
		r = drbg_reseed(c->drbg, data, len, NULL, 0);
	}
	if (r < 0)
		return drop_state(c, "(re)seed", r);
	c->stats.reseeds++;
	c->stats.last_reseed = c->env.now();
	c->stats.since_reseed = 0;
	ledger_deposit(&c->ledger, c->idx, (uint64_t)len * 8, c->credit);
	return 1;
}

int conditioner_absorb(struct conditioner *c, bool in_parts)
{
	const size_t n = MONITOR_BLOCK_BYTES;
	unsigned int k = c->parts_done;
	size_t from, to;
	int r;

	if (!conditioner_holding(c))
		return 0;
	from = k * n / c->parts;
	to = in_parts ? (k + 1) * n / c->parts : n;
	r = seed(c, c->block + from, to - from,
		 c->derived && from == 0 && to == n ? c->seed : NULL);
	if (r < 0)
		return r;
	c->parts_done = in_parts ? k + 1 : c->parts;
	if (c->parts_done == c->parts)
		drop_block(c);
	return 1;
}

bool conditioner_seeded(const struct conditioner *c)
{
	return drbg_is_instantiated(c->drbg);
}

unsigned int conditioner_available(const struct conditioner *c)
{
	return ledger_available(&c->ledger);
}

uint64_t conditioner_deposited(const struct conditioner *c, unsigned int idx)
{
	return idx < LEDGER_MAX_SOURCES ? c->ledger.deposited[idx] : 0;
}

/*
 * @len bytes as requests of at most @max bytes each; the kernel's
 * additional input goes into the first only.  On a failure nothing of
 * @out is left: output before the failed request is wiped too.
 */
static int generate(struct conditioner *c, uint8_t *out, size_t len,
		    size_t max)
{
	uint8_t add[ADDITIONAL_LEN];
	size_t done = 0;
	ssize_t n;
	int r = 0;

	if (!drbg_is_instantiated(c->drbg))
		return -ENOKEY;
	n = c->env.additional(add, sizeof(add));
	do {
		size_t k = len - done < max ? len - done : max;

		r = drbg_generate(c->drbg, out + done, k, done ? NULL : add,
				  done || n <= 0 ? 0 : (size_t)n);
		c->stats.requests += r == 0;
		done += k;
	} while (r == 0 && done < len);
	explicit_bzero(add, sizeof(add));
	if (r < 0) {
		if (len)
			explicit_bzero(out, len);
		return drop_state(c, "generate", r);
	}
	c->stats.generated += len;
	c->stats.since_reseed += len;
	return 0;
}

int conditioner_generate(struct conditioner *c, uint8_t *out, size_t len)
{
	/* One request, whatever its length: the DRBG refuses one too long. */
	return generate(c, out, len, len ? len : 1);
}

int conditioner_generate_batch(struct conditioner *c, uint8_t *out,
			       size_t len)
{
	return generate(c, out, len, DRBG_MAX_REQUEST_LEN);
}

unsigned int conditioner_spend(struct conditioner *c, size_t len)
{
	unsigned int credit = ledger_spend(&c->ledger, len);

	c->stats.credited_bits += credit;
	return credit;
}

int conditioner_credited(struct conditioner *c, uint8_t *out, size_t len,
			 unsigned int *credit)
{
	int r;

	if (ledger_available(&c->ledger) == 0)
		return -EAGAIN;
	r = conditioner_generate(c, out, len);
	if (r < 0)
		return r;
	*credit = conditioner_spend(c, len);
	return 0;
}

void conditioner_discard(struct conditioner *c)
{
	drbg_uninstantiate(c->drbg);
	ledger_discard(&c->ledger);
	drop_block(c);
	c->stats.discards++;
}

void conditioner_get_stats(const struct conditioner *c,
			   struct conditioner_stats *out)
{
	*out = c->stats;
}
