// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hand-over of the kernel's own hw_random credit (issue 14 item 4),
 * against a fixture directory that stands in for /sys/class/misc/hw_random.
 * A fixture file does not re-elect devices as the kernel does; the tests
 * that need the kernel are in tests/test_hwrng_gate.sh.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_lock.h"
#include "test_doubles.h"

static char dir[64], state[128], lock[128];

/* A fake sysfs attribute of this test's directory. */
static void put(const char *file, const char *text)
{
	td_put(dir, file, text);
}

/* The whole of a fake sysfs attribute ("" when missing) in @buf. */
static const char *get(const char *file, char *buf, size_t len)
{
	return td_get(dir, file, buf, len);
}

/* What the last call said (every gate call of a test writes it). */
static char why[HWRNG_GATE_MSG_LEN];

/* The gate over the fixture, with this test's record and lock. */
static int take(struct hwrng_gate *g)
{
	return hwrng_gate_take(g, dir, state, lock, why, sizeof(why));
}

static void release(struct hwrng_gate *g, bool failed)
{
	hwrng_gate_release(g, failed, why, sizeof(why));
}

/* ExecStopPost='s hand-back, over the fixture. */
static int restore(void)
{
	return hwrng_gate_restore(dir, state, lock, why, sizeof(why));
}

/* Macros, so that a failure names the test's line. */
#define ASSERT_QUALITY(want)                                                 \
	do {                                                                 \
		char q_[64];                                                 \
		ck_assert_str_eq(get("rng_quality", q_, sizeof(q_)), (want)); \
	} while (0)
#define ASSERT_WHY_HAS(text)                                                 \
	ck_assert_msg(strstr(why, (text)), "'%s' does not say '%s'", why, (text))

static void setup(void)
{
	td_tmpdir(dir, sizeof(dir), "gate");
	snprintf(state, sizeof(state), "%s/run/hwrng-quality", dir);
	/* The machine-wide lock's stand-in: apart from the service's. */
	snprintf(lock, sizeof(lock), "%s/lock/hwrng.lock", dir);
	put("rng_current", "virtio_rng.0\n");
	put("rng_available", "virtio_rng.0 none \n");
	put("rng_quality", "1024\n");
	put("rng_selected", "0\n");
}

static void teardown(void)
{
	td_tree_remove(dir);
}

/* A crash: the process is gone, nothing was put back. */
static void crash(struct hwrng_gate *g)
{
	close(g->fd);
	if (g->state_fd >= 0)
		close(g->state_fd);
	/* The kernel drops a dead process's locks with its fds. */
	if (g->lock.fd >= 0)
		close(g->lock.fd);
}

START_TEST(take_sets_zero_and_records)
{
	struct hwrng_gate g;
	char buf[256];

	ck_assert_int_eq(take(&g), 1);
	ck_assert(hwrng_gate_held(&g));
	ck_assert_str_eq(g.device, "virtio_rng.0");
	ck_assert_uint_eq(g.original, 1024);
	ASSERT_QUALITY("0\n");
	ck_assert_str_eq(td_slurp(state, buf, sizeof(buf)),
			 "device=virtio_rng.0\nquality=1024\nselected=0\n"
			 "state=held\n");
	ASSERT_WHY_HAS("handed over");
	crash(&g);
}
END_TEST

START_TEST(release_puts_back_and_removes_record)
{
	struct hwrng_gate g;

	put("rng_quality", "1000\n");
	ck_assert_int_eq(take(&g), 1);
	release(&g, false);
	ck_assert(!hwrng_gate_held(&g));
	ASSERT_QUALITY("1000\n");
	ck_assert_int_eq(access(state, F_OK), -1);
	ASSERT_WHY_HAS("handed back");
	/* Twice is harmless: nothing held any more. */
	release(&g, false);
	ck_assert_str_eq(why, "");
	ASSERT_QUALITY("1000\n");
}
END_TEST

