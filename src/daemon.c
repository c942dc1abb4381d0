// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon: set-up as named steps, the loop, and teardown in exact
 * reverse of the steps that ran.
 *
 *   reader threads ──tested raw blocks──▶ conditioner (CTR_DRBG + ledger)
 *        ▲ request                                 │ generate
 *        └──────────── main loop ◀─────────────────┘
 *                         │ output: kernel / bench-fill / stdout / test
 *
 * The main loop is one thread: it alone touches the conditioner, the
 * output and the kernel, so none of them needs a lock.  It sleeps in
 * poll(2) on a signalfd, an eventfd the readers poke and the uevent
 * socket that announces a VM generation change.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/confidential.h"
#include "rngfeed/daemon.h"
#include "rngfeed/detach.h"
#include "rngfeed/drbg.h"
#include "rngfeed/file_ledger.h"
#include "rngfeed/file_ledger_setup.h"
#include "rngfeed/egd_server.h"
#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_record.h"
#include "rngfeed/log.h"
#include "rngfeed/output.h"
#include "rngfeed/pidfile.h"
#include "rngfeed/privs.h"
#include "rngfeed/report.h"
#include "rngfeed/service.h"
#include "rngfeed/sourceset.h"
#include "rngfeed/util.h"
#include "rngfeed/vmgenid.h"

struct daemon {
	struct rngfeed_config *cfg;
	int argc;
	char **argv;

	struct kernel_linux kernel;
	struct kernel_ops kops;
	struct feeder_params feeder_params;
	struct pidfile pidfile;        /* -p */
	int verdict_fd;                /* detached: to the waiting parent */
	struct conditioner *cond;
	struct source_set *set;
	int sigfd, evfd, genfd;
	const struct output_ops *ops;
	struct output out;
	struct report report;
	struct service service;
	struct egd_server *egd;        /* --egd-server; NULL = none */
	struct confidential_result found; /* what detection saw at start */
	struct pollfd *pfd;            /* with egd: 4 + its fds; else NULL */

