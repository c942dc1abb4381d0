// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source set (sourceset.h) over test-double drivers, never the real
 * hardware: open, start (told through an eventfd), take round robin,
 * request only credited sources, credit_coming / any_credit, per-slot
 * stats kept over stop and reload, discard, a source that is not usable
 * (skipped, or waited for with wait_for_source), two sources on one
 * device, and the hw_random gate left alone for a device that is not the
 * kernel's hw_random (10:183); a claimed credit (above the driver's
 * default) is 0 until the first full assessment, and what that assessment
 * learned survives a reload of the same source, not of another.  The sysfs directory is a fixture in a
 * temporary directory, checked unchanged afterwards.
 *
 * Every wait is a poll with a generous deadline: nothing here asserts how
 * fast a loaded machine is, only what happens and what never does.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rngfeed/config.h"
#include "rngfeed/reader.h"
#include "rngfeed/sourceset.h"
#include "test_doubles.h"

/* ---- the test doubles (those that count; test_doubles.h reads) ----------- */

static atomic_int probes, opens, closes;

static int d_probe(const struct source_config *cfg, char *why, size_t len)
{
	(void)cfg;
	(void)why;
	(void)len;
	atomic_fetch_add(&probes, 1);
	return 0;
}

static int d_probe_fails(const struct source_config *cfg, char *why,
			 size_t len)
{
	(void)cfg;
	atomic_fetch_add(&probes, 1);
	snprintf(why, len, "the test double is not here");
	return -ENODEV;
}

static int d_open(const struct source_config *cfg, void **state, char *why,
		  size_t len)
{
	(void)cfg;
	(void)why;
	(void)len;
	*state = malloc(1);
	if (!*state)
		return -ENOMEM;
	atomic_fetch_add(&opens, 1);
	return 0;
}

static int d_open_fails(const struct source_config *cfg, void **state,
			char *why, size_t len)
{
	(void)cfg;
	(void)state;
	snprintf(why, len, "cannot open the test double: %s",
		 strerror(ENOENT));
	return -ENOENT;
}

static void d_close(void *state)
{
	atomic_fetch_add(&closes, 1);
	free(state);
}

/* H 6 per 8-bit sample: a credit cap of 768/1024. */
#define DOUBLE(id, credit, probef, openf, ...)                              \
	static const struct source_driver id = {                            \
		.name = #id, .description = "test double",                  \
		.default_credit = credit, .sample_bits = 8,                 \
		.min_entropy = 6.0, .probe = probef, .open = openf,         \
		.read = td_read, .close = d_close, __VA_ARGS__              \
	}

DOUBLE(credited, 512, d_probe, d_open);
DOUBLE(credited2, 256, d_probe, d_open);
DOUBLE(zero, 0, d_probe, d_open);
DOUBLE(missing, 512, d_probe_fails, d_open_fails);
DOUBLE(dev_a, 512, d_probe, d_open, .flags = SOURCE_F_DEVICE);
DOUBLE(dev_b, 512, d_probe, d_open, .flags = SOURCE_F_DEVICE);
/* A CPU-instruction double over the generator behind a kernel hw_random
 * driver (as s390-trng is); the fixture's current device is virtio_rng.0. */
DOUBLE(twin_of_current, 512, d_probe, d_open, .hw_random_twin = "virtio_rng");
DOUBLE(twin_of_other, 512, d_probe, d_open, .hw_random_twin = "s390-trng");

/* ---- fixture ------------------------------------------------------------- */

static char base[64]; /* the run's directory (main) */
static char dir[80], sysfs[96], state_path[128];
static struct rngfeed_config cfg;
static struct sourceset_params params;
static struct source_set *set;
static int evfd = -1;

static void put(const char *file, const char *text)
{
	td_put(sysfs, file, text);
}

static const char *get(const char *file, char *buf, size_t len)
{
	return td_get(sysfs, file, buf, len);
}

static int entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void setup(void)
{
	td_dir_make(dir, sizeof(dir), base);
	snprintf(sysfs, sizeof(sysfs), "%s/sysfs", dir);
	ck_assert_int_eq(mkdir(sysfs, 0700), 0);
	snprintf(state_path, sizeof(state_path), "%s/run/hwrng-quality", dir);
	put("rng_current", "virtio_rng.0\n");
	put("rng_available", "virtio_rng.0 none \n");
	put("rng_quality", "1024\n");
	put("rng_selected", "0\n");
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = MODE_DAEMON;
	params = (struct sourceset_params){
		.retry_delay = 0.05,
		.retry_max = 0.2,
		.max_failures = 3,
		.gate_hwrng = false,
		.sysfs_dir = sysfs,
		.gate_state = state_path,
	};
	set = NULL;
	atomic_store(&probes, 0);
	atomic_store(&opens, 0);
	atomic_store(&closes, 0);
	evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(evfd, 0);
}

