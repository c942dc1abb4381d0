// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz the config file parser: the input is the file.  It is loaded twice,
 * by config_load_file() over the defaults and by config_parse_args() with
 * "-c FILE", and the two must agree.
 *
 * Invariants: a file that loads yields settings and source options within
 * their documented ranges (config_invariants.h) and cannot change the
 * mode or the config path; a file that does not load gives -EINVAL and
 * a one-line message starting "FILE:"; "-c FILE" fails with the same
 * message, or succeeds with the same settings unless retry-max ended up
 * below retry-delay, an egd-server address that does not parse, or a
 * credit above what its source's min-entropy allows (checked once every
 * option is in).
 */
#include "config_invariants.h"
#include "rngfeed/egd_proto.h"
#include "rngfeed/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rngfeed_config defaults, cfg, cfg2;
	static bool have_defaults;
	char err[256], err2[256], why[256];
	struct egd_addr addr;
	const char *path;
	int r, r2;

	if (!have_defaults) {
		char *argv[] = { "rngfeed", "-c", "/dev/null", NULL };

		FUZZ_ASSERT(config_parse_args(&defaults, 3, argv, err,
					      sizeof(err)) == 0);
		fuzz_check_config(&defaults);
		have_defaults = true;
	}
	path = fuzz_file("input", data, size);

	cfg = defaults;
	strcpy(err, FUZZ_ERR_UNSET);
	r = config_load_file(&cfg, path, err, sizeof(err));
	if (r == 0) {
		fuzz_check_config(&cfg);
		FUZZ_ASSERT(cfg.mode == MODE_DAEMON);
		FUZZ_ASSERT(strcmp(cfg.config_path, "/dev/null") == 0);
	} else {
		FUZZ_ASSERT(r == -EINVAL);
		fuzz_assert_message(err, sizeof(err));
		FUZZ_ASSERT(strncmp(err, path, strlen(path)) == 0 &&
			    err[strlen(path)] == ':');
		FUZZ_ASSERT(strchr(err, '\n') == NULL);
	}

	char *argv[] = { "rngfeed", "-c", (char *)path, NULL };

	strcpy(err2, FUZZ_ERR_UNSET);
	r2 = config_parse_args(&cfg2, 3, argv, err2, sizeof(err2));
	if (r < 0) {
		FUZZ_ASSERT(r2 == -EINVAL);
		FUZZ_ASSERT(strcmp(err, err2) == 0);
	} else if (cfg.retry_max < cfg.retry_delay) {
		FUZZ_ASSERT(r2 == -EINVAL);
		fuzz_assert_message(err2, sizeof(err2));
		FUZZ_ASSERT(strstr(err2, "retry-max") != NULL);
	} else if (cfg.metrics_path[0] &&
		   metrics_check_path(cfg.metrics_path, why, sizeof(why)) < 0) {
		/* Checked with the options: there, and not a regular file
		 * (a FIFO would be replaced, or block --list). */
		FUZZ_ASSERT(r2 == -EINVAL);
		fuzz_assert_message(err2, sizeof(err2));
	} else if (cfg.egd_server[0] &&
		   egd_addr_parse(cfg.egd_server, &addr, why, sizeof(why)) <
			   0) {
		/* Checked with the options too (a command line may replace
		 * the file's address): one line, the same as the parser's. */
		FUZZ_ASSERT(r2 == -EINVAL);
		fuzz_assert_message(err2, sizeof(err2));
		FUZZ_ASSERT(strcmp(err2, why) == 0);
	} else if (fuzz_credit_above_cap(&cfg)) {
		/* Checked once every option is read (source.h). */
		FUZZ_ASSERT(r2 == -EINVAL);
		fuzz_assert_message(err2, sizeof(err2));
		FUZZ_ASSERT(strstr(err2, "raise min-entropy") != NULL);
	} else {
		FUZZ_ASSERT(r2 == 0);
		FUZZ_ASSERT(cfg2.mode == MODE_DAEMON);
		FUZZ_ASSERT(strcmp(cfg2.config_path, path) == 0);
		FUZZ_ASSERT(fuzz_config_equal(&cfg, &cfg2));
		fuzz_check_config(&cfg2);
		FUZZ_ASSERT(!fuzz_credit_above_cap(&cfg2));
	}
	return 0;
}