	double start;
	uint8_t block[MONITOR_BLOCK_BYTES]; /* a block on its way in */
	unsigned int held_from;             /* the slot of the held block */
	bool stop;
	int exit_code;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct report_view view(const struct daemon *d)
{
	return (struct report_view){
		.mode = d->cfg->mode,
		.sample = d->cfg->mode == MODE_TEST ? &d->out.sample : NULL,
		.set = d->set,
		.cond = d->cond,
		.feeder = &d->out.feeder,
		.egd = d->egd,
	};
}

/* ---- set-up steps ----------------------------------------------------------- */

/* The kernel's random device, in daemon mode only; the pacing either way. */
static int kernel_up(struct daemon *d)
{
	struct feeder_params *fp = &d->feeder_params;
	unsigned int major = 0, minor = 0;
	struct utsname u;
	char why[300];
	int r;

	*fp = (struct feeder_params){
		.interval_s = (unsigned int)d->cfg->interval,
		.step = (size_t)d->cfg->random_step,
		.modern_kernel = true, /* unknown: never wait on POLLOUT */
	};
	if (uname(&u) == 0 &&
	    kernel_release_parse(u.release, &major, &minor) == 0)
		fp->modern_kernel = kernel_release_is_modern(major, minor);
	if (d->cfg->mode != MODE_DAEMON)
		return 0;
	r = kernel_linux_open(&d->kernel, &d->kops, d->cfg->random_device,
			      why, sizeof(why));
	if (r < 0) {
		log_err("%s", why);
		if (r == -ENOTTY) /* -o names something else: bad input */
			d->exit_code = EXIT_USAGE;
		return r;
	}
	if (!fp->modern_kernel) {
		r = kernel_set_watermark((unsigned int)d->cfg->fill_watermark);
		if (r < 0)
			log_warn("cannot set write_wakeup_threshold: %s",
				 strerror(-r));
	}
	log_info("feeding %s; kernel %u.%u: %s", d->cfg->random_device, major,
		 minor,
		 fp->modern_kernel ? "top up on a timer once the CRNG is ready"
				   : "feed when the kernel asks (POLLOUT)");
	return 0;
}

static void kernel_down(struct daemon *d)
{
	kernel_linux_close(&d->kernel);
}

/* Detach before any thread exists (fork keeps only the calling thread)
 * and before locking memory (locks are not inherited by a child).  The
 * parent exits with the start-up's verdict (detach.h). */
static int detach_up(struct daemon *d)
{
	if (d->cfg->mode != MODE_DAEMON || d->cfg->foreground)
		return 0;
	d->verdict_fd = detach_start(d->sigfd);
	if (d->verdict_fd < 0)
		log_err("cannot detach: %s", strerror(-d->verdict_fd));
	return d->verdict_fd < 0 ? d->verdict_fd : 0;
}

static int pidfile_up(struct daemon *d)
{
	char why[CONFIG_PATH_LEN + 100];
	int r;

	if (!d->cfg->pid_file[0])
		return 0;
	/* -D's user may not write the file's directory: a keeper. */
	r = pidfile_open(&d->pidfile, d->cfg->pid_file, getpid(),
			 d->cfg->user[0] != '\0', why, sizeof(why));
	if (r < 0) {
		log_err("%s", why);
		if (r == -EINVAL) /* not a PID file: bad usage */
			d->exit_code = EXIT_USAGE;
		return r;
	}
	if (why[0])
		log_warn("%s", why);
	return 0;
}

static void pidfile_down(struct daemon *d)
{
	pidfile_close(&d->pidfile, d->cfg->pid_file);
}

/*
 * The DRBG's state lives in libgcrypt's secure pool, locked in RAM so
 * that it never reaches swap.  Where it cannot be locked (a container
 * without CAP_IPC_LOCK, ulimit -l 0) say what to change; run anyway only
 * if the administrator accepted that.  After the detach: a child does
 * not inherit the parent's locks.
 */
static int secure_memory_up(struct daemon *d)
{
	char why[200];
	int r = drbg_library_init_memory(d->cfg->allow_unlocked_memory);

	if (r == -ENOLCK || r == 1)
		privs_describe_memlock(why, sizeof(why));
	if (r == -ENOLCK)
		log_err("cannot lock the CTR_DRBG's secure memory (%u KiB) in "
			"RAM: %s; give it CAP_IPC_LOCK (systemd-nspawn "
			"--capability=CAP_IPC_LOCK, docker run --cap-add "
			"IPC_LOCK) or a locked-memory limit of %u KiB or more "
			"(ulimit -l; systemd's LimitMEMLOCK=), or run with "
			"--allow-unlocked-memory (the DRBG state may then be "
			"written to swap)",
			DRBG_SECMEM_BYTES / 1024, why, DRBG_SECMEM_BYTES / 1024);
	else if (r == 1)
		log_warn("--allow-unlocked-memory: the CTR_DRBG's state is not "
			 "locked in RAM and may be written to swap: %s",
			 why);
	else if (r < 0)
		log_err("cannot set up libgcrypt: %s", strerror(-r));
	return r < 0 ? r : 0;
}

static int conditioner_up(struct daemon *d)
{
	int r = conditioner_new(&d->cond, NULL);

	if (r < 0)
		log_err("cannot set up the CTR_DRBG: %s", strerror(-r));
	return r;
}

static void conditioner_down(struct daemon *d)
{
	conditioner_free(d->cond);
	d->cond = NULL;
}

/* Is the host the adversary (confidential.h)?  Decided before the
 * sources open: what it provides is credited 0, and a host-backed
 * hw_random device is held at 0 and not handed back. */
static int trust_up(struct daemon *d)
{
	struct confidential_view v;
	char line[CONFIDENTIAL_SEEN_LEN + 160];
	bool on;

	confidential_view_machine(&v);
	confidential_detect(&v, &d->found);
	on = confidential_resolve(d->cfg->confidential_guest, &d->found);
	confidential_describe(d->cfg->confidential_guest, &d->found, line,
			      sizeof(line));
	log_msg(on ? LOG_NOTICE : LOG_INFO, "confidential guest: %s%s", line,
		on ? "; what the host provides is credited 0" : "");
	source_configs_trust(d->cfg->sources, d->cfg->n_sources, on);
	return 0;
}

static void sources_down(struct daemon *d)
{
	sourceset_free(d->set);
	d->set = NULL;
}

/* Probe and open the sources while root: devices are root's, and so is
 * the kernel's hw_random credit the set takes over. */
static int sources_up(struct daemon *d)
{
	const struct rngfeed_config *cfg = d->cfg;
	char record[256];
	struct sourceset_params p = {
		.retry_delay = cfg->retry_delay,
		.retry_max = cfg->retry_max,
		.max_failures = (unsigned int)cfg->max_failures,
		.assess_samples = (size_t)cfg->assess_samples,
		.assess_budget = cfg->assess_budget / 100.0,
		.wait_for_source = cfg->wait_for_source,
		.sources_named = cfg->sources_named,
		.gate_hwrng = cfg->mode == MODE_DAEMON,
		.sysfs_dir = HWRANDOM_SYSFS_DIR,
		.gate_state = hwrng_record_path(record, sizeof(record)),
		/* Only what feeds the kernel spends a file's bytes. */
		.ledger_dir = cfg->mode == MODE_DAEMON ? cfg->state_dir : NULL,
		.gate_lock = HWRNG_LOCK_PATH,
		/* --stdout reseeds from whole blocks back to back: the
		 * readers derive their seed material (issue 20). */
		.bulk = cfg->mode == MODE_STDOUT,
	};
	int r;

	file_ledger_setup(cfg);
	r = sourceset_new(&d->set, cfg, &p);
	if (r < 0)
		return r;
	if (sourceset_open(d->set) == 0) {
		log_err("no usable entropy source (see rngfeed --list; "
			"--wait-for-source keeps trying)");
		sources_down(d);
		return -ENODEV;
	}
	return 0;
}

/* The EGD server's socket, while root (a path in /run, its owner). */
static int egd_up(struct daemon *d)
{
	const struct rngfeed_config *cfg = d->cfg;
	struct egd_server_params p = {
		.addr = cfg->egd_server,
		.mode = (unsigned int)cfg->egd_socket_mode,
		.owner = cfg->egd_owner,
		.max_clients = (unsigned int)cfg->egd_max_clients,
		.per_peer = (unsigned int)cfg->egd_clients_per_peer,
		.rate = (uint64_t)cfg->egd_rate,
		.budget = (uint64_t)cfg->egd_budget,
		.idle_timeout = cfg->egd_idle_timeout,
		.reseed_bytes = (uint64_t)cfg->reseed_bytes,
		.reseed_seconds = cfg->reseed_seconds,
	};
	char why[400];
	int r;

	if (!cfg->egd_server[0] ||
	    (cfg->mode != MODE_DAEMON && cfg->mode != MODE_EGD))
		return 0;
	d->pfd = calloc(4 + EGD_POLL_MAX, sizeof(*d->pfd));
	if (!d->pfd)
		return -ENOMEM;
	r = egd_server_new(&d->egd, &p, why, sizeof(why));
	if (r < 0) {
		log_err("%s", why);
		free(d->pfd);
		d->pfd = NULL;
	}
	return r;
}

static void egd_down(struct daemon *d)
{
	egd_server_free(d->egd);
	d->egd = NULL;
	free(d->pfd);
	d->pfd = NULL;
}

static void signals_down(struct daemon *d)
{
	if (d->genfd >= 0)
		close(d->genfd);
	if (d->evfd >= 0)
		close(d->evfd);
	if (d->sigfd >= 0)
		close(d->sigfd);
	d->genfd = d->evfd = d->sigfd = -1;
}

/* Signals as a signalfd, the readers' eventfd and the uevent socket.  A
 * step that fails undoes itself; its down() runs only after success. */
static int signals_up(struct daemon *d)
{
	sigset_t mask;
	int r;

	/* A shell without job control starts background programs with
	 * SIGINT ignored: what is ignored never reaches a signalfd. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	/* Readers unblock the wake signal for themselves. */
	sigaddset(&mask, READER_WAKE_SIGNAL);
	r = pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sigdelset(&mask, READER_WAKE_SIGNAL);
	if (r == 0) {
		d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
		d->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		r = d->sigfd < 0 || d->evfd < 0 ? -errno
						 : reader_setup_signals();
	} else {
		r = -r;
	}
	if (r < 0) {
		log_err("cannot set up signals: %s", strerror(-r));
		signals_down(d);
		return r;
	}
	signal(SIGPIPE, SIG_IGN);
	d->genfd = vmgenid_open();
	if (d->genfd < 0)
		log_info("VM generation changes will go unnoticed (uevent "
			 "socket: %s); SIGUSR2 discards the DRBG state by hand",
			 strerror(-d->genfd));
	return 0;
}

/*
 * Everything that needs root is open: from here on only RNDADDENTROPY
 * needs a privilege.  Before any thread exists, as capabilities are per
 * thread; privs_drop() verifies what it did.
 */
static int privileges_up(struct daemon *d)
{
	char why[300];
	int r;

	r = privs_drop(d->cfg->user, d->cfg->mode == MODE_DAEMON, why,
		       sizeof(why));
	if (r < 0) {
		log_err("cannot drop privileges: %s", why);
		return r;
	}
	/* No core dumps and no ptrace by other processes of the same user:
	 * memory holds DRBG state and raw input.  (Switching user cleared
	 * the flag already; this covers staying root, and --dumpable.) */
	if (prctl(PR_SET_DUMPABLE, d->cfg->dumpable ? 1L : 0L, 0L, 0L, 0L) < 0)
		log_warn("cannot set the dumpable flag: %s", strerror(errno));
	return 0;
}

/* The first thread: the log writer (log.h), with the capabilities left
 * after the drop.  Lines logged before it waited in its queue. */
static int log_writer_up(struct daemon *d)
{
	int r = log_writer_start();

	(void)d;
	if (r < 0)
		log_err("cannot start the log writer: %s", strerror(-r));
	return r;
}

static int readers_up(struct daemon *d)
{
	if (sourceset_start(d->set, d->evfd) == 0) {
		log_err("no entropy source could be started");
		return -ENODEV;
	}
	if (d->cfg->mode == MODE_DAEMON && !sourceset_any_credit(d->set))
		log_warn("no source in use has a credit above 0: the kernel "
			 "gets one uncredited step every %lld s and no "
			 "entropy credit",
			 d->cfg->interval);
	return 0;
}

static void readers_down(struct daemon *d)
{
	sourceset_stop(d->set);
}

/* The power-on self-test runs while the readers fetch their first blocks
 * (at early boot a slow device takes tens of ms for one); nothing they
 * read is used before it has passed. */
static int selftest_up(struct daemon *d)
{
	int r = drbg_selftest();

	(void)d;
	if (r < 0)
		log_err("CTR_DRBG power-on self-test failed (%s); refusing to "
			"start",
			strerror(-r));
	return r;
}

static int output_up(struct daemon *d)
{
	double now = now_s();
	int r;

	d->ops = d->cfg->mode == MODE_EGD ? &egd_server_output
					  : output_ops_for(d->cfg);
	r = output_init(&d->out, d->cfg, d->cond, d->set,
			d->cfg->mode == MODE_DAEMON ? &d->kops : NULL,
			&d->feeder_params, now);
	if (r < 0)
		return r;
	/* Already seeded (the usual case after early boot): say so, and
	 * still top up once soon. */
	if (d->cfg->mode == MODE_DAEMON &&
	    feeder_check_ready(&d->out.feeder, &d->kops, now) == 1) {
		log_info("kernel CRNG is ready already; topping it up");
		d->out.feeder.next_topup = now;
		feeder_kernel_asks(&d->out.feeder);
	}
	report_init(&d->report, d->start);
	service_init(&d->service, now);
	return 0;
}

static void output_down(struct daemon *d)
{
	output_fini(&d->out);
}

static const struct step {
	const char *name;
	int (*up)(struct daemon *d);
	void (*down)(struct daemon *d); /* NULL: nothing to undo */
} steps[] = {
	/* First, so that a signal during start-up waits for the loop
	 * instead of killing a half-started daemon (SIGHUP's default). */
	{ "signals", signals_up, signals_down },
	{ "kernel", kernel_up, kernel_down },
	{ "detach", detach_up, NULL },
	{ "pid file", pidfile_up, pidfile_down },
	{ "secure memory", secure_memory_up, NULL },
	{ "conditioner", conditioner_up, conditioner_down },
	{ "trust", trust_up, NULL },
	{ "sources", sources_up, sources_down },
	{ "egd server", egd_up, egd_down },
	{ "privileges", privileges_up, NULL },
	{ "log writer", log_writer_up, NULL }, /* log_finish() at the end */
	{ "readers", readers_up, readers_down },
	{ "self-test", selftest_up, NULL },
	{ "output", output_up, output_down },
};

#define N_STEPS (sizeof(steps) / sizeof(steps[0]))

/* ---- the loop --------------------------------------------------------------- */

/* Tested blocks into the conditioner: a part at a time while the output
 * wants credited data (each credit backed by its own reseed), otherwise
 * whatever is waiting, whole, for as long as the output says a reseed is
 * due (--stdout: one block per limit, the next stays with its reader). */
static void absorb(struct daemon *d, bool in_parts, double now)
{
	uint8_t seed[DRBG_SEEDLEN];
	unsigned int credit;
	bool derived;

	for (;;) {
		if (d->ops->absorb_due && !d->ops->absorb_due(&d->out, now))
			break;
		if (!conditioner_holding(d->cond)) {
			if (!sourceset_take_derived(d->set, d->block,
						    &d->held_from, &credit,
						    seed, &derived))
				break;
			conditioner_hold_derived(d->cond, d->held_from, credit,
						 d->block,
						 derived ? seed : NULL);
			explicit_bzero(d->block, sizeof(d->block));
			explicit_bzero(seed, sizeof(seed));
		}
		if (in_parts && conditioner_available(d->cond))
			break;
		bool was_seeded = conditioner_seeded(d->cond);

		if (conditioner_absorb(d->cond, in_parts) == 1 && !was_seeded)
			log_info("CTR_DRBG instantiated from a tested %s block",
				 sourceset_config(d->set, d->held_from)->driver->name);
	}
}

/*
 * Forget the DRBG state, what the ledger credited to it, and the tested
 * blocks waiting in the readers: a copy of this VM holds the same.  The
 * next tested block instantiates a fresh DRBG.
 */
static void discard_state(struct daemon *d, const char *why)
{
	log_notice("%s: discarding the DRBG state and waiting blocks", why);
	conditioner_discard(d->cond);
	if (d->egd)
		egd_server_discard(d->egd);
	sourceset_discard(d->set);
}

/* SIGHUP: new configuration and sources; the conditioner and counters
 * stay.  Not inlined: its 18 KB configuration would sit in the frame of
 * every loop turn and push the steady state's calls that much deeper
 * into the stack (issue 20: private memory). */
static __attribute__((noinline)) void reload(struct daemon *d)
{
	struct rngfeed_config fresh;
	char err[512];

	if (config_parse_args(&fresh, d->argc, d->argv, err, sizeof(err)) < 0) {
		log_err("SIGHUP: keeping the old configuration: %s", err);
		return;
	}
	log_notice("SIGHUP: re-reading the configuration and sources%s",
		   d->cfg->user[0] ? " (opened again as the unprivileged "
				     "user: a root-only device needs a restart)"
				   : "");
	/* Settings that shape the running pipeline; the mode, devices and
	 * metrics path stay as started. */
	d->cfg->retry_delay = fresh.retry_delay;
	d->cfg->retry_max = fresh.retry_max;
	d->cfg->max_failures = fresh.max_failures;
	d->cfg->random_step = fresh.random_step;
	d->cfg->interval = fresh.interval;
	d->out.feeder.p.interval_s = (unsigned int)fresh.interval;
	/* confidential-guest may have changed; detection stands. */
	source_configs_trust(fresh.sources, fresh.n_sources,
			     confidential_resolve(fresh.confidential_guest,
						  &d->found));
	if (sourceset_reload(d->set, &fresh, d->evfd) == 0)
		log_err("no usable entropy source after SIGHUP; retrying "
			"on the next SIGHUP");
}

static void handle_signals(struct daemon *d)
{
	struct report_view v = view(d);
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(d->sigfd, &si, sizeof(si));

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			/* Deaf to SIGTERM from here on, and poll would say
			 * "readable" for ever: stop now instead. */
			log_err("reading signals: %s; stopping", strerror(errno));
			d->exit_code = EXIT_FAILURE;
			d->stop = true;
		}
		if (n != sizeof(si))
			break;
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info("%s: stopping", strsignal((int)si.ssi_signo));
			d->stop = true;
			break;
		case SIGUSR1:
			report_rates(&d->report, &v, now_s());
			report_summary(&d->report, &v, now_s());
			if (d->egd)
				egd_server_log_summary(d->egd);
			break;
		case SIGUSR2:
			/* An explicit request (e.g. after restoring a VM
			 * snapshot without vmgenid). */
			discard_state(d, "SIGUSR2");
			break;
		case SIGHUP:
			reload(d);
			break;
		}
	}
}