START_TEST(release_failed_keeps_zero_and_marks_record)
{
	struct hwrng_gate g;
	char buf[256];

	ck_assert_int_eq(take(&g), 1);
	release(&g, true);
	ck_assert(!hwrng_gate_held(&g));
	ASSERT_QUALITY("0\n");
	ck_assert_ptr_nonnull(strstr(td_slurp(state, buf, sizeof(buf)),
				     "state=failed\n"));
	ASSERT_WHY_HAS("failed its health tests");
	ASSERT_WHY_HAS("echo 1024 >");
	/* ExecStopPost= does not hand it back either. */
	ck_assert_int_eq(restore(), 0);
	ASSERT_QUALITY("0\n");
	ck_assert_int_eq(access(state, F_OK), 0);
	ASSERT_WHY_HAS("failed its health tests");
}
END_TEST

/* A hand-back that cannot be done (the attribute fails, or does not
 * answer within its bound: sysfs_io.h) keeps the record, as a crash does,
 * for ExecStopPost='s --restore-hwrng-quality. */
START_TEST(release_that_cannot_hand_back_keeps_record)
{
	struct hwrng_gate g;
	struct rlimit lim;
	char buf[256];

	put("rng_quality", "1000\n");
	ck_assert_int_eq(take(&g), 1);
	/* No write to the fixture can be done now (EFBIG). */
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &lim), 0);
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE,
				   &(struct rlimit){ 0, lim.rlim_max }), 0);
	release(&g, false);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ck_assert(!hwrng_gate_held(&g));
	ASSERT_WHY_HAS("putting back rng_quality 1000 of virtio_rng.0");
	ASSERT_WHY_HAS("its record stays");
	ck_assert_ptr_nonnull(strstr(td_slurp(state, buf, sizeof(buf)),
				     "quality=1000\n"));
	/* An attribute keeps its value when a write fails; the fixture's
	 * truncate emptied it. */
	put("rng_quality", "0\n");
	ck_assert_int_eq(restore(), 0);
	ASSERT_QUALITY("1000\n");
	ck_assert_int_eq(access(state, F_OK), -1);
}
END_TEST

START_TEST(restore_after_crash)
{
	struct hwrng_gate g;

	put("rng_quality", "512\n");
	ck_assert_int_eq(take(&g), 1);
	crash(&g);
	ASSERT_QUALITY("0\n");
	ck_assert_int_eq(restore(), 0);
	ASSERT_QUALITY("512\n");
	ck_assert_int_eq(access(state, F_OK), -1);
	ASSERT_WHY_HAS("put back to 512");
	/* A second run (ExecStopPost= after a clean stop) has nothing to
	 * do, and says where it looked. */
	ck_assert_int_eq(restore(), 0);
	ASSERT_WHY_HAS("no hand-over record in ");
	ASSERT_WHY_HAS(state);
	ASSERT_QUALITY("512\n");
}
END_TEST

START_TEST(restore_without_record_does_nothing)
{
	put("rng_quality", "0\n");
	ck_assert_int_eq(restore(), 0);
	ASSERT_WHY_HAS("nothing to put back");
	ASSERT_QUALITY("0\n");
}
END_TEST

START_TEST(restore_other_device_leaves_it)
{
	struct hwrng_gate g;

	ck_assert_int_eq(take(&g), 1);
	crash(&g);
	/* Another device is current now; its quality is not ours. */
	put("rng_current", "tpm-rng-0\n");
	put("rng_quality", "0\n");
	ck_assert_int_eq(restore(), 0);
	ASSERT_QUALITY("0\n");
	ASSERT_WHY_HAS("tpm-rng-0, not virtio_rng.0");
	ck_assert_int_eq(access(state, F_OK), -1);
}
END_TEST

START_TEST(release_device_changed_leaves_it)
{
	struct hwrng_gate g;

	ck_assert_int_eq(take(&g), 1);
	put("rng_current", "tpm-rng-0\n");
	put("rng_quality", "64\n");
	release(&g, false);
	ASSERT_QUALITY("64\n");
	ASSERT_WHY_HAS("now tpm-rng-0");
	ck_assert_int_eq(access(state, F_OK), -1);
}
END_TEST

START_TEST(release_quality_changed_leaves_it)
{
	struct hwrng_gate g;

	ck_assert_int_eq(take(&g), 1);
	put("rng_quality", "700\n");
	release(&g, false);
	ASSERT_QUALITY("700\n");
	ASSERT_WHY_HAS("changed by someone else");
}
END_TEST