static void teardown(void)
{
	sourceset_free(set);
	set = NULL;
	close(evfd);
	td_tree_remove(dir);
}

static void add(const struct source_driver *d)
{
	source_config_init(&cfg.sources[cfg.n_sources++], d);
}

static void make_set(void)
{
	ck_assert_int_eq(sourceset_new(&set, &cfg, &params), 0);
}

/* The set of the sources added, made, @n of them opened and started. */
#define ASSERT_SET_STARTED(n)                                                \
	do {                                                                 \
		make_set();                                                  \
		ck_assert_uint_eq(sourceset_open(set), (n));                 \
		ck_assert_uint_eq(sourceset_start(set, evfd), (n));          \
	} while (0)

/* ---- helpers ------------------------------------------------------------- */

static struct reader_stats slot_stats(size_t i)
{
	struct reader_stats st;

	sourceset_stats(set, i, &st);
	return st;
}

/* Every byte read went into a tested block: passed, or (rarely, for
 * random data: a health-test false alarm) failed. */
#define ASSERT_RAW_IS_BLOCKS(st)                                            \
	do {                                                                \
		ck_assert_uint_eq((st).raw_bytes,                           \
				  ((st).blocks_passed + (st).blocks_failed) \
					  * MONITOR_BLOCK_BYTES);           \
		ck_assert_uint_le((st).blocks_failed, 2);                   \
	} while (0)

/* Request (credited only or all) and take one block; false at the
 * deadline. */
static bool take_one(bool credited_only, uint8_t *block, unsigned int *idx,
		     unsigned int *credit)
{
	return TD_WAIT_UNTIL((sourceset_request(set, credited_only),
			      sourceset_take(set, block, idx, credit)));
}

/* ---- open, start, take --------------------------------------------------- */

START_TEST(test_open_start_round_robin)
{
	static uint8_t block[MONITOR_BLOCK_BYTES], zeros[MONITOR_BLOCK_BYTES];
	unsigned int idx, credit, last = 99;
	uint64_t ev = 0, passed[2] = { 1, 1 };

	add(&credited);
	add(&credited2);
	make_set();
	ck_assert_uint_eq(sourceset_count(set), 2);
	ck_assert_uint_eq(sourceset_open(set), 2);
	ck_assert_int_eq(atomic_load(&opens), 2);
	/* Opened, not started: no reader yet, nothing to take. */
	ck_assert(!sourceset_running(set, 0));
	ck_assert(!sourceset_used(set, 0));
	ck_assert(!sourceset_any_credit(set));
	ck_assert(!sourceset_credit_coming(set));
	ck_assert(!sourceset_take(set, block, &idx, &credit));
	ck_assert_uint_eq(sourceset_start(set, evfd), 2);
	ck_assert(sourceset_running(set, 0) && sourceset_running(set, 1));
	ck_assert(sourceset_used(set, 0) && sourceset_used(set, 1));
	ck_assert_uint_eq(sourceset_credit(set, 0), 512);
	ck_assert_uint_eq(sourceset_credit(set, 1), 256);
	ck_assert_str_eq(sourceset_config(set, 1)->driver->name, "credited2");
	ck_assert(sourceset_any_credit(set));
	ck_assert(sourceset_credit_coming(set));
	/* The readers use what the set opened: no second open. */
	ck_assert_int_eq(atomic_load(&opens), 2);
	/* Starting again starts nothing more. */
	ck_assert_uint_eq(sourceset_start(set, evfd), 0);

	/* Each taken block is replaced before the next take, so both
	 * readers always have one waiting: round robin alternates, where
	 * "first slot first" would take slot 0 every time. */
	sourceset_request(set, false);
	ck_assert(TD_WAIT_UNTIL(slot_stats(0).blocks_passed >= 1));
	ck_assert(TD_WAIT_UNTIL(slot_stats(1).blocks_passed >= 1));
	for (int k = 0; k < 12; k++) {
		ck_assert(sourceset_take(set, block, &idx, &credit));
		ck_assert_uint_lt(idx, 2);
		ck_assert_uint_ne(idx, last);
		/* The limit in force (the reader waits for a request, so
		 * it holds): a quarter of the on-line estimate before a
		 * full assessment (issue 25), under the ceiling. */
		ck_assert_uint_eq(credit, sourceset_effective_credit(set, idx));
		ck_assert_uint_gt(credit, 0);
		ck_assert_uint_le(credit, idx == 0 ? 512 : 256);
		ck_assert_uint_le(credit, ONLINE_NO_LIMIT / ASSESSOR_QUICK_DIVISOR);
		ck_assert(memcmp(block, zeros, sizeof(block)) != 0);
		last = idx;
		passed[idx]++;
		sourceset_request(set, false);
		ck_assert(TD_WAIT_UNTIL(slot_stats(idx).blocks_passed >= passed[idx]));
	}
	/* The readers told the eventfd. */
	ck_assert_int_eq(read(evfd, &ev, sizeof(ev)), (ssize_t)sizeof(ev));
	ck_assert_uint_gt(ev, 0);
	/* Nothing read beyond what was asked: 6 taken, 1 waiting each. */
	for (int i = 0; i < 2; i++) {
		struct reader_stats st = slot_stats((size_t)i);

		ck_assert_uint_eq(st.blocks_passed, 7);
		ASSERT_RAW_IS_BLOCKS(st);
		ck_assert_int_eq(st.state, READER_RUNNING);
		ck_assert_uint_eq(st.errors, 0);
	}
}
END_TEST