/* Rates (-t), metrics, READY/STATUS and the watchdog; seconds until the
 * next is due. */
static double housekeeping(struct daemon *d, double now)
{
	struct report_view v = view(d);
	struct report_params p = {
		.metrics_path = d->cfg->metrics_path,
		.rates_interval = d->cfg->mode == MODE_TEST
					  ? d->cfg->stats_interval
					  : 0,
		.ready_timeout = d->cfg->ready_timeout,
	};

	double hw = sourceset_tick(d->set, now, d->genfd >= 0);

	return fmin(hw, report_tick(&d->report, &v, &p, &d->service, now));
}

static int timeout_ms(double wait_s)
{
	if (wait_s <= 0)
		return 0;
	return (int)ceil(fmin(wait_s, 3600) * 1000);
}

/* Sleep until something happens or @wait_s, and dispatch it.  false on a
 * fatal poll error. */
static bool poll_dispatch(struct daemon *d, double wait_s)
{
	struct pollfd own[4] = {
		{ .fd = d->sigfd, .events = POLLIN },
		{ .fd = d->evfd, .events = POLLIN },
		/* A negative fd is ignored by poll(2). */
		{ .fd = d->genfd, .events = POLLIN },
		{ .fd = d->out.waiting_pollout  ? d->kernel.fd
			: d->out.stdout_blocked ? STDOUT_FILENO
						: -1,
		  .events = POLLOUT },
	};
	/* The EGD server's fds follow, in an array of their own size. */
	struct pollfd *pfd = d->egd ? d->pfd : own;
	size_t n = 4;
	uint64_t v;

	if (d->egd) {
		memcpy(pfd, own, sizeof(own));
		n += egd_server_pollfds(d->egd, pfd + 4, EGD_POLL_MAX);
	}
	if (poll(pfd, n, timeout_ms(wait_s)) < 0 && errno != EINTR) {
		log_err("poll: %s", strerror(errno));
		return false;
	}
	if (pfd[0].revents)
		handle_signals(d);
	/* Not a semaphore: one read takes the whole count. */
	if (pfd[1].revents)
		(void)!read(d->evfd, &v, sizeof(v));
	if (pfd[2].revents && vmgenid_drain(d->genfd) > 0)
		discard_state(d, "VM generation changed (snapshot restored "
				 "or VM cloned)");
	/* Any uevent may be a hw_random driver that bound or unbound. */
	if (pfd[2].revents)
		sourceset_devices_changed(d->set);
	if (pfd[3].revents && d->out.stdout_blocked) {
		d->out.stdout_blocked = false; /* room, or an error to see */
	} else if (pfd[3].revents & POLLOUT) {
		d->out.waiting_pollout = false;
		feeder_kernel_asks(&d->out.feeder);
	}
	if (d->egd)
		egd_server_events(d->egd, pfd + 4, n - 4, now_s());
	return true;
}

