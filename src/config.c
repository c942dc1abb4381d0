// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Command-line parsing.  Options follow rngd where rngd has the same idea
 * (-f, -l, -n, -x, -O, -r, -v, -q).  Every error is one line naming what
 * was wrong; the caller exits with status 2.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <stddef.h>
#include <string.h>

#include "rngfeed/conffile.h"
#include "rngfeed/assessor.h"
#include "rngfeed/config.h"
#include "rngfeed/egd_proto.h"
#include "rngfeed/egd_server.h"
#include "rngfeed/file_ledger.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/metrics.h"
#include "rngfeed/util.h"


enum {
	OPT_RAW = 0x100,
	OPT_BYTES,
	OPT_CHECK,
	OPT_MIN_ENTROPY,
	OPT_STDOUT,
	OPT_BENCH_FILL,
	OPT_RESTORE_HWRNG,
	OPT_EGD_ONLY,
	OPT_ASSESS,
	OPT_BITS,
	OPT_RESTART,
	/* Settings without a short option: OPT_SETTING + their index. */
	OPT_SETTING = 0x200,
};

/*
 * Daemon settings, shared by long options and the config file, so both
 * accept the same names, ranges and messages.
 */
enum setting_type { SET_PATH, SET_INT, SET_SECONDS, SET_BOOL, SET_USER,
		   SET_MODE /* octal file mode in [0, max], never o+w */,
		   SET_DECIMAL /* a double, min and max in thousandths */,
		   SET_AUTO /* auto, yes or no: an int, -1, 1 or 0 */ };

struct setting {
	const char *name;
	enum setting_type type;
	size_t offset;
	size_t size;          /* SET_PATH, SET_USER: buffer size */
	long long min, max;   /* SET_INT; SET_SECONDS in milliseconds,
			       * SET_DECIMAL in thousandths */
	const char *what;     /* for messages */
	int short_opt;        /* its short option, or 0 */
};

#define FIELD(f) offsetof(struct rngfeed_config, f), \
		 sizeof(((struct rngfeed_config *)0)->f)

