// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rngfeed: options → configuration → the mode asked for.
 */
#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/assess.h"
#include "rngfeed/checkmode.h"
#include "rngfeed/config.h"
#include "rngfeed/daemon.h"
#include "rngfeed/early.h"
#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_record.h"
#include "rngfeed/log.h"
#include "rngfeed/metrics.h"
#include "rngfeed/source.h"
#include "rngfeed/sourceset.h"
#include "rngfeed/util.h"

static int verbosity_to_priority(int verbosity)
{
	static const int prio[] = { LOG_ERR, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

	return prio[verbosity > 3 ? 3 : verbosity];
}

/*
 * A running (or the last) rngfeed's view of a source, from the metrics file this
 * configuration names (it runs no source itself): the on-line estimate
 * and the credit in use, and how old the file is.
 */
static void list_running(const char *path, const char *source)
{
	double h, credit, in_force, age, full, samples;
	struct stat st;

	if (stat(path, &st) != 0 ||
	    metrics_read_source(path, "rngfeed_source_min_entropy_estimate", source, &h) != 0 ||
	    metrics_read_source(path, "rngfeed_source_effective_credit", source, &credit) != 0)
		return;
	printf("; its metrics (%s, written %lld s ago): ", path,
	       (long long)(time(NULL) - st.st_mtime));
	if (h < 0)
		printf("no estimate yet, credit %.0f/1024", credit);
	else
		printf("estimate %.2f bits/sample, credit %.0f/1024", h, credit);
	/* Issue 25: which estimate holds the credit, and how old it is. */
	if (metrics_read_source(path, "rngfeed_source_estimate_in_force", source, &in_force) == 0 &&
	    in_force >= 0 && in_force <= IN_FORCE_FULL) {
		printf(", in force: %s", estimate_in_force_name((enum estimate_in_force)in_force));
		if (metrics_read_source(path, "rngfeed_source_estimate_age_seconds", source,
					&age) == 0)
			printf(" (%.0f s old)", age);
	}
	if (metrics_read_source(path, "rngfeed_source_full_assessment", source, &full) == 0 &&
	    full >= 0 &&
	    metrics_read_source(path, "rngfeed_source_full_assessment_samples", source,
				&samples) == 0)
		printf(", full assessment %.2f bits/sample over %.0f samples", full, samples);
}

/*
 * --list in a container sees the host's /sys but its own /dev: the device
 * the kernel credits is then one nothing here can open.  @kernel is the
 * line hwrng_gate_describe_kernel() wrote: nothing to add without a device.
 */
static bool hwrng_node_missing(const char *kernel)
{
	struct stat st;

	if (strncmp(kernel, "no hw_random device", 19) == 0)
		return false;
	return stat("/dev/hwrng", &st) < 0 || !S_ISCHR(st.st_mode) ||
	       major(st.st_rdev) != 10 || minor(st.st_rdev) != 183;
}


/*
 * --list: one line per driver, with the options and config file of a run:
 * whether it can be used here (STATE: probed, and openable by this user),
 * the credit and health-test H a reader would get, and whether this run
 * would use it (RUN), and why not.  The decisions are the source set's
 * own (sourceset_plan()), so the list and the daemon cannot disagree.
 */
static int run_list(struct rngfeed_config *cfg)
{
	struct sourceset_params p = {
		.wait_for_source = cfg->wait_for_source,
		.sources_named = cfg->sources_named,
		/* As the daemon would: it waits for a hw_random device. */
		.gate_hwrng = true,
		.sysfs_dir = HWRANDOM_SYSFS_DIR,
		.gate_state = HWRNG_GATE_STATE_PATH,
	};
	char kernel[HWRNG_GATE_MSG_LEN];
	struct source_set *set;
	int r = sourceset_new(&set, cfg, &p);

	if (r < 0) {
		log_err("%s", strerror(-r));
		return EXIT_FAILURE;
	}
	printf("%-9s %-11s %6s %5s %-4s %s\n", "SOURCE", "STATE", "CREDIT",
	       "H", "RUN", "DESCRIPTION");
	for (size_t i = 0; i < sourceset_count(set); i++) {
		const struct source_config *sc = sourceset_config(set, i);
		struct sourceset_plan pl;

		sourceset_plan(set, i, &pl);
		printf("%-9s %-11s %6u %5.2f %-4s %s%s%s", sc->driver->name,
		       pl.available ? "available" : "unavailable", pl.credit,
		       pl.min_entropy,
		       pl.use ? (pl.waits ? "wait" : "yes") : "no",
		       sc->driver->description, pl.detail[0] ? ": " : "",
		       pl.detail);
		/* "unavailable" is said by STATE and the detail already. */
		if (!pl.use && strcmp(pl.why_not, "unavailable") != 0)
			printf("; not used: %s", pl.why_not);
		else if (pl.waits)
			printf("; --wait-for-source keeps trying it");
		if (pl.use && cfg->metrics_path[0])
			list_running(cfg->metrics_path, sc->driver->name);
		putchar('\n');
	}
	sourceset_free(set);
	/* The kernel's own crediting of /dev/hwrng, beside ours. */
	hwrng_gate_describe_kernel(HWRANDOM_SYSFS_DIR, kernel, sizeof(kernel));
	printf("hw_random: %s%s\n", kernel,
	       hwrng_node_missing(kernel)
		       ? "; but this /dev has no hw_random node (/dev/hwrng, char "
			 "10:183): that is the host's kernel and device, seen "
			 "through its /sys (a container?), and no source here can "
			 "read it"
		       : "");
	return EXIT_SUCCESS;
}

/*
 * -D USER[:GROUP] and --egd-owner name someone who exists: a typo is bad
 * usage (exit 2), found before any source is opened, not a runtime
 * failure at the drop or the socket.  Here, not in config.c: the
 * configuration stays independent of the machine's user database.
 * @from: the config file's "FILE:LINE" that set it, "" for @option.
 */
static int check_user(const char *spec, const char *from, const char *option)
{
	char name[sizeof(((struct rngfeed_config *)0)->user)];
	const char *what = "user";
	char *colon;

	snprintf(name, sizeof(name), "%s", spec);
	colon = strchr(name, ':');
	if (colon)
		*colon++ = '\0';
	/* Single-threaded here, as privs.c's lookup at the drop is. */
	/* "USER", "USER:GROUP", or (--egd-owner) ":GROUP". */
	// cppcheck-suppress getpwnamCalled
	if (!name[0] || getpwnam(name)) {
		// cppcheck-suppress getgrnamCalled
		if (!colon || !*colon || getgrnam(colon))
			return 0;
		what = "group";
	}
	if (from[0])
		fprintf(stderr, "rngfeed: %s: unknown %s '%s'\n", from, what,
			what[0] == 'u' ? name : colon);
	else
		fprintf(stderr, "rngfeed: unknown %s '%s' (%s)\n", what,
			what[0] == 'u' ? name : colon, option);
	return -ENOENT;
}

/* --restore-hwrng-quality: the unit's ExecStopPost=.  After a clean stop
 * there is no record: it says so (and where it looked), exit 0. */
static int run_restore_hwrng(void)
{
	char msg[HWRNG_GATE_MSG_LEN], path[256];
	int r = hwrng_gate_restore(HWRANDOM_SYSFS_DIR,
				   hwrng_record_path(path, sizeof(path)),
				   HWRNG_LOCK_PATH, msg, sizeof(msg));

	if (r < 0) {
		log_err("%s", msg);
		return EXIT_FAILURE;
	}
	if (msg[0])
		log_notice("%s", msg);
	return EXIT_SUCCESS;
}

/* --raw: N bytes of one source to stdout, untouched. */
static int run_raw(struct rngfeed_config *cfg)
{
	const struct source_config *sc = NULL;
	struct source *src = NULL;
	char why[SOURCE_WHY_LEN];
	unsigned char buf[4096];
	long long left = cfg->bytes;
	int r, ret = EXIT_FAILURE;

	for (size_t i = 0; i < cfg->n_sources; i++)
		if (cfg->sources[i].enabled)
			sc = &cfg->sources[i];
	if (!sc) { /* config_parse_args() refuses --raw without -n */
		log_err("--raw needs a source (-n NAME)");
		return EXIT_FAILURE;
	}
	/* A reader that goes away is the normal end of a pipe, not an
	 * error: see EPIPE below. */
	signal(SIGPIPE, SIG_IGN);
	r = source_open(&src, sc, why, sizeof(why));
	if (r < 0) {
		log_err("%s: %s", sc->driver->name, why);
		return EXIT_FAILURE;
	}
	while (left != 0) {
		size_t want = sizeof(buf);
		ssize_t n;

		if (left > 0 && (long long)want > left)
			want = (size_t)left;
		n = source_read(src, buf, want, NULL);
		if (n < 0) {
			char desc[SOURCE_WHY_LEN];

			/* The driver may know more than errno says (a TPM
			 * response code, a stuck CPU instruction). */
			source_describe(src, desc, sizeof(desc));
			log_err("%s: read failed: %s (%s)", sc->driver->name,
				strerror((int)-n), desc);
			goto out;
		}
		if (n == 0) {
			if (left > 0) {
				log_err("%s: end of input after %lld of %lld "
					"bytes",
					sc->driver->name, cfg->bytes - left,
					cfg->bytes);
				goto out;
			}
			break;
		}
		r = write_all(STDOUT_FILENO, buf, (size_t)n);
		if (r == -EPIPE)
			break;
		if (r < 0) {
			log_err("writing to stdout: %s", strerror(-r));
			goto out;
		}
		if (left > 0)
			left -= n;
	}
	ret = EXIT_SUCCESS;
out:
	explicit_bzero(buf, sizeof(buf));
	source_close(src);
	return ret;
}

static int run_check(struct rngfeed_config *cfg)
{
	int fd = STDIN_FILENO, r;

	if (cfg->check_path) {
		char why[SOURCE_WHY_LEN];

		fd = source_fd_open(cfg->check_path, 0, why, sizeof(why));
		if (fd < 0) {
			log_err("%s", why);
			return EXIT_USAGE;
		}
	}
	r = checkmode_run(fd, cfg->min_entropy, stdout, stderr);
	if (fd != STDIN_FILENO)
		close(fd);
	return r;
}

/* --assess [FILE] [--bits N] [--restart FILE] (issue 19). */
static int run_assess(struct rngfeed_config *cfg)
{
	int fd = STDIN_FILENO, rfd = -1, r = EXIT_USAGE;
	char why[SOURCE_WHY_LEN];

	if (cfg->assess_path) {
		fd = source_fd_open(cfg->assess_path, 0, why, sizeof(why));
		if (fd < 0) {
			log_err("%s", why);
			return EXIT_USAGE;
		}
	}
	if (cfg->restart_path) {
		rfd = source_fd_open(cfg->restart_path, 0, why, sizeof(why));
		if (rfd < 0) {
			log_err("%s", why);
			goto out;
		}
	}
	r = assess_run(fd, cfg->assess_path ? cfg->assess_path : "-",
		       cfg->assess_bits ? (unsigned)cfg->assess_bits : 8, rfd,
		       stdout, stderr);
out:
	if (rfd >= 0)
		close(rfd);
	if (fd != STDIN_FILENO)
		close(fd);
	return r;
}

static bool mode_is_daemon(enum rngfeed_mode mode)
{
	return mode == MODE_DAEMON || mode == MODE_TEST ||
	       mode == MODE_STDOUT || mode == MODE_EGD;
}

int main(int argc, char **argv)
{
	struct early_signals early;
	struct rngfeed_config cfg;
	char err[512];

	/* Before anything that takes time (a large config file): a SIGHUP
	 * or SIGUSR1 now waits for the loop instead of ending the daemon. */
	early_hold_signals(&early);
	if (early_guard_std_fds() < 0)
		return EXIT_FAILURE;
	/* One malloc arena for every thread: a reader allocates only as it
	 * starts, and an arena of its own cost 8 KiB of private memory per
	 * reader for its 2.5 KB block (issue 20). */
	mallopt(M_ARENA_MAX, 1);
	if (config_parse_args(&cfg, argc, argv, err, sizeof(err)) < 0) {
		/* One hint: a message may name a better place to look. */
		fprintf(stderr, "rngfeed: %s%s\n", err,
			strstr(err, "(see rngfeed ") ? ""
						     : " (see rngfeed --help)");
		return EXIT_USAGE;
	}
	/* Started by systemd (even in the foreground, as Type=notify units
	 * run): the journal, with priorities; otherwise stderr.  A daemon
	 * that detaches switches to syslog itself. */
	log_setup(verbosity_to_priority(cfg.verbosity),
		  getenv("JOURNAL_STREAM") ? LOG_TO_JOURNAL : LOG_TO_STDERR);
	if (!mode_is_daemon(cfg.mode))
		early_release_signals(&early);

	switch (cfg.mode) {
	case MODE_HELP:
		config_usage(stdout);
		return EXIT_SUCCESS;
	case MODE_VERSION:
		printf("rngfeed %s%s\n", RNGFEED_VERSION,
		       RNGFEED_SYSTEMD ? "" : " (built without libsystemd)");
		return EXIT_SUCCESS;
	case MODE_LIST:
		return run_list(&cfg);
	case MODE_RAW:
		return run_raw(&cfg);
	case MODE_CHECK:
		return run_check(&cfg);
	case MODE_ASSESS:
		return run_assess(&cfg);
	case MODE_RESTORE_HWRNG:
		return run_restore_hwrng();
	case MODE_DAEMON:
	case MODE_TEST:
	case MODE_STDOUT:
	case MODE_EGD:
		if (cfg.user[0] &&
		    check_user(cfg.user, cfg.user_from, "-D") < 0)
			return EXIT_USAGE;
		/* With or without --egd-server: a typo is a typo. */
		if (cfg.egd_owner[0] &&
		    check_user(cfg.egd_owner, cfg.egd_owner_from,
			       "--egd-owner") < 0)
			return EXIT_USAGE;
		break;
	}
	return daemon_run(&cfg, argc, argv);
}