/* wants → absorb → request → step → poll → dispatch.  Every turn polls,
 * so a signal is seen within one step however busy the output is.  The
 * readers are asked before the step, so they read while it works (a
 * --stdout batch is one reseed's worth: asked after it, the next
 * reseed's block came late). */
static void loop(struct daemon *d)
{
	while (!d->stop) {
		double now = now_s(), wait = 3600;
		bool want = d->ops->wants(&d->out, now, &wait);
		int r;

		/* The EGD server takes blocks only in turns where the kernel
		 * output wants none (the kernel comes first); what it asked
		 * for is its own. */
		bool egd_claims = d->egd && egd_server_turn(d->egd, d->set,
							    want, now);

		if (!egd_claims)
			absorb(d, want && d->ops->in_parts, now);
		if (want)
			sourceset_request(d->set, d->out.credited_only);
		r = d->ops->step(&d->out, want, now, &wait);
		if (r < 0)
			break;
		if (d->egd && egd_server_step(d->egd, now, &wait) > 0)
			r = 1;
		if (r > 0)
			wait = 0;
		wait = fmin(wait, housekeeping(d, now));
		if (!poll_dispatch(d, wait)) {
			d->exit_code = EXIT_FAILURE;
			break;
		}
	}
	if (d->out.exit_code)
		d->exit_code = d->out.exit_code;
}