static const struct setting settings[] = {
	{ "config", SET_PATH, FIELD(config_path), 0, 0, "a path", 'c' },
	{ "random-device", SET_PATH, FIELD(random_device), 0, 0, "a path", 'o' },
	{ "metrics", SET_PATH, FIELD(metrics_path), 0, 0, "a path", 0 },
	{ "pid-file", SET_PATH, FIELD(pid_file), 0, 0, "a path", 'p' },
	{ "state-dir", SET_PATH, FIELD(state_dir), 0, 0, "an absolute path",
	  0 },
	{ "user", SET_USER, FIELD(user), 0, 0, "USER[:GROUP]", 'D' },
	/* RNDADDENTROPY takes any size; 4096 bounds our buffer. */
	{ "random-step", SET_INT, FIELD(random_step), 1, 4096,
	  "bytes from 1 to 4096", 's' },
	{ "fill-watermark", SET_INT, FIELD(fill_watermark), 0, 4096,
	  "bits from 0 to 4096", 'W' },
	{ "interval", SET_INT, FIELD(interval), 1, 86400,
	  "seconds from 1 to 86400", 0 },
	{ "max-failures", SET_INT, FIELD(max_failures), 1, 1000,
	  "a count from 1 to 1000", 0 },
	{ "reseed-bytes", SET_INT, FIELD(reseed_bytes), 4096, 1LL << 30,
	  "bytes from 4096 to 1Gi", 0 },
	{ "retry-delay", SET_SECONDS, FIELD(retry_delay), 10, 86400000,
	  "seconds from 0.01 to 86400", 0 },
	{ "retry-max", SET_SECONDS, FIELD(retry_max), 10, 86400000,
	  "seconds from 0.01 to 86400", 0 },
	{ "reseed-seconds", SET_SECONDS, FIELD(reseed_seconds), 10, 3600000,
	  "seconds from 0.01 to 3600", 0 },
	{ "stats-interval", SET_SECONDS, FIELD(stats_interval), 100, 3600000,
	  "seconds from 0.1 to 3600", 0 },
	{ "wait-for-source", SET_BOOL, FIELD(wait_for_source), 0, 0,
	  "yes or no", 0 },
	{ "dumpable", SET_BOOL, FIELD(dumpable), 0, 0, "yes or no", 0 },
	/* Off: a DRBG state that cannot be locked in RAM stops the start. */
	{ "allow-unlocked-memory", SET_BOOL, FIELD(allow_unlocked_memory), 0,
	  0, "yes or no", 0 },
	/* READY=1 at the first credit, or after this long without one, so
	 * that boot never waits on a source that cannot be credited. */
	{ "ready-timeout", SET_SECONDS, FIELD(ready_timeout), 0, 600000,
	  "seconds from 0 to 600", 0 },
	/* The EGD server (issue 17); the address is checked by
	 * egd_addr_parse() once every option is in. */
	{ "egd-server", SET_PATH, FIELD(egd_server), 0, 0,
	  "unix:PATH or tcp:[HOST:]PORT", 0 },
	{ "egd-socket-mode", SET_MODE, FIELD(egd_socket_mode), 0, 0775,
	  "an octal mode that is not world-writable, e.g. 0660", 0 },
	{ "egd-owner", SET_USER, FIELD(egd_owner), 0, 0, "USER[:GROUP]", 0 },
	{ "egd-max-clients", SET_INT, FIELD(egd_max_clients), 1,
	  EGD_MAX_CLIENTS, "a count from 1 to 1000", 0 },
	{ "egd-clients-per-peer", SET_INT, FIELD(egd_clients_per_peer), 1,
	  EGD_MAX_CLIENTS, "a count from 1 to 1000", 0 },
	{ "egd-rate", SET_INT, FIELD(egd_rate), 0, 1LL << 34,
	  "bytes per second from 0 (no limit) to 16Gi", 0 },
	{ "egd-budget", SET_INT, FIELD(egd_budget), 0, 1LL << 36,
	  "bytes per second from 0 (no limit) to 64Gi", 0 },
	{ "egd-idle-timeout", SET_SECONDS, FIELD(egd_idle_timeout), 0,
	  86400000, "seconds from 0 (none) to 86400", 0 },
	/* The full SP 800-90B assessment of each credited source (issue
	 * 25, assessor.h): its CPU share of one core, all sources together,
	 * and its window. */
	{ "assess-budget", SET_DECIMAL, FIELD(assess_budget), 10, 100000,
	  "a percentage from 0.01 to 100", 0 },
	{ "assess-samples", SET_INT, FIELD(assess_samples), ASSESSOR_MIN_SAMPLES,
	  16000000, "samples from 65000 to 16000000", 0 },
	/* Trust (confidential.h): auto detects a confidential guest. */
	{ "confidential-guest", SET_AUTO, FIELD(confidential_guest), 0, 0,
	  "auto, yes or no", 0 },
};

/* Options that are not settings; make_long_options() adds the settings. */
static const struct option base_options[] = {
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
	{ "check", optional_argument, NULL, OPT_CHECK },
	{ "min-entropy", required_argument, NULL, OPT_MIN_ENTROPY },
	{ "test", no_argument, NULL, 't' },
	{ "stdout", no_argument, NULL, OPT_STDOUT },
	{ "bench-fill", required_argument, NULL, OPT_BENCH_FILL },
	{ "restore-hwrng-quality", no_argument, NULL, OPT_RESTORE_HWRNG },
	{ "egd-only", no_argument, NULL, OPT_EGD_ONLY },
	{ "assess", optional_argument, NULL, OPT_ASSESS },
	{ "bits", required_argument, NULL, OPT_BITS },
	{ "restart", required_argument, NULL, OPT_RESTART },
};

#define N_BASE_OPTIONS (sizeof(base_options) / sizeof(base_options[0]))
#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

/*
 * Every setting is also a long option of the same name (a flag for the
 * yes/no ones), so each is named once: in settings[].
 */
static void make_long_options(struct option out[N_BASE_OPTIONS + N_SETTINGS + 1])
{
	memcpy(out, base_options, sizeof(base_options));
	for (size_t i = 0; i < N_SETTINGS; i++)
		out[N_BASE_OPTIONS + i] = (struct option){
			.name = settings[i].name,
			.has_arg = settings[i].type == SET_BOOL ? no_argument
							      : required_argument,
			.val = settings[i].short_opt ? settings[i].short_opt
						     : OPT_SETTING + (int)i,
		};
	out[N_BASE_OPTIONS + N_SETTINGS] = (struct option){ 0 };
}

