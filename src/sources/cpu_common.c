// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cpu_common.h"
#include "rngfeed/util.h"

/* The retry budgets per instruction are cpu_insn_default_tries()'s. */
#define TRIES_MAX 1000000

const char *const cpu_source_keys[] = { "tries", "force", NULL };
const char *const cpu_source_tries_keys[] = { "tries", NULL };

static bool forced(const struct source_config *cfg)
{
	const char *v = source_config_get(cfg, "force");

	return v && parse_bool(v) == 1;
}

int cpu_source_probe(enum cpu_insn insn, const struct source_config *cfg,
		     char *why, size_t why_len)
{
	int r = forced(cfg) ? cpu_insn_probe_forced(insn, why, why_len)
			    : cpu_insn_probe(insn, why, why_len);

	return r > 0 ? 0 : r;
}

int cpu_source_check_option(const char *key, const char *value, char *err,
			    size_t err_len)
{
	if (strcmp(key, "force") == 0)
		return source_check_bool(key, value, err, err_len);
	return source_check_uint(key, value, 1, TRIES_MAX, err, err_len);
}

int cpu_source_config_warning(enum cpu_insn insn,
			      const struct source_config *cfg, char *buf,
			      size_t len)
{
	/* Only when the instruction really is used against CPUID. */
	if (!forced(cfg))
		return 0;
	return cpu_insn_probe_forced(insn, buf, len) == 1;
}

int cpu_source_open(enum cpu_insn insn, const struct source_config *cfg,
		    void **state, char *why, size_t why_len)
{
	struct cpu_rng *c;
	const char *tries = source_config_get(cfg, "tries");
	long long n = cpu_insn_default_tries(insn);
	cpu_insn_fn fn;
	int r;

	if (tries && parse_ll(tries, 1, TRIES_MAX, &n) < 0) {
		snprintf(why, why_len,
			 "%s: tries must be an integer from 1 to %d",
			 cfg->driver->name, TRIES_MAX);
		return -EINVAL;
	}
	r = cpu_source_probe(insn, cfg, why, why_len);
	if (r < 0)
		return r;
	/* A usable instruction of this build's architecture has one. */
	fn = cpu_insn_function(insn);
	if (!fn) {
		snprintf(why, why_len, "%s: not built for this CPU",
			 cfg->driver->name);
		return -ENOTSUP;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->insn = fn;
	c->max_tries = (unsigned int)n;
	*state = c;
	return 0;
}

ssize_t cpu_source_read(void *state, void *buf, size_t len)
{
	return cpu_rng_fill(state, buf, len);
}

void cpu_source_close(void *state)
{
	if (!state)
		return;
	explicit_bzero(state, sizeof(struct cpu_rng));
	free(state);
}