/* The end of a run: what it did, while the sources still show it. */
static void finish(struct daemon *d)
{
	struct report_view v = view(d);
	double now = now_s();

	service_stopping(&d->service);
	if (d->cfg->mode == MODE_DAEMON)
		feeder_check_ready(&d->out.feeder, &d->kops, now);
	if (d->cfg->metrics_path[0])
		(void)report_metrics(&d->report, &v, d->cfg->metrics_path, now);
	sourceset_stop(d->set);
	if (d->cfg->mode != MODE_STDOUT || d->cfg->verbosity > 1)
		report_summary(&d->report, &v, now);
	if (d->egd)
		egd_server_log_summary(d->egd);
	/* For the benchmark scripts, whatever the verbosity. */
	if (d->cfg->bench_fill > 0)
		log_plain("bench-fill: seconds=%.3f calls=%llu bytes=%llu "
			  "credited_bits=%llu",
			  now - d->start,
			  (unsigned long long)d->out.feeder.calls,
			  (unsigned long long)d->out.feeder.fed_bytes,
			  (unsigned long long)d->out.feeder.credited_bits);
}

/* After the run ends (SIGTERM seen, or start-up stopped), the log writer
 * may write what waits until this many seconds have passed, less when it
 * is stalled: the stop keeps within its second. */