/* The setting getopt_long() returned @c for, or NULL. */
static const struct setting *setting_for_option(int c)
{
	if (c >= OPT_SETTING && c < OPT_SETTING + (int)N_SETTINGS)
		return &settings[c - OPT_SETTING];
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (settings[i].short_opt && settings[i].short_opt == c)
			return &settings[i];
	return NULL;
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
		.config_path = CONFIG_DEFAULT_PATH,
		.random_device = "/dev/random",
		.random_step = 64,     /* as rngd */
		.fill_watermark = 2048,
		.interval = 60,        /* the kernel's own reseed interval */
		.max_failures = 3,
		.retry_delay = 10,
		.retry_max = 3600,
		.reseed_bytes = 1 << 20,
		.reseed_seconds = 1,
		.stats_interval = 1,
		.ready_timeout = 2,
		.egd_socket_mode = 0660,
		.egd_max_clients = 64,
		.egd_clients_per_peer = 8,
		.egd_rate = 1 << 20,
		.egd_budget = 16 << 20,
		.egd_idle_timeout = 60,
		.assess_budget = 100.0 * ASSESSOR_DEFAULT_BUDGET,
		.assess_samples = ASSESSOR_DEFAULT_SAMPLES,
		.confidential_guest = -1, /* auto */
	};
	for (size_t i = 0; i < CONFIG_MAX_SOURCES && source_drivers[i]; i++)
		source_config_init(&cfg->sources[cfg->n_sources++],
				   source_drivers[i]);
	file_ledger_default_dir(cfg->state_dir, sizeof(cfg->state_dir));
}

static int parse_min_entropy(const char *s, double *out, char *err,
			     size_t err_len)
{
	char *end;
	double h;

	if (!s) /* an option's missing argument */
		return set_error(err, err_len, "min-entropy needs a value");
	errno = 0;
	h = strtod(s, &end);
	/* strtod() skips leading blanks; no other number here does. */
	if (isspace((unsigned char)*s))
		h = NAN;
	/* Below the floor the health tests' cutoffs outgrow their
	 * windows and could never fail (source_min_entropy_floor()). */
	if (!*s || *end || errno || !isfinite(h) ||
	    !(h >= source_min_entropy_floor(8)) || h > 8.0)
		return set_error(err, err_len,
			    "min-entropy must be a number from %.10g to 8 "
			    "(bits per byte), not '%s'",
			    source_min_entropy_floor(8), s);
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

	if (!arg)
		return set_error(err, err_len, "-O needs NAME:KEY=VALUE");
	if (strlen(arg) >= sizeof(buf))
		return set_error(err, err_len, "option too long: '%.40s...'", arg);
	strcpy(buf, arg);
	colon = strchr(buf, ':');
	eq = colon ? strchr(colon + 1, '=') : NULL;
	if (!colon || !eq || colon == buf || eq == colon + 1)
		return set_error(err, err_len,
			    "malformed option '%s': expected NAME:KEY=VALUE",
			    arg);
	*colon = '\0';
	*eq = '\0';
	if (strcmp(buf, "check") == 0) {
		if (strcmp(colon + 1, "h") != 0)
			return set_error(err, err_len,
				    "check: unknown option '%s' (only h)",
				    colon + 1);
		return parse_min_entropy(eq + 1, &cfg->min_entropy, err,
					 err_len);
	}
	sc = config_source(cfg, buf);
	if (!sc)
		return set_error(err, err_len, "unknown source '%s' in -O %s", buf,
			    arg);
	r = source_config_set(sc, colon + 1, eq + 1, err, err_len);
	return r;
}