START_TEST(no_rng_quality_file)
{
	struct hwrng_gate g;
	char path[160];

	snprintf(path, sizeof(path), "%s/rng_quality", dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(take(&g), 0);
	ck_assert(!hwrng_gate_held(&g));
	ASSERT_WHY_HAS("before 5.18");
	ck_assert_int_eq(access(state, F_OK), -1);
	hwrng_gate_describe_kernel(dir, why, sizeof(why));
	ck_assert_str_eq(why, "the kernel may credit virtio_rng.0 itself (no "
			      "rng_quality: kernel before 5.18)");
}
END_TEST

START_TEST(already_zero_takes_nothing)
{
	struct hwrng_gate g;

	put("rng_quality", "0\n");
	ck_assert_int_eq(take(&g), HWRNG_GATE_FOUND_ZERO);
	ck_assert(!hwrng_gate_held(&g));
	ASSERT_WHY_HAS("already 0");
	/* The warning names both possible causes. */
	ASSERT_WHY_HAS("another feeder");
	ASSERT_WHY_HAS("administrator");
	ck_assert_int_eq(access(lock, F_OK), -1);
	ck_assert_int_eq(access(state, F_OK), -1);
	release(&g, false);
	ASSERT_QUALITY("0\n");
}
END_TEST

START_TEST(no_device_takes_nothing)
{
	struct hwrng_gate g;

	put("rng_current", "none\n");
	ck_assert_int_eq(take(&g), 0);
	ck_assert_str_eq(why, "no hw_random device");
	hwrng_gate_describe_kernel(dir, why, sizeof(why));
	ck_assert_str_eq(why, "no hw_random device");
	ck_assert_int_eq(hwrng_gate_take(&g, "/nonexistent", state, lock, why,
					 sizeof(why)), 0);
}
END_TEST

/* A run that died without ExecStopPost= left 0 and its record: the next
 * run adopts it and puts back the first run's value. */
START_TEST(adopts_record_of_earlier_run)
{
	struct hwrng_gate g;

	ck_assert_int_eq(take(&g), 1);
	crash(&g);
	ck_assert_int_eq(take(&g), 1);
	ck_assert_uint_eq(g.original, 1024);
	ASSERT_WHY_HAS("earlier run");
	release(&g, false);
	ASSERT_QUALITY("1024\n");
	ck_assert_int_eq(access(state, F_OK), -1);
}
END_TEST

/* The failed policy: a later run that tests the device cleanly hands it
 * back (and says so); one that fails again keeps it at 0. */
START_TEST(failed_record_handed_back_only_after_clean_run)
{
	struct hwrng_gate g;
	char buf[256];

	ck_assert_int_eq(take(&g), 1);
	release(&g, true);
	ck_assert_int_eq(take(&g), 1);
	ASSERT_WHY_HAS("failed its tests");
	ck_assert_ptr_nonnull(strstr(td_slurp(state, buf, sizeof(buf)),
				     "state=held\n"));
	release(&g, true);
	ASSERT_QUALITY("0\n");
	ck_assert_int_eq(take(&g), 1);
	release(&g, false);
	ASSERT_QUALITY("1024\n");
}
END_TEST

/* Someone else's 0 with a record for another device is not ours. */
START_TEST(record_of_other_device_not_adopted)
{
	char run[160];
	struct hwrng_gate g;
	FILE *f;

	snprintf(run, sizeof(run), "%s/run", dir);
	ck_assert_int_eq(mkdir(run, 0700), 0);
	f = fopen(state, "w");
	ck_assert_ptr_nonnull(f);
	fputs("device=tpm-rng-0\nquality=64\nselected=0\nstate=held\n", f);
	fclose(f);
	put("rng_quality", "0\n");
	ck_assert_int_eq(take(&g), HWRNG_GATE_FOUND_ZERO);
	ASSERT_WHY_HAS("already 0");
}
END_TEST

START_TEST(unwritable_record_is_a_warning)
{
	struct hwrng_gate g;
	char deep[200];

	snprintf(deep, sizeof(deep), "%s/no/such/dir/state", dir);
	ck_assert_int_eq(hwrng_gate_take(&g, dir, deep, lock, why, sizeof(why)), 1);
	ASSERT_WHY_HAS("warning: could not record");
	ck_assert_str_eq(g.state_path, "");
	ASSERT_QUALITY("0\n");
	release(&g, false);
	ASSERT_QUALITY("1024\n");
	/* No record at all is fine too. */
	ck_assert_int_eq(hwrng_gate_take(&g, dir, NULL, lock, why, sizeof(why)), 1);
	ck_assert_str_eq(g.state_path, "");
	release(&g, false);
	ASSERT_QUALITY("1024\n");
}
END_TEST

START_TEST(explicit_choice_is_recorded)
{
	struct hwrng_gate g;
	char buf[256];

	put("rng_selected", "1\n");
	ck_assert_int_eq(take(&g), 1);
	ck_assert(g.selected);
	ck_assert_ptr_nonnull(strstr(td_slurp(state, buf, sizeof(buf)),
				     "selected=1\n"));
	release(&g, false);
	/* Chosen again after the write that makes the kernel forget it:
	 * rewritten, so without the fixture's newline. */
	ck_assert_str_eq(get("rng_current", buf, sizeof(buf)), "virtio_rng.0");
	ASSERT_QUALITY("1024\n");
}
END_TEST

START_TEST(malformed_record_is_refused)
{
	static const char *const bad[] = {
		"device=virtio_rng.0\nquality=0\nselected=0\nstate=held\n",
		"device=virtio_rng.0\nquality=2000\nselected=0\nstate=held\n",
		"device=virtio_rng.0\nquality=1024\nselected=0\n",
		"device=virtio_rng.0\nquality=1024\nselected=0\nstate=odd\n",
		"device=\nquality=1024\nselected=0\nstate=held\n",
		"hello\n",
	};
	char run[160];

	snprintf(run, sizeof(run), "%s/run", dir);
	ck_assert_int_eq(mkdir(run, 0700), 0);
	put("rng_quality", "0\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(state, "w");

		ck_assert_ptr_nonnull(f);
		fputs(bad[i], f);
		fclose(f);
		ck_assert_int_eq(restore(), -EBADMSG);
		ASSERT_QUALITY("0\n");
	}
}
END_TEST

START_TEST(empty_record_is_no_record)
{
	char run[160];
	FILE *f;

	snprintf(run, sizeof(run), "%s/run", dir);
	ck_assert_int_eq(mkdir(run, 0700), 0);
	f = fopen(state, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	put("rng_quality", "0\n");
	ck_assert_int_eq(restore(), 0);
	ASSERT_QUALITY("0\n");
	ck_assert_int_eq(access(state, F_OK), -1);
}
END_TEST

START_TEST(describe_says_what_the_kernel_credits)
{
	char buf[HWRNG_GATE_MSG_LEN];

	hwrng_gate_describe_kernel(dir, buf, sizeof(buf));
	ck_assert_str_eq(buf, "the kernel credits virtio_rng.0 itself at "
			      "1024/1024");
	put("rng_quality", "0\n");
	hwrng_gate_describe_kernel(dir, buf, sizeof(buf));
	ck_assert_str_eq(buf, "the kernel credits nothing itself from "
			      "virtio_rng.0 (rng_quality 0)");
}
END_TEST

/* ---- one owner per machine (issue 25 item 4) -------------------------- */

/* Two instances (two gates: OFD locks conflict between two opens of one
 * process as between two processes), with different runtime records. */
START_TEST(second_instance_waits_and_takes_nothing)
{
	struct hwrng_gate a, b;
	char buf[256], state_b[160];

	snprintf(state_b, sizeof(state_b), "%s/run-b/hwrng-quality", dir);
	ck_assert_int_eq(take(&a), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(hwrng_gate_take(&b, dir, state_b, lock, why,
					 sizeof(why)),
			 HWRNG_GATE_WAITING);
	ck_assert(!hwrng_gate_held(&b));
	ck_assert(hwrng_gate_waiting(&b));
	ASSERT_WHY_HAS("another rngfeed owns");
	ck_assert_int_eq(access(state_b, F_OK), -1);
	/* --list's look sees the owner, and a waiter is no owner. */
	ck_assert_int_eq(hwrng_lock_owned_at(lock), 1);
	/* B stops first: A's 0 stays, A's records stay. */
	release(&b, false);
	ck_assert_int_eq(hwrng_lock_owned_at(lock), 1);
	ASSERT_QUALITY("0\n");
	ck_assert_ptr_nonnull(strstr(td_slurp(state, buf, sizeof(buf)),
				     "quality=1024"));
	ck_assert_ptr_nonnull(strstr(td_slurp(lock, buf, sizeof(buf)),
				     "quality=1024"));
	release(&a, false);
	ASSERT_QUALITY("1024\n");
	ck_assert_int_eq(access(lock, F_OK), -1);
	ck_assert_int_eq(access(state, F_OK), -1);
	ck_assert_int_eq(hwrng_lock_owned_at(lock), 0);
}
END_TEST

/* A stops while B waits: no hand-back in between; B takes over at its
 * tick with A's original and hands that back at its own stop. */
static void take_over(bool same_runtime_dir, bool owner_crashes)
{
	struct hwrng_gate a, b;
	char buf[256], state_b[160];

	snprintf(state_b, sizeof(state_b), "%s/run-b/hwrng-quality", dir);
	put("rng_quality", "1000\n");
	ck_assert_int_eq(take(&a), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(hwrng_gate_take(&b, dir,
					 same_runtime_dir ? state : state_b,
					 lock, why, sizeof(why)),
			 HWRNG_GATE_WAITING);
	/* Nothing changes while A runs. */
	ck_assert_int_eq(hwrng_gate_tick(&b, why, sizeof(why)),
			 HWRNG_GATE_NONE);
	if (owner_crashes) {
		crash(&a);
		/* The unit's ExecStopPost= for A: B waits, so it is B's. */
		ck_assert_int_eq(restore(), 0);
		ASSERT_WHY_HAS("waits to take over");
	} else {
		release(&a, false);
		ASSERT_WHY_HAS("handed over to another");
	}
	ASSERT_QUALITY("0\n");
	ck_assert_int_eq(hwrng_gate_tick(&b, why, sizeof(why)),
			 HWRNG_GATE_TAKEN);
	ck_assert(hwrng_gate_held(&b));
	ck_assert_uint_eq(b.original, 1000);
	ASSERT_QUALITY("0\n");
	ck_assert_ptr_nonnull(strstr(td_slurp(same_runtime_dir ? state : state_b,
					   buf, sizeof(buf)),
				     "quality=1000"));
	release(&b, false);
	ASSERT_QUALITY("1000\n");
	ck_assert_int_eq(access(lock, F_OK), -1);
}

START_TEST(owner_stops_waiter_takes_over)
{
	take_over(false, false);
}
END_TEST

START_TEST(owner_stops_waiter_takes_over_same_dir)
{
	take_over(true, false);
}
END_TEST

START_TEST(owner_crashes_waiter_takes_over)
{
	take_over(false, true);
}
END_TEST

/* A record is a crash record only when its owner's lock is free: with the
 * same runtime directory, B must not adopt A's live record, and B's stop
 * (or its ExecStopPost=) must not put 1024 back under A. */
START_TEST(live_record_is_not_adopted)
{
	struct hwrng_gate a, b;
	char buf[256];

	ck_assert_int_eq(take(&a), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(take(&b), HWRNG_GATE_WAITING);
	ck_assert_int_eq(restore(), 0);
	ASSERT_WHY_HAS("another rngfeed owns");
	release(&b, false);
	ASSERT_QUALITY("0\n");
	ck_assert_ptr_nonnull(strstr(td_slurp(state, buf, sizeof(buf)),
				     "quality=1024"));
	release(&a, false);
	ASSERT_QUALITY("1024\n");
}
END_TEST

/* The owner died with no waiter and no ExecStopPost=: a start with
 * another runtime directory finds the record in the lock file. */
START_TEST(crash_record_found_from_other_runtime_dir)
{
	struct hwrng_gate a, b;
	char state_b[160];

	snprintf(state_b, sizeof(state_b), "%s/run-b/hwrng-quality", dir);
	put("rng_quality", "700\n");
	ck_assert_int_eq(take(&a), HWRNG_GATE_TAKEN);
	crash(&a);
	ck_assert_int_eq(hwrng_gate_take(&b, dir, state_b, lock, why,
					 sizeof(why)),
			 HWRNG_GATE_TAKEN);
	ck_assert_uint_eq(b.original, 700);
	ASSERT_WHY_HAS("earlier run");
	release(&b, false);
	ASSERT_QUALITY("700\n");
}
END_TEST

/* A waiter whose owner left it the 0 stops before its tick: it puts the
 * owner's value back rather than leave 0 with nobody reading. */
START_TEST(waiter_stopping_after_owner_puts_back)
{
	struct hwrng_gate a, b;

	ck_assert_int_eq(take(&a), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(take(&b), HWRNG_GATE_WAITING);
	release(&a, false);
	ASSERT_QUALITY("0\n");
	release(&b, false);
	ASSERT_QUALITY("1024\n");
	ASSERT_WHY_HAS("handed back");
	ck_assert_int_eq(access(lock, F_OK), -1);
}
END_TEST

/* ---- following the machine after start-up (issue 26) ----------------- */

/* A second device registers and becomes current (not a TPM: that one is
 * the next test's): the gate takes it (its own identity and quality), and
 * parks the first at 0 (not current: the
 * kernel reads only the current device) to put back at release. */
START_TEST(follows_a_switch_to_a_new_device)
{
	struct hwrng_gate g;
	char buf[256];

	ck_assert_int_eq(take(&g), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_NONE);
	put("rng_available", "virtio_rng.0 amd-rng none \n");
	put("rng_current", "amd-rng\n");
	put("rng_quality", "64\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ASSERT_WHY_HAS("virtio_rng.0 is no longer current");
	ASSERT_WHY_HAS("now amd-rng");
	ck_assert_str_eq(g.device, "amd-rng");
	ck_assert_uint_eq(g.original, 64);
	ASSERT_QUALITY("0\n");
	ck_assert_uint_eq(g.n_parked, 1);
	ck_assert_str_eq(g.parked[0].device, "virtio_rng.0");
	ck_assert_uint_eq(g.parked[0].original, 1024);
	ck_assert_ptr_nonnull(strstr(td_slurp(lock, buf, sizeof(buf)),
				     "device=amd-rng\nquality=64\n"));
	/* Logged once: the next tick has nothing to say. */
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_NONE);
	ck_assert_str_eq(why, "");
	/* The first one becomes current again (at the 0 it kept): adopted
	 * from the parked list, not found "already 0". */
	put("rng_current", "virtio_rng.0\n");
	put("rng_quality", "0\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ck_assert_str_eq(g.device, "virtio_rng.0");
	ck_assert_uint_eq(g.original, 1024);
	ck_assert_uint_eq(g.n_parked, 1);
	ck_assert_str_eq(g.parked[0].device, "amd-rng");
	release(&g, false);
	/* (The fixture has one rng_quality file for both devices: only
	 * the current one's value can be checked here.) */
	ck_assert_str_eq(get("rng_current", buf, sizeof(buf)), "amd-rng");
	ck_assert_int_eq(access(lock, F_OK), -1);
}
END_TEST

/* The device read leaves (hot-unplug): forgotten, nothing written; a
 * device that arrives later is taken at the next tick. */
START_TEST(follows_a_device_that_leaves_and_one_that_arrives)
{
	struct hwrng_gate g;
	char buf[256];

	ck_assert_int_eq(take(&g), HWRNG_GATE_TAKEN);
	put("rng_available", "none \n");
	put("rng_current", "none\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ASSERT_WHY_HAS("virtio_rng.0 left");
	ASSERT_WHY_HAS("no device is current");
	ck_assert_str_eq(g.device, "");
	ck_assert_uint_eq(g.n_parked, 0);
	ck_assert_str_eq(td_slurp(state, buf, sizeof(buf)), ""); /* no record */
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_NONE);
	put("rng_available", "virtio_rng.1 none \n");
	put("rng_current", "virtio_rng.1\n");
	put("rng_quality", "1000\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ASSERT_WHY_HAS("now virtio_rng.1");
	ck_assert_str_eq(g.device, "virtio_rng.1");
	ck_assert_uint_eq(g.original, 1000);
	ASSERT_QUALITY("0\n");
	ck_assert_ptr_nonnull(strstr(td_slurp(state, buf, sizeof(buf)),
				     "device=virtio_rng.1\nquality=1000\n"));
	release(&g, false);
	ASSERT_QUALITY("1000\n");
}
END_TEST

/* Kernels 6.2 to 6.10 reset rng_quality when a device is chosen again;
 * any kernel when the device registers again: 0 again at the tick, and
 * the new value is what goes back. */
START_TEST(takes_again_a_quality_the_kernel_reset)
{
	struct hwrng_gate g;

	ck_assert_int_eq(take(&g), HWRNG_GATE_TAKEN);
	put("rng_quality", "1000\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_RETAKEN);
	ASSERT_WHY_HAS("set to 0 again");
	ASSERT_QUALITY("0\n");
	ck_assert_uint_eq(g.original, 1000);
	release(&g, false);
	ASSERT_QUALITY("1000\n");
}
END_TEST

/* Before 5.18: rng_core's current_quality is the kernel's credit for the
 * current device: taken, taken again when the kernel sets it again on a
 * device change, put back at release and after a crash. */
START_TEST(pre_5_18_current_quality_parameter)
{
	struct hwrng_gate g;
	char buf[256], path[160];

	snprintf(path, sizeof(path), "%s/rng_quality", dir);
	ck_assert_int_eq(unlink(path), 0);
	put("rng_core.current_quality", "1000\n");
	hwrng_gate_describe_kernel(dir, why, sizeof(why));
	ck_assert_str_eq(why, "the kernel credits virtio_rng.0 itself at "
			      "1000/1024 (rng_core current_quality, kernel "
			      "before 5.18)");
	ck_assert_int_eq(take(&g), HWRNG_GATE_TAKEN);
	ck_assert(g.param);
	ASSERT_WHY_HAS("current_quality 1000");
	ck_assert_str_eq(get("rng_core.current_quality", buf, sizeof(buf)),
			 "0\n");
	/* A device change: the kernel sets the parameter from the new
	 * device; the old one has nothing of its own to put back. */
	put("rng_available", "virtio_rng.0 virtio_rng.1 none \n");
	put("rng_current", "virtio_rng.1\n");
	put("rng_core.current_quality", "1000\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ck_assert_uint_eq(g.n_parked, 0);
	ck_assert_str_eq(get("rng_core.current_quality", buf, sizeof(buf)),
			 "0\n");
	/* The same device initialised again. */
	put("rng_core.current_quality", "700\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_RETAKEN);
	ck_assert_str_eq(get("rng_core.current_quality", buf, sizeof(buf)),
			 "0\n");
	crash(&g);
	ck_assert_int_eq(restore(), 0);
	ck_assert_str_eq(get("rng_core.current_quality", buf, sizeof(buf)),
			 "700\n");
}
END_TEST

/* Strict mode (rng_core.default_quality=0): a 0 with no record is the
 * administrator's choice, said as such, not a warning. */
START_TEST(strict_mode_zero_is_not_a_warning)
{
	struct hwrng_gate g;

	put("rng_quality", "0\n");
	put("rng_core.default_quality", "0\n");
	ck_assert_int_eq(take(&g), HWRNG_GATE_NONE);
	ASSERT_WHY_HAS("strict mode");
	ASSERT_QUALITY("0\n");
	ck_assert_int_eq(access(lock, F_OK), -1);
	/* Not strict: the same 0 is a warning. */
	put("rng_core.default_quality", "1024\n");
	ck_assert_int_eq(take(&g), HWRNG_GATE_FOUND_ZERO);
}
END_TEST

/* A new device found at 0 with no record is said once, not every tick,
 * and taken when it changes. */
START_TEST(declined_device_is_said_once)
{
	struct hwrng_gate g;

	ck_assert_int_eq(take(&g), HWRNG_GATE_TAKEN);
	put("rng_available", "virtio_rng.0 amd-rng none \n");
	put("rng_current", "amd-rng\n");
	put("rng_quality", "0\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ASSERT_WHY_HAS("already 0");
	ck_assert_str_eq(g.device, "");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_NONE);
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_NONE);
	put("rng_available", "virtio_rng.0 virtio_rng.1 none \n");
	put("rng_current", "virtio_rng.1\n");
	put("rng_quality", "1000\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ck_assert_str_eq(g.device, "virtio_rng.1");
	ASSERT_QUALITY("0\n");
	release(&g, false);
	ASSERT_QUALITY("1000\n");
}
END_TEST

/* A TPM that registers later and wins the kernel's election (6.12 gives
 * it 1024): the virtio-rng read before is made current again, unless the
 * administrator had chosen a device. */
START_TEST(late_tpm_does_not_displace_the_device_read)
{
	struct hwrng_gate g;
	char buf[256];

	ck_assert_int_eq(take(&g), HWRNG_GATE_TAKEN);
	put("rng_available", "virtio_rng.0 tpm-rng-0 none \n");
	put("rng_current", "tpm-rng-0\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ASSERT_WHY_HAS("virtio_rng.0 made current again");
	ck_assert_str_eq(get("rng_current", buf, sizeof(buf)), "virtio_rng.0");
	ck_assert_str_eq(g.device, "virtio_rng.0");
	ck_assert_uint_eq(g.n_parked, 0);
	release(&g, false);
	ASSERT_QUALITY("1024\n");

	/* Chosen by the administrator: followed, not overruled. */
	put("rng_available", "virtio_rng.0 none \n");
	put("rng_selected", "1\n");
	ck_assert_int_eq(take(&g), HWRNG_GATE_TAKEN);
	put("rng_available", "virtio_rng.0 tpm-rng-0 none \n");
	put("rng_current", "tpm-rng-0\n");
	put("rng_quality", "64\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ck_assert_str_eq(g.device, "tpm-rng-0");
	ck_assert_str_eq(get("rng_current", buf, sizeof(buf)), "tpm-rng-0\n");
	crash(&g);
}
END_TEST

static Suite *gate_suite(void)
{
	Suite *s = suite_create("hwrng_gate");
	TCase *tc = tcase_create("gate");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, take_sets_zero_and_records);
	tcase_add_test(tc, release_puts_back_and_removes_record);
	tcase_add_test(tc, release_failed_keeps_zero_and_marks_record);
	tcase_add_test(tc, release_that_cannot_hand_back_keeps_record);
	tcase_add_test(tc, restore_after_crash);
	tcase_add_test(tc, restore_without_record_does_nothing);
	tcase_add_test(tc, restore_other_device_leaves_it);
	tcase_add_test(tc, release_device_changed_leaves_it);
	tcase_add_test(tc, release_quality_changed_leaves_it);
	tcase_add_test(tc, no_rng_quality_file);
	tcase_add_test(tc, already_zero_takes_nothing);
	tcase_add_test(tc, no_device_takes_nothing);
	tcase_add_test(tc, adopts_record_of_earlier_run);
	tcase_add_test(tc, failed_record_handed_back_only_after_clean_run);
	tcase_add_test(tc, record_of_other_device_not_adopted);
	tcase_add_test(tc, unwritable_record_is_a_warning);
	tcase_add_test(tc, explicit_choice_is_recorded);
	tcase_add_test(tc, malformed_record_is_refused);
	tcase_add_test(tc, empty_record_is_no_record);
	tcase_add_test(tc, describe_says_what_the_kernel_credits);
	tcase_add_test(tc, second_instance_waits_and_takes_nothing);
	tcase_add_test(tc, owner_stops_waiter_takes_over);
	tcase_add_test(tc, owner_stops_waiter_takes_over_same_dir);
	tcase_add_test(tc, owner_crashes_waiter_takes_over);
	tcase_add_test(tc, live_record_is_not_adopted);
	tcase_add_test(tc, crash_record_found_from_other_runtime_dir);
	tcase_add_test(tc, waiter_stopping_after_owner_puts_back);
	tcase_add_test(tc, follows_a_switch_to_a_new_device);
	tcase_add_test(tc, follows_a_device_that_leaves_and_one_that_arrives);
	tcase_add_test(tc, takes_again_a_quality_the_kernel_reset);
	tcase_add_test(tc, pre_5_18_current_quality_parameter);
	tcase_add_test(tc, strict_mode_zero_is_not_a_warning);
	tcase_add_test(tc, declined_device_is_said_once);
	tcase_add_test(tc, late_tpm_does_not_displace_the_device_read);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(gate_suite()); }
