// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon: set-up as named steps, the loop (daemon_loop.c), and
 * teardown in exact reverse of the steps that ran.
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
#include "daemon_internal.h"

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
		daemon_loop(d);
		ended = now_s();
		daemon_finish(d);
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