static const struct setting *setting_find(const char *name)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (strcmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

/* Every seconds setting (and --bench-fill): decimal, as documented. */
static int parse_seconds(const char *s, double *out)
{
	return parse_decimal(s, out);
}

int config_set(struct rngfeed_config *cfg, const char *key,
	       const char *value, char *err, size_t err_len)
{
	const struct setting *st = setting_find(key);
	char *field;
	long long n;
	double d;
	int b;

	if (!st)
		return -ENOENT;
	field = (char *)cfg + st->offset;
	switch (st->type) {
	case SET_PATH:
	case SET_USER:
		if (!*value || strlen(value) >= st->size)
			break;
		if (st->type == SET_PATH && value[0] != '/' &&
		    strcmp(key, "metrics") && strcmp(key, "pid-file") &&
		    strcmp(key, "config") && strcmp(key, "egd-server"))
			break;
		strcpy(field, value);
		return 0;
	case SET_INT:
		/* Whole seconds (--interval) are read as every seconds
		 * setting is, then must be whole; counts take k/M/Gi. */
		if (strncmp(st->what, "seconds", 7) == 0) {
			if (parse_seconds(value, &d) < 0 || d != floor(d) ||
			    d < (double)st->min || d > (double)st->max)
				break;
			n = (long long)d;
		} else if (parse_size(value, st->max, &n) < 0 || n < st->min) {
			break;
		}
		*(long long *)(void *)field = n;
		return 0;
	case SET_SECONDS:
	case SET_DECIMAL:
		if (parse_seconds(value, &d) < 0 || d * 1000 < st->min ||
		    d * 1000 > st->max)
			break;
		*(double *)(void *)field = d;
		return 0;
	case SET_MODE: {
		char *end;
		long m;

		errno = 0;
		m = strtol(value, &end, 8);
		if (!*value || isspace((unsigned char)*value) || *value == '-' ||
		    *value == '+' || *end || errno || m < st->min || m > st->max ||
		    (m & 0002))
			break;
		*(long long *)(void *)field = m;
		return 0;
	}
	case SET_BOOL:
		b = parse_bool(value);
		if (b < 0)
			break;
		*(bool *)(void *)field = b;
		return 0;
	case SET_AUTO:
		b = strcasecmp(value, "auto") == 0 ? -1 : parse_bool(value);
		if (b == -EINVAL)
			break;
		*(int *)(void *)field = b;
		return 0;
	}
	return set_error(err, err_len, "%s must be %s, not '%s'", key, st->what,
		    value);
}

/* Split "key = value" in place around its first '='; the caller has
 * trimmed the line's own leading and trailing blanks.  False if there is
 * no '='. */
static int include_source(struct rngfeed_config *cfg, const char *name,
			  bool include, char *err, size_t err_len)
{
	struct source_config *sc = config_source(cfg, name);

	if (!sc)
		return set_error(err, err_len,
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

	if (cfg->mode == MODE_CHECK && !cfg->check_path && optind < argc)
		cfg->check_path = argv[optind++];
	if (cfg->mode == MODE_ASSESS && !cfg->assess_path && optind < argc)
		cfg->assess_path = argv[optind++];
	if ((cfg->assess_bits || cfg->restart_path) && cfg->mode != MODE_ASSESS)
		return set_error(err, err_len, "--bits and --restart need --assess");
	if (optind < argc)
		return set_error(err, err_len, "unexpected argument '%s'",
			    argv[optind]);
	for (size_t i = 0; i < cfg->n_sources; i++)
		enabled += cfg->sources[i].enabled;
	if (cfg->mode == MODE_RAW && (!cfg->sources_named || enabled != 1))
		return set_error(err, err_len,
			    "--raw needs exactly one source, named with -n");
	if (cfg->bytes >= 0 && cfg->mode != MODE_RAW &&
	    cfg->mode != MODE_STDOUT)
		return set_error(err, err_len, "--bytes needs --raw or --stdout");
	if (cfg->retry_max < cfg->retry_delay)
		return set_error(err, err_len,
			    "retry-max (%g s) is shorter than retry-delay (%g s)",
			    cfg->retry_max, cfg->retry_delay);
	if (cfg->min_entropy > 0 && cfg->mode != MODE_CHECK)
		return set_error(err, err_len, "--min-entropy needs --check");
	if (cfg->egd_server[0]) {
		struct egd_addr a;
		int r = egd_addr_parse(cfg->egd_server, &a, err, err_len);

		/* Other modes (--list, -t...) ignore it: a server in
		 * rngfeed.conf must not stop them. */
		if (r < 0)
			return r;
	}
	/* Written by the daemons, read by --list: a FIFO there would be
	 * replaced, or block --list's read. */
	if (cfg->metrics_path[0] &&
	    (cfg->mode == MODE_DAEMON || cfg->mode == MODE_TEST ||
	     cfg->mode == MODE_STDOUT || cfg->mode == MODE_EGD ||
	     cfg->mode == MODE_LIST)) {
		int r = metrics_check_path(cfg->metrics_path, err, err_len);

		if (r < 0)
			return r;
	}
	if (cfg->mode == MODE_EGD && !cfg->egd_server[0])
		return set_error(err, err_len, "--egd-only needs --egd-server");
	if (cfg->bench_fill > 0 &&
	    (cfg->mode != MODE_DAEMON || !cfg->foreground))
		return set_error(err, err_len,
			    "--bench-fill is for benchmarks: it needs -f and "
			    "no other mode");
	return 0;
}

static int set_mode(struct rngfeed_config *cfg, enum rngfeed_mode mode,
		    char *err, size_t err_len)
{
	if (cfg->mode != MODE_DAEMON && cfg->mode != mode)
		return set_error(err, err_len,
			    "--list, --raw, --check, --assess, --test, "
			    "--stdout and --egd-only exclude each other");
	cfg->mode = mode;
	return 0;
}

#define SHORT_OPTIONS ":fln:x:O:r:vqVhtc:o:s:W:p:D:"

/*
 * The config file is read before the other options so that the command
 * line overrides it; so find -c first.  A missing default file is fine,
 * a missing named one is an error.
 */
static int load_config_file(struct rngfeed_config *cfg, int argc,
			    char **argv, char *err, size_t err_len)
{
	struct option long_options[N_BASE_OPTIONS + N_SETTINGS + 1];
	bool named = false;
	int c, r;

	make_long_options(long_options);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, SHORT_OPTIONS, long_options,
				NULL)) != -1) {
		if (c == 'c') {
			r = config_set(cfg, "config", optarg, err, err_len);
			if (r < 0)
				return r;
			named = true;
		} else if (c == 'h' || c == 'V') {
			return 0; /* help and version need no config */
		}
	}
	r = config_load_file(cfg, cfg->config_path, err, err_len);
	if (r == -ENOENT && !named)
		return 0;
	return r < 0 ? -EINVAL : 0;
}

