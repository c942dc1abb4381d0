// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz the command line.  The first input byte picks the target:
 *
 *   0  config_parse_args() over the rest of the input split at NUL bytes
 *      (after "rngfeed -c /dev/null", so no config file is read; inputs
 *      that would name another config file are skipped);
 *   1  source_config_set() for every driver and key: the rest is records
 *      separated by '\n', each a driver byte, a key byte (one of the keys
 *      below, or past them "KEY=VALUE" from the record) and the value;
 *   2  one -O NAME:KEY=VALUE (in one of four spellings) through
 *      config_parse_args(), compared with source_config_set() on a fresh
 *      source configuration followed by source_config_validate() (the
 *      credit ceiling the whole parse checks).
 *
 * Invariants: a parse that succeeds yields settings within their ranges
 * and a consistent mode (--raw with one named source, --bytes only with
 * --raw/--stdout, retry-max >= retry-delay); one that fails gives -EINVAL
 * and a non-empty message (one line unless the arguments held a
 * newline); parsing the same argv again gives the same answer;
 * source_config_set() stores exactly the value it accepted and leaves
 * the configuration untouched when it refuses.
 */
#include "config_invariants.h"
#include "rngfeed/util.h"

#define MAX_ARGS 64

static const char *const keys[] = {
	"credit", "min-entropy", "enable", "device",
	"tries", "timeout-ms", "select", "sysfs", "guest-owned",
};
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static struct rngfeed_config defaults;

static void init_defaults(void)
{
	static bool done;
	char *argv[] = { "rngfeed", "-c", "/dev/null", NULL };
	char err[256];

	if (done)
		return;
	FUZZ_ASSERT(config_parse_args(&defaults, 3, argv, err, sizeof(err)) ==
		    0);
	done = true;
}

/* Could this argument make getopt read a config file other than
 * /dev/null?  Conservative: any short-option cluster holding a 'c', any
 * long option that abbreviates --config. */
static bool names_config(const char *arg)
{
	if (arg[0] != '-')
		return false;
	if (arg[1] == '-')
		return strncmp(arg, "--co", 4) == 0;
	return strchr(arg, 'c') != NULL;
}

static void check_parsed(const struct rngfeed_config *c)
{
	size_t enabled = 0;

	fuzz_check_config(c);
	FUZZ_ASSERT(strcmp(c->config_path, "/dev/null") == 0);
	FUZZ_ASSERT(c->verbosity >= 0);
	FUZZ_ASSERT(c->bytes >= -1 && c->bytes <= 1LL << 62);
	FUZZ_ASSERT(c->min_entropy == 0 ||
		    (c->min_entropy > 0 && c->min_entropy <= 8));
	/* -h and -V stop the parse where they stand, before the whole
	 * configuration is checked (a -O credit= above its cap before
	 * them stays); main() then only prints, nothing is credited. */
	if (c->mode == MODE_HELP || c->mode == MODE_VERSION)
		return;
	FUZZ_ASSERT(!fuzz_credit_above_cap(c));
	for (size_t i = 0; i < c->n_sources; i++)
		enabled += c->sources[i].enabled;
	if (c->mode == MODE_RAW)
		FUZZ_ASSERT(c->sources_named && enabled == 1);
	if (c->bytes >= 0)
		FUZZ_ASSERT(c->mode == MODE_RAW || c->mode == MODE_STDOUT);
	if (c->min_entropy > 0)
		FUZZ_ASSERT(c->mode == MODE_CHECK);
	if (c->check_path)
		FUZZ_ASSERT(c->mode == MODE_CHECK);
	FUZZ_ASSERT(c->retry_max >= c->retry_delay);
}

