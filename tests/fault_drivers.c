// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TEST DOUBLES.  The driver table of tests/rngfeed-faulty: every real
 * driver (as in src/drivers.c) plus two fault-injecting ones, for faults
 * that real hardware cannot be made to show on demand.  Never built into
 * rngfeed itself.  tests/test_faults.sh drives them.
 *
 * fakecpu: the real cpu_rng_fill() (the retry loop and the stuck-word
 *   checks of the rdrand/rdseed drivers) over a fake instruction.
 *   -O fakecpu:mode=
 *     good       a counter through splitmix64: passes every test
 *     ones       reports success with all-ones (AMD's post-suspend bug)
 *     repeat     reports success with the same random word every time
 *     cycle      reports success with 4 random words in turn (passes the
 *                word check, which only compares neighbours)
 *     underflow  carry clear (RDSEED underflow) for secs=S seconds after
 *                the first open, then good
 *     flip       good for words=N words (counted, not timed, so a slow
 *                run sees the same), then all-ones for ever
 *   tries=N: attempts per word before cpu_rng_fill() gives up (default
 *   1000, RDSEED's budget).
 *
 * fakedev: a device giving splitmix64 bytes, with one injected I/O fault.
 *   -O fakedev:fault=
 *     none     no fault
 *     short    every read returns 1 to 7 bytes
 *     eintr    storms: 1000 -EINTR before every read
 *     eagain   -EAGAIN for 1.5 s out of every 2 s
 *     eio      -EIO once after=N bytes were read from this open
 *     eof      end of input after=N bytes
 *     vanish   -ENODEV after=N bytes; then open fails with -ENODEV for
 *              down=S seconds; then it works again, for good
 *
 * hang1, hang2, hang3: one driver three times (a source is one driver, and a
 *   stop with several stuck readers needs several): splitmix64 bytes for
 *   after=N bytes (default 0), then a read that no signal ends (a hung
 *   device's): it sleeps for ever, EINTR or not.  mark=PATH: a file made
 *   as the read begins to hang (for a test to wait on).
 *
 * The instruction function of a struct cpu_rng takes no context, so the
 * fake's settings are file-level; one instance of each fake per process
 * (the daemon opens a source once at a time) is all this supports.  The
 * data are deterministic (fixed seeds), so a "no false failure" check
 * does not depend on luck: the blocks are the same on every run.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/cpu_rng.h"
#include "rngfeed/sources.h"
#include "rngfeed/util.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int get_double(const struct source_config *cfg, const char *key,
		      double def, double *out, char *why, size_t why_len)
{
	const char *v = source_config_get(cfg, key);
	char *end;

	*out = def;
	if (!v)
		return 0;
	errno = 0;
	*out = strtod(v, &end);
	if (*end || errno || *out < 0) {
		snprintf(why, why_len, "%s: bad %s '%s'", cfg->driver->name,
			 key, v);
		return -EINVAL;
	}
	return 0;
}

/* Option @key as a whole number from @min to @max in @out (@def when it is
 * not set), or -EINVAL with the reason in @why. */
static int get_ll(const struct source_config *cfg, const char *key,
		  long long min, long long max, long long def, long long *out,
		  char *why, size_t why_len)
{
	const char *v = source_config_get(cfg, key);

	*out = def;
	if (v && parse_ll(v, min, max, out) < 0) {
		snprintf(why, why_len, "%s: bad %s '%s'", cfg->driver->name,
			 key, v);
		return -EINVAL;
	}
	return 0;
}

/* The index of option @key's value in the NULL-ended @names (0 when it is
 * not set), or -EINVAL with the reason in @why. */
static int get_choice(const struct source_config *cfg, const char *key,
		      const char *const *names, char *why, size_t why_len)
{
	const char *v = source_config_get(cfg, key);
	int i;

	if (!v)
		return 0;
	for (i = 0; names[i]; i++)
		if (strcmp(v, names[i]) == 0)
			return i;
	snprintf(why, why_len, "%s: unknown %s '%s'", cfg->driver->name, key,
		 v);
	return -EINVAL;
}

/* ---- both fakes -------------------------------------------------------- */

static int fake_probe(const struct source_config *cfg, char *why,
		      size_t why_len)
{
	(void)cfg;
	snprintf(why, why_len, "test double");
	return 0;
}

static void fake_close(void *state)
{
	free(state);
}

/* The driver source_@id: no credit of its own, 8-bit samples at H 8, the
 * @id_keys options, the @id_open, @id_read and @id_describe functions. */
#define FAULT_DRIVER(id, what)                                               \
	static const struct source_driver source_##id = {                    \
		.name = #id,                                                 \
		.description = "TEST DOUBLE: " what,                         \
		.default_credit = 0,                                         \
		.credit_reason = "none: a test double",                      \
		.sample_bits = 8,                                            \
		.min_entropy = 8.0,                                          \
		.option_keys = id##_keys,                                    \
		.probe = fake_probe,                                         \
		.open = id##_open,                                           \
		.read = id##_read,                                           \
		.close = fake_close,                                         \
		.describe = id##_describe,                                   \
	}

/* ---- fakecpu ----------------------------------------------------------- */

enum cpu_mode { CPU_GOOD, CPU_ONES, CPU_REPEAT, CPU_CYCLE, CPU_UNDERFLOW,
		CPU_FLIP };
static const char *const cpu_modes[] = { "good", "ones", "repeat", "cycle",
					 "underflow", "flip", NULL };

static struct {
	enum cpu_mode mode;
	double secs;
	long long flip_words; /* flip: good words before the fault */
	long long served;     /* flip: good words given so far */
	double first_open; /* 0 until the first open */
	uint64_t counter;
	uint64_t fixed[4];
} fakecpu;

static int fake_insn(uint64_t *v)
{
	double t = now_s() - fakecpu.first_open;

	switch (fakecpu.mode) {
	case CPU_ONES:
		*v = UINT64_MAX;
		return 1;
	case CPU_REPEAT:
		*v = fakecpu.fixed[0];
		return 1;
	case CPU_CYCLE:
		*v = fakecpu.fixed[fakecpu.counter++ % 4];
		return 1;
	case CPU_UNDERFLOW:
		if (t < fakecpu.secs)
			return 0;
		break;
	case CPU_FLIP:
		if (fakecpu.served >= fakecpu.flip_words) {
			*v = UINT64_MAX;
			return 1;
		}
		fakecpu.served++;
		break;
	case CPU_GOOD:
		break;
	}
	*v = splitmix64(&fakecpu.counter);
	return 1;
}

static const char *const fakecpu_keys[] = { "mode", "secs", "words", "tries",
					    NULL };

static int fakecpu_open(const struct source_config *cfg, void **state,
			char *why, size_t why_len)
{
	int mode = get_choice(cfg, "mode", cpu_modes, why, why_len);
	long long n;
	struct cpu_rng *c;
	int i;

	/* words: two 2,500-byte blocks by default. */
	if (mode < 0 ||
	    get_ll(cfg, "tries", 1, 1000000, 1000, &n, why, why_len) < 0 ||
	    get_double(cfg, "secs", 3, &fakecpu.secs, why, why_len) < 0 ||
	    get_ll(cfg, "words", 0, 1LL << 40, 640, &fakecpu.flip_words, why,
		   why_len) < 0)
		return -EINVAL;
	fakecpu.mode = (enum cpu_mode)mode;
	if (!fakecpu.first_open) {
		uint64_t seed = 0xfa6ecb0;

		fakecpu.first_open = now_s();
		for (i = 0; i < 4; i++)
			fakecpu.fixed[i] = splitmix64(&seed);
		fakecpu.counter = seed;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->insn = fake_insn;
	c->max_tries = (unsigned int)n;
	*state = c;
	return 0;
}

static ssize_t fakecpu_read(void *state, void *buf, size_t len)
{
	return cpu_rng_fill(state, buf, len);
}

static int fakecpu_describe(void *state, char *buf, size_t len)
{
	const struct cpu_rng *c = state;

	snprintf(buf, len,
		 "fake CPU RNG, mode %s: %llu underflows, %llu words refused",
		 cpu_modes[fakecpu.mode], (unsigned long long)c->underflows,
		 (unsigned long long)c->faults);
	return 0;
}

FAULT_DRIVER(fakecpu, "RDRAND/RDSEED with injected faults");

/* ---- fakedev ----------------------------------------------------------- */

enum dev_fault { DEV_NONE, DEV_SHORT, DEV_EINTR, DEV_EAGAIN, DEV_EIO,
		 DEV_EOF, DEV_VANISH };
static const char *const dev_faults[] = { "none", "short", "eintr", "eagain",
					  "eio", "eof", "vanish", NULL };

struct fakedev {
	enum dev_fault fault;
	unsigned long long after; /* bytes */
	unsigned long long done;  /* bytes read from this open */
	unsigned int storm;       /* -EINTR left in this storm */
	double opened;
	uint64_t x;               /* generator state */
	uint64_t word;            /* current word, and bytes left of it */
	unsigned int word_left;
};

static double vanished_at; /* 0: present */
static bool vanished_once;
static double vanish_down;
static unsigned int dev_opens;

static const char *const fakedev_keys[] = { "fault", "after", "down", NULL };

static int fakedev_open(const struct source_config *cfg, void **state,
			char *why, size_t why_len)
{
	int fault = get_choice(cfg, "fault", dev_faults, why, why_len);
	long long n;
	struct fakedev *d;

	if (fault < 0 ||
	    get_ll(cfg, "after", 0, 1ll << 40, 100000, &n, why, why_len) < 0 ||
	    get_double(cfg, "down", 3, &vanish_down, why, why_len) < 0)
		return -EINVAL;
	if (vanished_at && now_s() - vanished_at < vanish_down) {
		snprintf(why, why_len, "fakedev: device gone");
		return -ENODEV;
	}
	vanished_at = 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fault = (enum dev_fault)fault;
	d->after = (unsigned long long)n;
	d->opened = now_s();
	/* Each open starts a new deterministic stream. */
	d->x = 0xdeb1ce5ull + dev_opens++;
	*state = d;
	return 0;
}

static ssize_t fakedev_read(void *state, void *buf, size_t len)
{
	struct fakedev *d = state;
	uint8_t *p = buf;
	size_t n = len;

	switch (d->fault) {
	case DEV_SHORT:
		n = 1 + (size_t)(splitmix64(&d->x) % 7);
		break;
	case DEV_EINTR:
		if (d->storm > 0) {
			d->storm--;
			return -EINTR;
		}
		d->storm = 1000; /* the next read starts with a storm */
		break;
	case DEV_EAGAIN:
		if (fmod(now_s() - d->opened, 2.0) < 1.5)
			return -EAGAIN;
		break;
	case DEV_EIO:
		if (d->done >= d->after)
			return -EIO;
		break;
	case DEV_EOF:
		if (d->done >= d->after)
			return 0;
		break;
	case DEV_VANISH:
		if (d->done >= d->after && !vanished_once) {
			vanished_once = true;
			vanished_at = now_s();
			return -ENODEV;
		}
		break;
	case DEV_NONE:
		break;
	}
	if (d->fault >= DEV_EIO && !vanished_once && d->after - d->done < n)
		n = (size_t)(d->after - d->done);
	if (n > len)
		n = len;
	for (size_t i = 0; i < n; i++) {
		if (d->word_left == 0) {
			d->word = splitmix64(&d->x);
			d->word_left = 8;
		}
		p[i] = (uint8_t)d->word;
		d->word >>= 8;
		d->word_left--;
	}
	d->done += n;
	return (ssize_t)n;
}

static int fakedev_describe(void *state, char *buf, size_t len)
{
	const struct fakedev *d = state;

	snprintf(buf, len, "fake device, fault %s, %llu bytes read",
		 dev_faults[d->fault], d->done);
	return 0;
}

FAULT_DRIVER(fakedev, "a device with injected I/O faults");

/* ---- hang1, hang2, hang3 ----------------------------------------------- */

struct hang {
	unsigned long long after, done;
	uint64_t x;
	char mark[256];
};

static const char *const hang_keys[] = { "after", "mark", NULL };

static int hang_open(const struct source_config *cfg, void **state,
		     char *why, size_t why_len)
{
	struct hang *h;
	long long n;

	if (get_ll(cfg, "after", 0, 1ll << 40, 0, &n, why, why_len) < 0)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->after = (unsigned long long)n;
	h->x = 0x4a96ull;
	snprintf(h->mark, sizeof(h->mark), "%s",
		 source_config_get(cfg, "mark") ?: "");
	*state = h;
	return 0;
}

static ssize_t hang_read(void *state, void *buf, size_t len)
{
	struct hang *h = state;
	uint8_t *p = buf;

	if (h->done >= h->after) {
		int fd = h->mark[0] ? open(h->mark, O_WRONLY | O_CREAT | O_CLOEXEC,
					   0644)
				    : -1;

		if (fd >= 0)
			close(fd);
		for (;;)
			pause(); /* the wake signal's handler returns here */
	}
	if (len > h->after - h->done)
		len = (size_t)(h->after - h->done);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)splitmix64(&h->x);
	h->done += len;
	return (ssize_t)len;
}

static int hang_describe(void *state, char *buf, size_t len)
{
	const struct hang *h = state;

	snprintf(buf, len, "a read that never returns after %llu bytes",
		 h->after);
	return 0;
}

#define hang1_keys hang_keys
#define hang1_open hang_open
#define hang1_read hang_read
#define hang1_describe hang_describe
#define hang2_keys hang_keys
#define hang2_open hang_open
#define hang2_read hang_read
#define hang2_describe hang_describe
#define hang3_keys hang_keys
#define hang3_open hang_open
#define hang3_read hang_read
#define hang3_describe hang_describe
FAULT_DRIVER(hang1, "a read that never returns");
FAULT_DRIVER(hang2, "a read that never returns");
FAULT_DRIVER(hang3, "a read that never returns");

const struct source_driver *const source_drivers[] = {
	&source_hwrng,
	&source_rdseed,
	&source_rdrand,
	&source_tpm,
	&source_virtio,
	&source_file,
	&source_fakecpu,
	&source_fakedev,
	&source_hang1,
	&source_hang2,
	&source_hang3,
	NULL,
};
