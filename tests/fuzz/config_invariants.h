/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a successfully parsed configuration promises (config.h, source.h),
 * checked by fuzz_config and fuzz_options.
 */
#ifndef RNGFEED_TESTS_FUZZ_CONFIG_INVARIANTS_H
#define RNGFEED_TESTS_FUZZ_CONFIG_INVARIANTS_H

#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "rngfeed/assessor.h"
#include "rngfeed/config.h"
#include "rngfeed/egd_server.h"
#include "rngfeed/source.h"

static bool fuzz_driver_has_key(const struct source_driver *drv,
				const char *key)
{
	for (const char *const *k = drv->option_keys; k && *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

static __attribute__((unused)) void
fuzz_check_source_config(const struct source_config *sc)
{
	const struct source_driver *drv = sc->driver;

	FUZZ_ASSERT(drv != NULL);
	FUZZ_ASSERT(source_driver_index(drv) >= 0);
	FUZZ_ASSERT(sc->credit == -1 ||
		    (sc->credit >= 0 && sc->credit <= (int)SOURCE_CREDIT_MAX));
	FUZZ_ASSERT(source_config_credit(sc) <= SOURCE_CREDIT_MAX);
	/* min-entropy: 0 (the driver's) or above 0 and at most sample_bits */
	FUZZ_ASSERT(sc->min_entropy == 0 ||
		    (isfinite(sc->min_entropy) && sc->min_entropy > 0 &&
		     sc->min_entropy <= drv->sample_bits));
	FUZZ_ASSERT(source_config_min_entropy(sc) > 0);
	/* The credit rule and the floor under H (source.h). */
	FUZZ_ASSERT(sc->min_entropy == 0 ||
		    sc->min_entropy >= source_min_entropy_floor(drv->sample_bits));
	FUZZ_ASSERT(source_config_credit(sc) <= source_credit_cap(sc));
	FUZZ_ASSERT(sc->n_options <= SOURCE_MAX_OPTIONS);
	const char *past = NULL;
	for (unsigned int i = 0; i < sc->n_options; i++) {
		const char *value = NULL, *other;
		const char *key = source_config_option(sc, i, &value);

		FUZZ_ASSERT(key != NULL && value != NULL);
		FUZZ_ASSERT(value + strlen(value) < sc->options +
						      sizeof(sc->options));
		FUZZ_ASSERT(strlen(key) < SOURCE_OPTION_KEY_LEN);
		FUZZ_ASSERT(strlen(value) < SOURCE_OPTION_VALUE_LEN);
		FUZZ_ASSERT(value[0] != '\0');
		/* Parsed keys are not kept as text; the rest are known. */
		FUZZ_ASSERT(strcmp(key, "credit") != 0);
		FUZZ_ASSERT(strcmp(key, "enable") != 0);
		FUZZ_ASSERT(strcmp(key, "min-entropy") != 0);
		if (strcmp(key, "device") == 0) {
			FUZZ_ASSERT(drv->flags & SOURCE_F_DEVICE);
			FUZZ_ASSERT(source_path_is_kernel_output(value) != 1);
		} else {
			FUZZ_ASSERT(fuzz_driver_has_key(drv, key));
		}
		for (unsigned int j = 0; j < i; j++)
			FUZZ_ASSERT(strcmp(source_config_option(sc, j, &other),
					   key) != 0);
		FUZZ_ASSERT(source_config_get(sc, key) == value);
	}
	FUZZ_ASSERT(source_config_option(sc, sc->n_options, &past) == NULL);
	FUZZ_ASSERT(!(drv->flags & SOURCE_F_DEVICE) ||
		    (drv->flags & SOURCE_F_NEEDS_DEVICE) ||
		    source_config_device(sc) != NULL);
}

/* A user credit above what its source's H allows: config_load_file()
 * keeps it, config_parse_args() refuses it once every option is read. */
static __attribute__((unused)) bool
fuzz_credit_above_cap(const struct rngfeed_config *c)
{
	for (size_t i = 0; i < c->n_sources; i++)
		if (c->sources[i].credit > (int)source_credit_cap(&c->sources[i]))
			return true;
	return false;
}

static bool fuzz_seconds_ok(double d, double min_ms, double max_ms)
{
	return isfinite(d) && d * 1000 >= min_ms && d * 1000 <= max_ms;
}

static bool fuzz_path_ok(const char *p, size_t size, bool absolute)
{
	const char *nul = memchr(p, '\0', size);

	if (!nul)
		return false;
	if (nul == p)
		return true; /* "" = not set (metrics, pid-file, user) */
	return !absolute || p[0] == '/';
}

/* The daemon settings (config.c's settings[] table, mirrored). */
static __attribute__((unused)) void
fuzz_check_config(const struct rngfeed_config *c)
{
	FUZZ_ASSERT(fuzz_path_ok(c->config_path, sizeof(c->config_path),
				 false) &&
		    c->config_path[0]);
	FUZZ_ASSERT(fuzz_path_ok(c->random_device, sizeof(c->random_device),
				 true) &&
		    c->random_device[0]);
	FUZZ_ASSERT(fuzz_path_ok(c->metrics_path, sizeof(c->metrics_path),
				 false));
	FUZZ_ASSERT(fuzz_path_ok(c->pid_file, sizeof(c->pid_file), false));
	FUZZ_ASSERT(fuzz_path_ok(c->user, sizeof(c->user), false));
	FUZZ_ASSERT(c->random_step >= 1 && c->random_step <= 4096);
	FUZZ_ASSERT(c->fill_watermark >= 0 && c->fill_watermark <= 4096);
	FUZZ_ASSERT(c->interval >= 1 && c->interval <= 86400);
	FUZZ_ASSERT(c->max_failures >= 1 && c->max_failures <= 1000);
	FUZZ_ASSERT(c->reseed_bytes >= 4096 && c->reseed_bytes <= 1LL << 30);
	FUZZ_ASSERT(fuzz_seconds_ok(c->retry_delay, 10, 86400000));
	FUZZ_ASSERT(fuzz_seconds_ok(c->retry_max, 10, 86400000));
	FUZZ_ASSERT(fuzz_seconds_ok(c->reseed_seconds, 10, 3600000));
	FUZZ_ASSERT(fuzz_seconds_ok(c->stats_interval, 100, 3600000));
	FUZZ_ASSERT(fuzz_path_ok(c->state_dir, sizeof(c->state_dir), true));
	FUZZ_ASSERT(fuzz_seconds_ok(c->ready_timeout, 0, 600000));
	FUZZ_ASSERT(fuzz_path_ok(c->egd_server, sizeof(c->egd_server),
				 false));
	FUZZ_ASSERT(fuzz_path_ok(c->egd_owner, sizeof(c->egd_owner), false));
	/* never world-writable */
	FUZZ_ASSERT(c->egd_socket_mode >= 0 && c->egd_socket_mode <= 0775 &&
		    !(c->egd_socket_mode & 0002));
	FUZZ_ASSERT(c->egd_max_clients >= 1 &&
		    c->egd_max_clients <= EGD_MAX_CLIENTS);
	FUZZ_ASSERT(c->egd_clients_per_peer >= 1 &&
		    c->egd_clients_per_peer <= EGD_MAX_CLIENTS);
	FUZZ_ASSERT(c->egd_rate >= 0 && c->egd_rate <= 1LL << 34);
	FUZZ_ASSERT(c->egd_budget >= 0 && c->egd_budget <= 1LL << 36);
	FUZZ_ASSERT(fuzz_seconds_ok(c->egd_idle_timeout, 0, 86400000));
	FUZZ_ASSERT(fuzz_seconds_ok(c->assess_budget, 10, 100000));
	FUZZ_ASSERT(c->assess_samples >= ASSESSOR_MIN_SAMPLES &&
		    c->assess_samples <= 16000000);
	FUZZ_ASSERT(c->confidential_guest >= -1 &&
		    c->confidential_guest <= 1);
	FUZZ_ASSERT(c->n_sources == source_driver_count() ||
		    c->n_sources == CONFIG_MAX_SOURCES);
	for (size_t i = 0; i < c->n_sources; i++) {
		FUZZ_ASSERT(c->sources[i].driver == source_drivers[i]);
		fuzz_check_source_config(&c->sources[i]);
	}
}

static bool fuzz_source_equal(const struct source_config *x,
			      const struct source_config *y)
{
	if (x->driver != y->driver || x->enabled != y->enabled ||
	    x->credit != y->credit || x->min_entropy != y->min_entropy ||
	    x->guest_owned != y->guest_owned ||
	    x->n_options != y->n_options)
		return false;
	/* The same keys with the same values (a key set again moves to
	 * the end of the packed text, so the order may differ). */
	for (unsigned int j = 0; j < x->n_options; j++) {
		const char *v, *k = source_config_option(x, j, &v);
		const char *w = source_config_get(y, k);

		if (!w || strcmp(v, w))
			return false;
	}
	return true;
}

/* Field-by-field equality of what a config file can set (padding and
 * the pointers of argv-only fields left out). */
static __attribute__((unused)) bool
fuzz_config_equal(const struct rngfeed_config *a,
		  const struct rngfeed_config *b)
{
	if (strcmp(a->random_device, b->random_device) ||
	    strcmp(a->metrics_path, b->metrics_path) ||
	    strcmp(a->pid_file, b->pid_file) || strcmp(a->user, b->user) ||
	    strcmp(a->state_dir, b->state_dir) ||
	    strcmp(a->egd_server, b->egd_server) ||
	    strcmp(a->egd_owner, b->egd_owner) ||
	    a->random_step != b->random_step ||
	    a->fill_watermark != b->fill_watermark ||
	    a->interval != b->interval || a->max_failures != b->max_failures ||
	    a->retry_delay != b->retry_delay || a->retry_max != b->retry_max ||
	    a->reseed_bytes != b->reseed_bytes ||
	    a->reseed_seconds != b->reseed_seconds ||
	    a->stats_interval != b->stats_interval ||
	    a->wait_for_source != b->wait_for_source ||
	    a->dumpable != b->dumpable ||
	    a->allow_unlocked_memory != b->allow_unlocked_memory ||
	    a->ready_timeout != b->ready_timeout ||
	    a->egd_socket_mode != b->egd_socket_mode ||
	    a->egd_max_clients != b->egd_max_clients ||
	    a->egd_clients_per_peer != b->egd_clients_per_peer ||
	    a->egd_rate != b->egd_rate || a->egd_budget != b->egd_budget ||
	    a->egd_idle_timeout != b->egd_idle_timeout ||
	    a->assess_budget != b->assess_budget ||
	    a->assess_samples != b->assess_samples ||
	    a->confidential_guest != b->confidential_guest ||
	    a->n_sources != b->n_sources)
		return false;
	for (size_t i = 0; i < a->n_sources; i++)
		if (!fuzz_source_equal(&a->sources[i], &b->sources[i]))
			return false;
	return true;
}

#endif