static void fuzz_argv(const uint8_t *data, size_t size)
{
	static struct rngfeed_config cfg, cfg2;
	char *buf = fuzz_strndup(data, size), *args[MAX_ARGS + 4],
	     *args2[MAX_ARGS + 4], err[256], err2[256];
	int argc = 3, r, r2;
	bool newline = memchr(data, '\n', size) != NULL;

	args[0] = "rngfeed";
	args[1] = "-c";
	args[2] = "/dev/null";
	/* NUL-separated arguments; a final NUL does not start another. */
	for (size_t i = 0; i < size && argc < MAX_ARGS + 3;) {
		args[argc] = buf + i;
		if (names_config(args[argc]))
			goto out;
		argc++;
		i += strlen(buf + i) + 1;
	}
	args[argc] = NULL;
	memcpy(args2, args, sizeof(args));

	strcpy(err, FUZZ_ERR_UNSET);
	r = config_parse_args(&cfg, argc, args, err, sizeof(err));
	if (r == 0) {
		check_parsed(&cfg);
	} else {
		FUZZ_ASSERT(r == -EINVAL || r == -ELOOP);
		fuzz_assert_message(err, sizeof(err));
		if (!newline)
			FUZZ_ASSERT(strchr(err, '\n') == NULL);
	}
	/* Parsing again (getopt state included) gives the same answer. */
	strcpy(err2, FUZZ_ERR_UNSET);
	r2 = config_parse_args(&cfg2, argc, args2, err2, sizeof(err2));
	FUZZ_ASSERT(r2 == r);
	if (r == 0)
		FUZZ_ASSERT(fuzz_config_equal(&cfg, &cfg2) &&
			    cfg.mode == cfg2.mode && cfg.bytes == cfg2.bytes &&
			    cfg.verbosity == cfg2.verbosity &&
			    cfg.foreground == cfg2.foreground);
	else
		FUZZ_ASSERT(strcmp(err, err2) == 0);
out:
	free(buf);
}

/* Check one accepted or refused source_config_set(). */
static void check_set(struct source_config *sc, const char *key,
		      const char *value)
{
	struct source_config before = *sc;
	char err[128], *end;
	int r;

	strcpy(err, FUZZ_ERR_UNSET);
	r = source_config_set(sc, key, value, err, sizeof(err));
	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ELOOP);
		fuzz_assert_message(err, sizeof(err));
		FUZZ_ASSERT(memcmp(&before, sc, sizeof(before)) == 0);
		return;
	}
	FUZZ_ASSERT(r == 0);
	fuzz_check_source_config(sc);
	if (strcmp(key, "credit") == 0) {
		FUZZ_ASSERT(sc->credit == (int)strtol(value, &end, 10) &&
			    *end == '\0');
	} else if (strcmp(key, "min-entropy") == 0) {
		FUZZ_ASSERT(sc->min_entropy == strtod(value, &end) &&
			    *end == '\0');
	} else if (strcmp(key, "enable") == 0) {
		FUZZ_ASSERT(parse_bool(value) == sc->enabled);
	} else if (strcmp(key, "guest-owned") == 0) {
		/* A field, not a packed option (drivers with guest_owned). */
		FUZZ_ASSERT(sc->driver->guest_owned &&
			    parse_bool(value) == sc->guest_owned);
		FUZZ_ASSERT(sc->n_options == before.n_options);
	} else {
		const char *got = source_config_get(sc, key);

		FUZZ_ASSERT(got && strcmp(got, value) == 0);
		FUZZ_ASSERT(sc->n_options == before.n_options ||
			    sc->n_options == before.n_options + 1);
	}
}

