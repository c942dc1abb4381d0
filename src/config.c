// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Command-line parsing.  Options follow rngd where rngd has the same idea
 * (-f, -l, -n, -x, -O, -r, -v, -q).  Every error is one line naming what
 * was wrong; the caller exits with status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/config.h"
#include "rngfeed/util.h"

enum {
	OPT_RAW = 0x100,
	OPT_BYTES,
	OPT_CHECK,
	OPT_MIN_ENTROPY,
};

static const struct option long_options[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "list", no_argument, NULL, 'l' },
	{ "include", required_argument, NULL, 'n' },
	{ "exclude", required_argument, NULL, 'x' },
	{ "option", required_argument, NULL, 'O' },
	{ "rng-device", required_argument, NULL, 'r' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "min-entropy", required_argument, NULL, OPT_MIN_ENTROPY },
	{ NULL, 0, NULL, 0 },
};

void config_usage(FILE *out)
{
	fputs("Usage: rngfeed [OPTION]...\n"
	      "Feed the kernel's entropy pool from tested hardware sources.\n"
	      "\n"
	      "  -f, --foreground        stay in the foreground, log to stderr\n"
	      "  -l, --list              list the sources and whether they are usable\n"
	      "  -n, --include NAME      use source NAME (repeatable; default: all usable)\n"
	      "  -x, --exclude NAME      do not use source NAME (repeatable)\n"
	      "  -O, --option NAME:KEY=VALUE\n"
	      "                          set an option of source NAME, e.g.\n"
	      "                          hwrng:device=/dev/hwrng, rdrand:credit=2\n"
	      "  -r, --rng-device PATH   the hw_random device (hwrng:device=PATH)\n"
	      "      --raw               write raw bytes of the one source given by -n\n"
	      "                          to stdout, untouched\n"
	      "      --bytes N           stop after N bytes (k/M/G, Ki/Mi/Gi suffixes)\n"
	      "      --check [FILE]      run the health tests on FILE (default stdin)\n"
	      "                          and print rngtest-style counters\n"
	      "      --min-entropy H     claimed min-entropy per byte for --check\n"
	      "  -v, --verbose           more messages (repeat for debug)\n"
	      "  -q, --quiet             errors only\n"
	      "  -V, --version           print the version and exit\n"
	      "  -h, --help              print this help and exit\n",
	      out);
}

static int fail(char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

struct source_config *config_source(struct rngfeed_config *cfg,
				    const char *name)
{
	for (size_t i = 0; i < cfg->n_sources; i++)
		if (strcmp(cfg->sources[i].driver->name, name) == 0)
			return &cfg->sources[i];
	return NULL;
}

static void config_init(struct rngfeed_config *cfg)
{
	*cfg = (struct rngfeed_config){
		.mode = MODE_DAEMON,
		.verbosity = 1,
		.bytes = -1,
	};
	for (size_t i = 0; source_drivers[i] && i < CONFIG_MAX_SOURCES; i++)
		source_config_init(&cfg->sources[cfg->n_sources++],
				   source_drivers[i]);
}

static int parse_min_entropy(const char *s, double *out, char *err,
			     size_t err_len)
{
	char *end;
	double h;

	errno = 0;
	h = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(h) || h <= 0.0 || h > 8.0)
		return fail(err, err_len,
			    "min-entropy must be a number above 0 and at most 8 "
			    "(bits per byte), not '%s'",
			    s);
	*out = h;
	return 0;
}

/* -O NAME:KEY=VALUE */
static int parse_source_option(struct rngfeed_config *cfg, const char *arg,
			       char *err, size_t err_len)
{
	char buf[512], *colon, *eq;
	struct source_config *sc;
	int r;

	if (strlen(arg) >= sizeof(buf))
		return fail(err, err_len, "option too long: '%.40s...'", arg);
	strcpy(buf, arg);
	colon = strchr(buf, ':');
	eq = colon ? strchr(colon + 1, '=') : NULL;
	if (!colon || !eq || colon == buf || eq == colon + 1)
		return fail(err, err_len,
			    "malformed option '%s': expected NAME:KEY=VALUE",
			    arg);
	*colon = '\0';
	*eq = '\0';
	if (strcmp(buf, "check") == 0) {
		if (strcmp(colon + 1, "h") != 0)
			return fail(err, err_len,
				    "check: unknown option '%s' (only h)",
				    colon + 1);
		return parse_min_entropy(eq + 1, &cfg->min_entropy, err,
					 err_len);
	}
	sc = config_source(cfg, buf);
	if (!sc)
		return fail(err, err_len, "unknown source '%s' in -O %s", buf,
			    arg);
	r = source_config_set(sc, colon + 1, eq + 1, err, err_len);
	return r;
}