START_TEST(test_request_credited_only)
{
	static uint8_t block[MONITOR_BLOCK_BYTES];
	unsigned int idx, credit;
	struct reader_stats st;

	add(&zero);
	add(&credited);
	ASSERT_SET_STARTED(2);
	ck_assert_uint_eq(sourceset_credit(set, 0), 0);
	for (int i = 0; i < 10; i++) {
		ck_assert(take_one(true, block, &idx, &credit));
		ck_assert_uint_eq(idx, 1);
		ck_assert_uint_eq(credit, sourceset_effective_credit(set, 1));
		ck_assert_uint_gt(credit, 0);
		ck_assert_uint_le(credit, ONLINE_NO_LIMIT / ASSESSOR_QUICK_DIVISOR);
	}
	/* The credit-0 reader was never asked: it read nothing. */
	st = slot_stats(0);
	ck_assert_uint_eq(st.raw_bytes, 0);
	ck_assert_uint_eq(st.blocks_passed, 0);
	/* Asked for everything, it delivers, with its credit 0. */
	sourceset_request(set, false);
	ck_assert(TD_WAIT_UNTIL(slot_stats(0).blocks_passed >= 1));
	do {
		ck_assert(take_one(false, block, &idx, &credit));
	} while (idx != 0);
	ck_assert_uint_eq(credit, 0);
}
END_TEST

START_TEST(test_credit_coming)
{
	add(&zero);
	ASSERT_SET_STARTED(1);
	/* Only credit 0 running: nothing credited will come. */
	ck_assert(sourceset_running(set, 0));
	ck_assert(!sourceset_any_credit(set));
	ck_assert(!sourceset_credit_coming(set));
	sourceset_free(set);
	set = NULL;

	cfg.n_sources = 0;
	add(&zero);
	add(&credited);
	make_set();
	ck_assert_uint_eq(sourceset_open(set), 2);
	ck_assert(!sourceset_credit_coming(set));
	ck_assert_uint_eq(sourceset_start(set, evfd), 2);
	/* Opening or in its start-up test (nothing requested yet) counts. */
	ck_assert(sourceset_any_credit(set));
	ck_assert(sourceset_credit_coming(set));
	sourceset_stop(set);
	ck_assert(!sourceset_running(set, 1));
	ck_assert(sourceset_used(set, 1));
	ck_assert(!sourceset_any_credit(set));
	ck_assert(!sourceset_credit_coming(set));
}
END_TEST