#define DAEMON_LOG_UNTIL_S 0.8

int daemon_run(struct rngfeed_config *cfg, int argc, char **argv)
{
	struct daemon *d = calloc(1, sizeof(*d));
	size_t up = 0;
	int ret = EXIT_FAILURE;
	double ended;

	if (!d)
		return EXIT_FAILURE;
	/* From here on no line waits on the log stream. */
	log_queue_begin();
	*d = (struct daemon){
		.cfg = cfg, .argc = argc, .argv = argv,
		.pidfile = PIDFILE_NONE, .verdict_fd = -1,
		.sigfd = -1, .evfd = -1, .genfd = -1, .kernel = { .fd = -1 },
		.start = now_s(),
	};
	while (up < N_STEPS && steps[up].up(d) == 0)
		up++;
	if (up == N_STEPS) {
		detach_verdict(&d->verdict_fd, EXIT_SUCCESS);
		loop(d);
		ended = now_s();
		finish(d);
		ret = d->exit_code ? d->exit_code : EXIT_SUCCESS;
	} else {
		ended = now_s();
		log_debug("start-up stopped at step '%s'", steps[up].name);
		if (d->exit_code)
			ret = d->exit_code;
		detach_verdict(&d->verdict_fd, ret);
	}
	/* Only the steps that ran are undone, in reverse. */
	while (up-- > 0)
		if (steps[up].down)
			steps[up].down(d);
	explicit_bzero(d, sizeof(*d));
	free(d);
	log_finish(ended + DAEMON_LOG_UNTIL_S);
	return ret;
}