static void fuzz_source_set(const uint8_t *data, size_t size)
{
	struct source_config sc[CONFIG_MAX_SOURCES];
	size_t n_drivers = source_driver_count();
	char *buf = fuzz_strndup(data, size), *save = NULL, *rec;
	unsigned int records = 0;

	for (size_t i = 0; i < n_drivers && i < CONFIG_MAX_SOURCES; i++)
		source_config_init(&sc[i], source_drivers[i]);
	for (rec = strtok_r(buf, "\n", &save); rec && records < 64;
	     rec = strtok_r(NULL, "\n", &save), records++) {
		size_t d = (unsigned char)rec[0] % n_drivers;
		unsigned char k;
		char *key, *value;

		if (!rec[1])
			continue;
		k = (unsigned char)rec[1];
		if (k < 0x80) {
			key = (char *)keys[k % N_KEYS];
			value = rec + 2;
		} else {
			key = rec + 2;
			value = strchr(key, '=');
			if (!value)
				continue;
			*value++ = '\0';
		}
		check_set(&sc[d], key, value);
	}
	free(buf);
}

/* -O NAME:KEY=VALUE on the command line against source_config_set(). */
static void fuzz_dash_o(uint8_t style, const uint8_t *data, size_t size)
{
	static struct rngfeed_config cfg;
	char *opt = fuzz_strndup(data, size), *copy = NULL, *argv[6],
	     err[256], err2[256], *colon, *eq;
	struct source_config fresh, *sc;
	int argc = 3, r, want;

	argv[0] = "rngfeed";
	argv[1] = "-c";
	argv[2] = "/dev/null";
	switch (style % 4) {
	case 0:
		argv[argc++] = "-O";
		argv[argc++] = opt;
		break;
	case 1:
		argv[argc++] = "--option";
		argv[argc++] = opt;
		break;
	case 2:
	case 3:
		copy = malloc(strlen(opt) + 10);
		FUZZ_ASSERT(copy != NULL);
		sprintf(copy, "%s%s", style % 4 == 2 ? "-O" : "--option=",
			opt);
		argv[argc++] = copy;
		break;
	}
	argv[argc] = NULL;

	strcpy(err, FUZZ_ERR_UNSET);
	r = config_parse_args(&cfg, argc, argv, err, sizeof(err));
	if (r < 0)
		fuzz_assert_message(err, sizeof(err));

	/* The expected answer, split by hand. */
	colon = strchr(opt, ':');
	eq = colon ? strchr(colon + 1, '=') : NULL;
	if (strlen(opt) >= 512 || !colon || !eq || colon == opt ||
	    eq == colon + 1) {
		FUZZ_ASSERT(r == -EINVAL);
		goto out;
	}
	*colon = '\0';
	*eq = '\0';
	if (strcmp(opt, "check") == 0) {
		/* check:h=H is --min-entropy, which needs --check. */
		FUZZ_ASSERT(r == -EINVAL);
		goto out;
	}
	sc = config_source(&defaults, opt);
	if (!sc) {
		FUZZ_ASSERT(r == -EINVAL);
		FUZZ_ASSERT(strstr(err, "unknown source") != NULL);
		goto out;
	}
	fresh = *sc;
	strcpy(err2, FUZZ_ERR_UNSET);
	want = source_config_set(&fresh, colon + 1, eq + 1, err2,
				 sizeof(err2));
	/* The whole parse then checks each source as a whole: a credit
	 * above the cap its min-entropy allows (hwrng:credit=795 at H = 6)
	 * is refused there, not by the key alone. */
	if (want == 0) {
		strcpy(err2, FUZZ_ERR_UNSET);
		want = source_config_validate(&fresh, err2, sizeof(err2));
	}
	FUZZ_ASSERT(r == want);
	if (r == 0) {
		check_parsed(&cfg);
		FUZZ_ASSERT(fuzz_source_equal(config_source(&cfg, opt),
					      &fresh));
	} else {
		FUZZ_ASSERT(strcmp(err, err2) == 0);
	}
out:
	free(copy);
	free(opt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	init_defaults();
	switch (data[0] % 3) {
	case 0:
		fuzz_argv(data + 1, size - 1);
		break;
	case 1:
		fuzz_source_set(data + 1, size - 1);
		break;
	case 2:
		fuzz_dash_o(data[0] / 3, data + 1, size - 1);
		break;
	}
	return 0;
}