/* Stats survive stop (twice) and reload, added once. */
START_TEST(test_stats_stop_reload)
{
	static uint8_t block[MONITOR_BLOCK_BYTES];
	unsigned int idx, credit;
	struct rngfeed_config fresh;
	struct reader_stats st;

	add(&credited);
	add(&zero);
	ASSERT_SET_STARTED(2);
	for (int i = 0; i < 3; i++)
		ck_assert(take_one(true, block, &idx, &credit));
	st = slot_stats(0);
	ck_assert_uint_eq(st.blocks_passed, 3);
	sourceset_stop(set);
	ck_assert(!sourceset_running(set, 0));
	ck_assert_int_eq(atomic_load(&closes), 2);
	ck_assert_uint_eq(slot_stats(0).blocks_passed, 3);
	st = slot_stats(0);
	ASSERT_RAW_IS_BLOCKS(st);
	sourceset_stop(set);
	ck_assert_uint_eq(slot_stats(0).blocks_passed, 3);
	ck_assert_int_eq(atomic_load(&closes), 2);

	/* Reload with the credit-0 source switched off. */
	fresh = cfg;
	fresh.sources[1].enabled = false;
	fresh.retry_delay = 0.05;
	fresh.retry_max = 0.2;
	fresh.max_failures = 3;
	ck_assert_uint_eq(sourceset_reload(set, &fresh, evfd), 1);
	ck_assert(sourceset_running(set, 0));
	ck_assert(!sourceset_running(set, 1));
	for (int i = 0; i < 2; i++) {
		ck_assert(take_one(false, block, &idx, &credit));
		ck_assert_uint_eq(idx, 0);
	}
	/* Totals over both readers of the slot. */
	ck_assert_uint_eq(slot_stats(0).blocks_passed, 5);
	st = slot_stats(0);
	ASSERT_RAW_IS_BLOCKS(st);
	ck_assert_uint_ge(st.raw_bytes, 5 * MONITOR_BLOCK_BYTES);
}
END_TEST

/* Take blocks of slot 0 until its full assessment learned something: the
 * credits taken before it all 0 (a claimed credit). */
static struct reader_stats until_learned(void)
{
	static uint8_t block[MONITOR_BLOCK_BYTES];
	unsigned int idx, credit;
	struct reader_stats st = slot_stats(0);

	while (st.full.learned.samples == 0) {
		ck_assert(take_one(false, block, &idx, &credit));
		st = slot_stats(0);
		if (st.full.learned.samples == 0)
			ck_assert_uint_eq(credit, 0);
		ck_assert_uint_le(st.blocks_passed, 200);
	}
	return st;
}

/* Issue 33: what the assessment learned survives a reload of the same
 * source (the first block after it is credited at once), not one of
 * another source (nothing until its own first assessment). */
START_TEST(test_memory_over_reload)
{
	static uint8_t block[MONITOR_BLOCK_BYTES];
	char path_a[128], path_b[128], err[200];
	unsigned int idx, credit;
	struct rngfeed_config fresh;
	struct reader_stats st;
	uint64_t learned;

	snprintf(path_a, sizeof(path_a), "%s/a", dir);
	snprintf(path_b, sizeof(path_b), "%s/b", dir);
	add(&dev_a);
	ck_assert_int_eq(source_config_set(&cfg.sources[0], "device", path_a, err, sizeof(err)), 0);
	ck_assert_int_eq(source_config_set(&cfg.sources[0], "credit", "700", err, sizeof(err)), 0);
	ASSERT_SET_STARTED(1);
	st = until_learned();
	learned = st.full.learned.samples;
	ck_assert_uint_ge(learned, 26 * MONITOR_BLOCK_BYTES);
	ck_assert(TD_WAIT_UNTIL((sourceset_request(set, false),
				 sourceset_take(set, block, &idx, &credit) && credit > 0)));

	/* The same source again: what was learned holds from the start. */
	fresh = cfg;
	fresh.retry_delay = 0.05;
	fresh.retry_max = 0.2;
	fresh.max_failures = 3;
	ck_assert_uint_eq(sourceset_reload(set, &fresh, evfd), 1);
	ck_assert_uint_eq(slot_stats(0).full.learned.samples, learned);
	ck_assert(take_one(false, block, &idx, &credit));
	ck_assert_uint_gt(credit, 0);
	ck_assert_uint_le(credit, 700);

	/* Another device: nothing learned, nothing credited until its own
	 * first assessment. */
	ck_assert_int_eq(source_config_set(&fresh.sources[0], "device", path_b, err, sizeof(err)), 0);
	ck_assert_uint_eq(sourceset_reload(set, &fresh, evfd), 1);
	ck_assert_uint_eq(slot_stats(0).full.learned.samples, 0);
	st = until_learned();
	ck_assert_uint_ge(st.full.learned.samples, 26 * MONITOR_BLOCK_BYTES);
}
END_TEST