int config_parse_args(struct rngfeed_config *cfg, int argc, char **argv,
		      char *err, size_t err_len)
{
	struct option long_options[N_BASE_OPTIONS + N_SETTINGS + 1];
	struct source_config *hw;
	int c, r = 0;

	make_long_options(long_options);
	config_init(cfg);
	r = load_config_file(cfg, argc, argv, err, err_len);
	if (r < 0)
		return r;
	optind = 0; /* full re-initialisation, so tests can parse again */
	opterr = 0;
	while (r == 0 &&
	       (c = getopt_long(argc, argv, SHORT_OPTIONS, long_options,
				NULL)) != -1) {
		const struct setting *st = setting_for_option(c);

		if (st) {
			/* -c was read above.  A flag (no_argument) means
			 * "yes"; every other setting has its value. */
			if (strcmp(st->name, "config") != 0)
				r = config_set(cfg, st->name,
					       st->type == SET_BOOL ? "yes" : optarg,
					       err, err_len);
			/* Set here, not in the file (see user_from). */
			if (strcmp(st->name, "user") == 0)
				cfg->user_from[0] = '\0';
			else if (strcmp(st->name, "egd-owner") == 0)
				cfg->egd_owner_from[0] = '\0';
			continue;
		}
		switch (c) {
		case 't':
			r = set_mode(cfg, MODE_TEST, err, err_len);
			break;
		case OPT_STDOUT:
			r = set_mode(cfg, MODE_STDOUT, err, err_len);
			break;
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
				r = set_error(err, err_len,
					 "--bytes needs a non-negative byte "
					 "count, not '%s'",
					 optarg);
			break;
		case OPT_CHECK:
			/* --check=FILE as --help writes it, or --check FILE
			 * (the operand, taken in check_consistency()). */
			r = set_mode(cfg, MODE_CHECK, err, err_len);
			if (r == 0 && optarg)
				cfg->check_path = optarg;
			break;
		case OPT_RESTORE_HWRNG:
			r = set_mode(cfg, MODE_RESTORE_HWRNG, err, err_len);
			break;
		case OPT_EGD_ONLY:
			r = set_mode(cfg, MODE_EGD, err, err_len);
			break;
		case OPT_ASSESS:
			/* --assess=FILE or --assess FILE, as --check. */
			r = set_mode(cfg, MODE_ASSESS, err, err_len);
			if (r == 0 && optarg)
				cfg->assess_path = optarg;
			break;
		case OPT_BITS:
			if (parse_ll(optarg, 1, 8, &cfg->assess_bits) < 0)
				r = set_error(err, err_len,
					 "--bits needs bits per sample from 1 "
					 "to 8, not '%s'",
					 optarg);
			break;
		case OPT_RESTART:
			cfg->restart_path = optarg;
			break;
		case OPT_MIN_ENTROPY:
			r = parse_min_entropy(optarg, &cfg->min_entropy, err,
					      err_len);
			break;
		case OPT_BENCH_FILL:
			if (parse_seconds(optarg, &cfg->bench_fill) < 0 ||
			    cfg->bench_fill <= 0 || cfg->bench_fill > 3600)
				r = set_error(err, err_len,
					 "--bench-fill needs seconds from "
					 "0.001 to 3600, not '%s'",
					 optarg);
			break;
		case ':':
			r = set_error(err, err_len, "option '%s' needs a value",
				 argv[optind - 1]);
			break;
		default:
			/* optopt is a short letter only for an unknown short
			 * option; for a known long option given a value it
			 * does not take, it is that option's val (maybe not
			 * a character), and argv[optind - 1] is what the user
			 * wrote. */
			if (optopt > 0 && optopt < 0x100 &&
			    !strchr(SHORT_OPTIONS, optopt))
				r = set_error(err, err_len, "unknown option '-%c'",
					 optopt);
			else if (optopt)
				r = set_error(err, err_len,
					 "option '%s' takes no value",
					 argv[optind - 1]);
			else
				r = set_error(err, err_len, "unknown option '%s'",
					 argv[optind - 1]);
			break;
		}
	}
	if (r < 0)
		return r;
	r = check_consistency(cfg, argc, argv, err, err_len);
	/* Per-source checks that need every option (credit= against the
	 * cap its min-entropy= sets, in whatever order they came). */
	for (size_t i = 0; r == 0 && i < cfg->n_sources; i++)
		r = source_config_validate(&cfg->sources[i], err, err_len);
	if (r == 0 && err_len)
		err[0] = '\0';
	return r;
}