static int include_source(struct rngfeed_config *cfg, const char *name,
			  bool include, char *err, size_t err_len)
{
	struct source_config *sc = config_source(cfg, name);

	if (!sc)
		return fail(err, err_len,
			    "unknown source '%s' (see rngfeed --list)", name);
	if (include && !cfg->sources_named) {
		/* The first -n turns the default "all sources" into "only
		 * the named ones". */
		for (size_t i = 0; i < cfg->n_sources; i++)
			cfg->sources[i].enabled = false;
		cfg->sources_named = true;
	}
	sc->enabled = include;
	return 0;
}

static int check_consistency(struct rngfeed_config *cfg, int argc,
			     char **argv, char *err, size_t err_len)
{
	size_t enabled = 0;

	if (cfg->mode == MODE_CHECK && optind < argc)
		cfg->check_path = argv[optind++];
	if (optind < argc)
		return fail(err, err_len, "unexpected argument '%s'",
			    argv[optind]);
	for (size_t i = 0; i < cfg->n_sources; i++)
		enabled += cfg->sources[i].enabled;
	if (cfg->mode == MODE_RAW && (!cfg->sources_named || enabled != 1))
		return fail(err, err_len,
			    "--raw needs exactly one source, named with -n");
	if (cfg->bytes >= 0 && cfg->mode != MODE_RAW)
		return fail(err, err_len, "--bytes needs --raw");
	if (cfg->min_entropy > 0 && cfg->mode != MODE_CHECK)
		return fail(err, err_len, "--min-entropy needs --check");
	return 0;
}

static int set_mode(struct rngfeed_config *cfg, enum rngfeed_mode mode,
		    char *err, size_t err_len)
{
	if (cfg->mode != MODE_DAEMON && cfg->mode != mode)
		return fail(err, err_len,
			    "--list, --raw and --check exclude each other");
	cfg->mode = mode;
	return 0;
}

int config_parse_args(struct rngfeed_config *cfg, int argc, char **argv,
		      char *err, size_t err_len)
{
	struct source_config *hw;
	int c, r = 0;

	config_init(cfg);
	optind = 0; /* full re-initialisation, so tests can parse again */
	opterr = 0;
	while (r == 0 &&
	       (c = getopt_long(argc, argv, ":fln:x:O:r:vqVh", long_options,
				NULL)) != -1) {
		switch (c) {
		case 'f':
			cfg->foreground = true;
			break;
		case 'l':
			r = set_mode(cfg, MODE_LIST, err, err_len);
			break;
		case 'n':
		case 'x':
			r = include_source(cfg, optarg, c == 'n', err, err_len);
			break;
		case 'O':
			r = parse_source_option(cfg, optarg, err, err_len);
			break;
		case 'r':
			hw = config_source(cfg, "hwrng");
			r = hw ? source_config_set(hw, "device", optarg, err,
						   err_len)
			       : -EINVAL;
			break;
		case 'v':
			cfg->verbosity++;
			break;
		case 'q':
			cfg->verbosity = 0;
			break;
		case 'V':
			cfg->mode = MODE_VERSION;
			return 0;
		case 'h':
			cfg->mode = MODE_HELP;
			return 0;
		case OPT_RAW:
			r = set_mode(cfg, MODE_RAW, err, err_len);
			break;
		case OPT_BYTES:
			if (parse_size(optarg, (1LL << 62), &cfg->bytes) < 0)
				r = fail(err, err_len,
					 "--bytes needs a non-negative byte "
					 "count, not '%s'",
					 optarg);
			break;
		case OPT_CHECK:
			r = set_mode(cfg, MODE_CHECK, err, err_len);
			break;
		case OPT_MIN_ENTROPY:
			r = parse_min_entropy(optarg, &cfg->min_entropy, err,
					      err_len);
			break;
		case ':':
			r = fail(err, err_len, "option '%s' needs a value",
				 argv[optind - 1]);
			break;
		default:
			if (optopt)
				r = fail(err, err_len, "unknown option '-%c'",
					 optopt);
			else
				r = fail(err, err_len, "unknown option '%s'",
					 argv[optind - 1]);
			break;
		}
	}
	if (r < 0)
		return r;
	return check_consistency(cfg, argc, argv, err, err_len);
}