START_TEST(test_discard_waiting)
{
	static uint8_t block[MONITOR_BLOCK_BYTES];
	unsigned int idx, credit;

	add(&credited);
	ASSERT_SET_STARTED(1);
	sourceset_request(set, false);
	ck_assert(TD_WAIT_UNTIL(slot_stats(0).blocks_passed >= 1));
	sourceset_discard(set);
	ck_assert(!sourceset_take(set, block, &idx, &credit));
	/* It goes on after a discard. */
	ck_assert(take_one(false, block, &idx, &credit));
}
END_TEST

/* ---- sources that are not there ------------------------------------------ */

START_TEST(test_unusable_skipped)
{
	add(&missing);
	add(&credited);
	ASSERT_SET_STARTED(1);
	ck_assert(!sourceset_running(set, 0));
	ck_assert(!sourceset_used(set, 0));
	ck_assert(sourceset_running(set, 1));
}
END_TEST

START_TEST(test_wait_for_source)
{
	struct reader_stats st;

	params.wait_for_source = true;
	add(&missing);
	ASSERT_SET_STARTED(1);
	ck_assert(sourceset_running(set, 0));
	ck_assert_uint_eq(sourceset_credit(set, 0), 512);
	/* The reader keeps trying to open it. */
	ck_assert(TD_WAIT_UNTIL(slot_stats(0).state != READER_OPENING));
	st = slot_stats(0);
	ck_assert_int_ne(st.state, READER_RUNNING);
	ck_assert_uint_eq(st.blocks_passed, 0);
	ck_assert_msg(strstr(st.reason, "No such file"), "reason: %s",
		      st.reason);
}
END_TEST

START_TEST(test_disabled_not_opened)
{
	add(&credited);
	cfg.sources[0].enabled = false;
	make_set();
	ck_assert_uint_eq(sourceset_open(set), 0);
	ck_assert_int_eq(atomic_load(&probes), 0);
	ck_assert_uint_eq(sourceset_start(set, evfd), 0);
	ck_assert(!sourceset_running(set, 0));
}
END_TEST

/* Two enabled sources reading one device: only the later one is used. */
START_TEST(test_shared_device_later_wins)
{
	char err[256];

	add(&dev_a);
	add(&dev_b);
	ck_assert_int_eq(source_config_set(&cfg.sources[0], "device",
					   "/dev/null", err, sizeof(err)),
			 0);
	ck_assert_int_eq(source_config_set(&cfg.sources[1], "device",
					   "/dev/null", err, sizeof(err)),
			 0);
	ASSERT_SET_STARTED(1);
	ck_assert(!sourceset_running(set, 0));
	ck_assert(sourceset_running(set, 1));
}
END_TEST

/*
 * /dev/hwrng read by one source while a later source reads the generator
 * behind /dev/hwrng's current device directly: one generator, two
 * monitors; only the later source is used.  A twin of a device that is
 * not the current one leaves both running.
 */
static void twin_case(const struct source_driver *twin, bool hwrng_used)
{
	char err[256];
	struct stat st;

	if (stat("/dev/hwrng", &st) != 0 || !S_ISCHR(st.st_mode) ||
	    major(st.st_rdev) != 10 || minor(st.st_rdev) != 183) {
		printf("SKIP twin: no /dev/hwrng (10:183) here\n");
		return;
	}
	add(&dev_a);
	add(twin);
	ck_assert_int_eq(source_config_set(&cfg.sources[0], "device",
					   "/dev/hwrng", err, sizeof(err)),
			 0);
	ASSERT_SET_STARTED(hwrng_used ? 2 : 1);
	ck_assert(sourceset_running(set, 0) == hwrng_used);
	ck_assert(sourceset_running(set, 1));
}

START_TEST(test_hw_random_twin_later_wins)
{
	twin_case(&twin_of_current, false);
}
END_TEST

START_TEST(test_hw_random_twin_of_other_device)
{
	twin_case(&twin_of_other, true);
}
END_TEST

/* ---- the hw_random gate --------------------------------------------------- */

/* A device that is not 10:183 is not the kernel's hw_random: the gate is
 * not taken and the (fixture) sysfs is left as it was. */