/* ---- the config file: conffile.c reads it into these two ---------------- */

struct file_ctx {
	struct rngfeed_config *cfg;
	char where[CONFIG_PATH_LEN + 16]; /* "FILE:LINE" being read */
};

static struct source_config *file_source(void *ctx, const char *name)
{
	return config_source(((struct file_ctx *)ctx)->cfg, name);
}

static int file_set(void *ctx, const char *key, const char *value, char *err,
		    size_t err_len)
{
	struct file_ctx *fc = ctx;
	int r = config_set(fc->cfg, key, value, err, err_len);

	/* A user name is looked up later (main.c): its error still names
	 * this line. */
	if (r == 0 && strcmp(key, "user") == 0)
		snprintf(fc->cfg->user_from, sizeof(fc->cfg->user_from), "%s",
			 fc->where);
	else if (r == 0 && strcmp(key, "egd-owner") == 0)
		snprintf(fc->cfg->egd_owner_from,
			 sizeof(fc->cfg->egd_owner_from), "%s", fc->where);
	return r;
}

int config_load_file(struct rngfeed_config *cfg, const char *path,
		     char *err, size_t err_len)
{
	struct file_ctx fc = { .cfg = cfg };
	const struct conffile_target target = {
		.ctx = &fc,
		.source = file_source,
		.set = file_set,
		.where = fc.where,
		.where_len = sizeof(fc.where),
	};

	return conffile_load(path, &target, err, err_len);
}