START_TEST(test_gate_not_taken_for_other_device)
{
	char err[256], buf[64], devpath[160];
	int before = entries(sysfs);
	FILE *f;

	snprintf(devpath, sizeof(devpath), "%s/not-hwrng", dir);
	f = fopen(devpath, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	params.gate_hwrng = true;
	add(&dev_a);
	ck_assert_int_eq(source_config_set(&cfg.sources[0], "device", devpath,
					   err, sizeof(err)),
			 0);
	ASSERT_SET_STARTED(1);
	ck_assert_str_eq(get("rng_quality", buf, sizeof(buf)), "1024\n");
	ck_assert_str_eq(sourceset_kernel_credit(set),
			 "the kernel credits virtio_rng.0 itself at 1024/1024");
	sourceset_stop(set);
	sourceset_free(set);
	set = NULL;
	ck_assert_str_eq(get("rng_quality", buf, sizeof(buf)), "1024\n");
	ck_assert_str_eq(get("rng_current", buf, sizeof(buf)),
			 "virtio_rng.0\n");
	ck_assert_str_eq(get("rng_selected", buf, sizeof(buf)), "0\n");
	ck_assert_int_eq(entries(sysfs), before);
	ck_assert_int_eq(access(state_path, F_OK), -1);
}
END_TEST

/*
 * A slot whose device is the kernel's hw_random (the real /dev/hwrng is
 * only stat()ed: the double reads getrandom) takes the gate on the
 * fixture and hands it back at stop.  Never the real sysfs.
 */
START_TEST(test_gate_taken_and_released_on_fixture)
{
	char err[256], buf[64];
	struct stat st;

	if (stat("/dev/hwrng", &st) < 0 || !S_ISCHR(st.st_mode) ||
	    major(st.st_rdev) != 10 || minor(st.st_rdev) != 183) {
		fprintf(stderr, "SKIP gate fixture test: no /dev/hwrng 10:183\n");
		return;
	}
	params.gate_hwrng = true;
	add(&dev_a);
	ck_assert_int_eq(source_config_set(&cfg.sources[0], "device",
					   "/dev/hwrng", err, sizeof(err)),
			 0);
	make_set();
	ck_assert_uint_eq(sourceset_open(set), 1);
	ck_assert_str_eq(get("rng_quality", buf, sizeof(buf)), "0\n");
	ck_assert_int_eq(access(state_path, F_OK), 0);
	ck_assert_uint_eq(sourceset_start(set, evfd), 1);
	sourceset_stop(set);
	ck_assert_str_eq(get("rng_quality", buf, sizeof(buf)), "1024\n");
	ck_assert_int_eq(access(state_path, F_OK), -1);
}
END_TEST

/* gate_hwrng off (-t, --stdout): the kernel keeps its own credit even for
 * the hw_random device. */
START_TEST(test_gate_off_leaves_hwrng)
{
	char err[256], buf[64];
	struct stat st;

	if (stat("/dev/hwrng", &st) < 0 || !S_ISCHR(st.st_mode)) {
		fprintf(stderr, "SKIP gate-off test: no /dev/hwrng\n");
		return;
	}
	add(&dev_a);
	ck_assert_int_eq(source_config_set(&cfg.sources[0], "device",
					   "/dev/hwrng", err, sizeof(err)),
			 0);
	ASSERT_SET_STARTED(1);
	ck_assert_str_eq(get("rng_quality", buf, sizeof(buf)), "1024\n");
	ck_assert_int_eq(access(state_path, F_OK), -1);
	sourceset_stop(set);
	ck_assert_str_eq(get("rng_quality", buf, sizeof(buf)), "1024\n");
}
END_TEST

int main(void)
{
	if (reader_setup_signals() < 0)
		return EXIT_FAILURE;

	return td_run_suite(
		td_suite("sourceset", "sourceset", setup, teardown, 180,
			 TD_TESTS(test_open_start_round_robin,
				  test_request_credited_only,
				  test_credit_coming, test_stats_stop_reload,
				  test_memory_over_reload,
				  test_discard_waiting, test_unusable_skipped,
				  test_wait_for_source,
				  test_disabled_not_opened,
				  test_shared_device_later_wins,
				  test_hw_random_twin_later_wins,
				  test_hw_random_twin_of_other_device,
				  test_gate_not_taken_for_other_device,
				  test_gate_taken_and_released_on_fixture,
				  test_gate_off_leaves_hwrng)),
		base, sizeof(base), "sourceset");
}
