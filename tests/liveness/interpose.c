// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * interpose.so: the LD_PRELOAD half of make liveness (tests/liveness/run.sh).
 *
 * Every call the daemon's MAIN thread makes to a function that can wait
 * (open, read, write, poll, connect, accept, recv, send, ioctl, fsync,
 * sleeps, getrandom, thread joins, syslog, the stdio that reaches fds
 * 0-2, ...) is keyed by its call site: the offsets in the rngfeed
 * executable of the first two return addresses on the stack that lie in
 * it (the call itself and its caller when rngfeed makes it, the rngfeed
 * call into a library such as sd_notify() when the library makes it).
 * Other threads pass straight through, except for the stalls and the
 * credit count below.
 *
 * Environment (all optional; with none of them set the library only
 * counts credit):
 *   LIVENESS_DIR     a private directory for everything below
 *   LIVENESS_SITE    "FUNC:0xAT/0xFROM" the site to act on ("*:*": every
 *                    site, for the signal actions)
 *   LIVENESS_ACTION  block | eintr | eagain | error | sighup | sigusr1 | sigterm
 *   LIVENESS_PHASE   start | steady | reload | stop: act only in that phase
 *   LIVENESS_GEN     act only in the process of that generation (0: the
 *                    one started, 1: a child it forked, ...; default 0;
 *                    "any": in every process but the keeper)
 *   LIVENESS_SOURCE  path of what the file or hwrng source reads
 *   LIVENESS_SYSFS   a fixture standing for /sys/class/misc/hw_random
 *   LIVENESS_STALL   a peer that stops, from when DIR/stall exists:
 *                    source (a reader's read of LIVENESS_SOURCE never
 *                    returns), syslog (every syslog call waits for ever),
 *                    or stderr, stdout, egd, keeper, conffile (stalled by
 *                    the driver for real: the library only notes the calls
 *                    that meet them)
 *   LIVENESS_BLOCK_LOCAL  regular files are blocked too
 *
 * Processes: a fork() makes a new generation (the daemon that detaches is
 * generation 1, its parent 0); the PID file's keeper (it names itself
 * rngfeed-pidfile) is left alone.  Each process writes "PID PPID GEN" to
 * DIR/procs and its PID to DIR/gen.GEN, the keeper "PID keeper" and its
 * PID to DIR/keeper.
 *
 * Phases: the driver creates DIR/phase.steady, phase.reload and
 * phase.stop as it goes; the library looks for the next one on each
 * main-thread call (one access(2)), so it knows which phase a call is in.
 *
 * Files written in DIR:
 *   sites   one line per distinct (phase, function, site, generation) the
 *           main thread reached: "PHASE FUNC SITE CLASS VIA GEN WHAT",
 *           CLASS the strongest seen there (wait > sysfs > local > bounded
 *           > nonblock > nowait), VIA direct (rngfeed made the call) or lib
 *   hit     "FUNC SITE ACTION EPOCH KIND" when the action is taken
 *   met     in a stall: "FUNC SITE KIND THREAD", each distinct call (any
 *           thread: main or other) that met the stalled peer
 *   credit  one line per RNDADDENTROPY from any thread: "BITS RAWBYTES",
 *           the bits it credited and the bytes of LIVENESS_SOURCE read by
 *           any thread before it
 *   log     what the daemon sent to syslog, one "rngfeed: " line each (a
 *           syslog daemon's file: the machine's syslog gets it too)
 *
 * Classes (what a call could wait on, judged from its arguments):
 *   wait     something outside the process: an open without O_NONBLOCK
 *            of a FIFO, socket or device (not the hw_random device, whose
 *            open never waits); I/O on a blocking FIFO, socket, device or
 *            anonymous fd; connect/accept on a blocking socket; poll with
 *            a non-zero timeout; a sleep of 1 s or more; getrandom without
 *            GRND_NONBLOCK or GRND_INSECURE; thread joins and condition
 *            waits; getaddrinfo of a name; fcntl F_SETLKW; syslog (its
 *            socket fills when the syslog daemon stops reading).
 *   sysfs    a read or write of a /sys file (or of LIVENESS_SYSFS's): a
 *            device attribute, whose kernel side may wait on the driver
 *            (hw_random's rng_mutex while a device initialises or a read
 *            holds it).  Opening one never waits.
 *   local    regular files and directories (the disk) and /proc: never
 *            blocked unless LIVENESS_BLOCK_LOCAL=1, but faults are injected.
 *   bounded  a sleep under 1 s, a timed wait: never blocked.
 *   nonblock it would wait but was made not to (O_NONBLOCK on a FIFO,
 *            socket, device or eventfd; MSG_DONTWAIT; GRND_NONBLOCK).
 *   nowait   the call cannot wait (timeout 0, GRND_INSECURE, a
 *            signalfd's read, an ioctl on a non-blocking fd, the
 *            kernel's memory devices: /dev/random's ioctls, /dev/null),
 *            or waits on nothing outside: a write to a pipe or socketpair
 *            the daemon made itself (the detach verdict, a byte to the
 *            PID file's keeper: into an empty buffer; reading its answer
 *            waits on the keeper, which may be stopped).
 * A truncate is metadata (local): sysfs ignores it.  The fixture's rng_*
 * files keep their content through a truncate whose write then fails or
 * is blocked, as an attribute keeps its value.
 *
 * "block", at the first call at the site in the phase and every later one
 * there, makes the call meet a peer that never gets ready, by its class:
 *   wait, sysfs  the call waits for ever, as in the kernel: a handled
 *            signal (one not blocked in the thread) runs its handler and
 *            ends the call with EINTR unless the handler has SA_RESTART;
 *            signals the thread blocks (those a signalfd takes) stay
 *            pending and end nothing.  Sleeps end with EINTR on any
 *            handled signal; joins, condition waits and getaddrinfo never.
 *   poll     a poll with a timeout waits that long (a handled signal ends
 *            it with EINTR), and only the signalfds in its set can be
 *            ready: every other fd never is.
 *   nonblock the fd becomes a stalled peer: every read, write, recv,
 *            send and accept on it, at any site, says EAGAIN and no poll
 *            ever reports it ready, until it is closed; a call at the site
 *            on another fd (a new socket each time, getrandom) says EAGAIN.
 * eintr, eagain: the first 3 calls at the site fail with that errno;
 * error: every call at the site fails with EIO (getaddrinfo: EAI_FAIL);
 * sighup, sigusr1, sigterm: the signal is sent to the process just before
 * the call, which then runs normally (with "*:*", before the first call at
 * each site).
 *
 * Calls glibc makes internally (fprintf's write, fopen's open) never
 * reach an interposer; fopen, fprintf and syslog are wrapped themselves.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/random.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

enum cls { NOWAIT, NONBLOCK, BOUNDED, LOCAL, SYSFS, WAIT };
static const char *const cls_name[] = { "nowait", "nonblock", "bounded",
					"local", "sysfs", "wait" };
enum action { ACT_NONE, ACT_BLOCK, ACT_EINTR, ACT_EAGAIN, ACT_ERROR,
	      ACT_SIGHUP, ACT_SIGUSR1, ACT_SIGTERM };
static const char *const act_name[] = { "none", "block", "eintr", "eagain",
					"error", "sighup", "sigusr1", "sigterm" };
static const char *const phase_name[] = { "start", "steady", "reload", "stop" };
#define N_PHASES 4
#define TRANSIENT_FAULTS 3 /* eintr, eagain: the first 3 calls */
#define MAX_SITES 2048
#define MAX_MET 256
#define MAX_FDS 4096
#define MAX_POLL 256

/* How a blocked call ends (wait_forever()). */
enum ending {
	END_RESTART, /* EINTR after a handler without SA_RESTART */
	END_EINTR,   /* EINTR after any handler (sleeps) */
	END_NEVER,   /* never (joins, condition waits, getaddrinfo) */
};

/* Stalls (LIVENESS_STALL). */
enum stall { ST_NONE, ST_SOURCE, ST_SYSLOG, ST_STDERR, ST_STDOUT, ST_EGD,
	     ST_KEEPER, ST_CONFFILE };
static const char *const stall_name[] = { "none", "source", "syslog", "stderr",
					  "stdout", "egd", "keeper",
					  "conffile" };

/*
 * A call site: "0xAT/0xFROM", AT the executable's offset of the call
 * (the first return address on the stack inside rngfeed) and FROM the
 * next one out, so that a helper such as write_all() called from the PID
 * file and from the --stdout output is two sites.  direct: rngfeed made
 * the call itself (not a library on its behalf).
 */
#define KEY_LEN 48
struct key {
	char at[KEY_LEN];
	int direct;
};

/* What the main thread reached, once per (phase, function, key). */
struct site {
	const char *fn;
	char at[KEY_LEN];
	int phase;
	enum cls cls;
};

struct met {
	const char *fn;
	char at[KEY_LEN];
	int main;
};

static struct {
	int ready;
	char dir[PATH_MAX - 64];
	uintptr_t exe_lo, exe_hi, exe_base;
	const char *want_fn;
	char want_at[KEY_LEN];
	int any_site;		/* LIVENESS_SITE "*:*" */
	enum action action;
	int want_phase;		/* -1: any */
	int want_gen;
	int gen;		/* this process's generation */
	int keeper;		/* the PID file's keeper: left alone */
	int phase;		/* main thread's view */
	int acted;		/* calls acted on so far */
	int block_local;
	enum stall stall;
	atomic_int stalled_source;
	char source[PATH_MAX];
	char sysfs[PATH_MAX];
	struct site sites[MAX_SITES];
	size_t n_sites;
	pthread_mutex_t met_lock;
	struct met met[MAX_MET];
	size_t n_met;
	atomic_uchar source_fd[MAX_FDS]; /* fds open on LIVENESS_SOURCE */
	atomic_uchar stalled_fd[MAX_FDS]; /* "block" made it a stalled peer */
	atomic_uchar accepted_fd[MAX_FDS]; /* EGD clients */
	atomic_uchar pair_fd[MAX_FDS];	/* socketpair()s: the keeper's */
	atomic_uchar own_fd[MAX_FDS];	/* pipes and socketpairs: both ends ours */
	atomic_ullong source_bytes;
	pid_t pid;
} L = { .met_lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The fixture's rng_* files stand for sysfs attributes, whose store is
 * whole or not at all; the daemon truncates before it writes (a no-op on
 * sysfs, exact on a file).  What a truncate removed is kept here until
 * the write that follows succeeds, and put back if it fails or is
 * blocked, as the attribute would have kept its value.
 */
static struct {
	char text[64];
	int len; /* -1: nothing kept */
} fixture_saved[MAX_FDS];

static void fixture_restore(int fd)
{
	if (fd < 0 || fd >= MAX_FDS || fixture_saved[fd].len <= 0)
		return;
	(void)!syscall(SYS_pwrite64, fd, fixture_saved[fd].text,
		       fixture_saved[fd].len, 0);
	syscall(SYS_ftruncate, fd, fixture_saved[fd].len);
	fixture_saved[fd].len = 0;
}

static __thread int in_hook;

/* ---- small tools that never go through the wrappers ----------------------- */

static int raw_open(const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
}

static void append_line(const char *name, const char *line)
{
	char path[PATH_MAX];
	int fd;

	if (!L.dir[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", L.dir, name);
	fd = raw_open(path, O_WRONLY | O_CREAT | O_APPEND, 0666);
	if (fd < 0)
		return;
	/* Writable after -D's switch to another user, whatever the umask. */
	syscall(SYS_fchmod, fd, 0666);
	(void)!syscall(SYS_write, fd, line, strlen(line));
	syscall(SYS_close, fd);
}

static double epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "FUNC KEY ACTION EPOCH KIND": the driver times a sigterm case from it. */
static void note_hit(const char *fn, const char *at, const char *act,
		     const char *kind)
{
	char line[200];

	snprintf(line, sizeof(line), "%s %s %s %.6f %s\n", fn, at, act, epoch(),
		 kind);
	append_line("hit", line);
}

static int exists(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", L.dir, name);
	return syscall(SYS_faccessat, AT_FDCWD, path, F_OK) == 0;
}

static void *real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		static const char msg[] = "interpose.so: a libc symbol is missing\n";

		(void)!syscall(SYS_write, 2, msg, sizeof(msg) - 1);
		_exit(127);
	}
	return f;
}

#define REAL(name) \
	static __typeof__(&name) real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(&name))real(#name)

static int exe_range(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	/* The first object is the executable. */
	L.exe_base = info->dlpi_addr;
	L.exe_lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (lo < L.exe_lo)
			L.exe_lo = lo;
		if (lo + ph->p_memsz > L.exe_hi)
			L.exe_hi = lo + ph->p_memsz;
	}
	return 1;
}

/* DIR/procs, and DIR/gen.GEN with the PID alone (the driver reads it
 * with a shell built-in). */
static void note_process(void)
{
	char line[64], name[32];

	snprintf(line, sizeof(line), "%d %d %d\n", (int)getpid(), (int)getppid(),
		 L.gen);
	append_line("procs", line);
	snprintf(name, sizeof(name), "gen.%d", L.gen);
	snprintf(line, sizeof(line), "%d\n", (int)getpid());
	append_line(name, line);
}

__attribute__((constructor)) static void setup(void)
{
	const char *s;
	void *warm[2];

	in_hook = 1;
	L.pid = getpid();
	dl_iterate_phdr(exe_range, NULL);
	s = getenv("LIVENESS_DIR");
	if (s)
		snprintf(L.dir, sizeof(L.dir), "%s", s);
	s = getenv("LIVENESS_SITE");
	if (s && strchr(s, ':')) {
		static char fn[64];

		snprintf(fn, sizeof(fn), "%.*s", (int)(strchr(s, ':') - s), s);
		L.want_fn = fn;
		snprintf(L.want_at, sizeof(L.want_at), "%s", strchr(s, ':') + 1);
		L.any_site = strcmp(fn, "*") == 0;
	}
	s = getenv("LIVENESS_ACTION");
	for (int i = 1; s && i < (int)(sizeof(act_name) / sizeof(act_name[0])); i++)
		if (strcmp(s, act_name[i]) == 0)
			L.action = (enum action)i;
	L.want_phase = -1;
	s = getenv("LIVENESS_PHASE");
	for (int i = 0; s && i < N_PHASES; i++)
		if (strcmp(s, phase_name[i]) == 0)
			L.want_phase = i;
	s = getenv("LIVENESS_GEN");
	L.want_gen = !s ? 0 : strcmp(s, "any") == 0 ? -1 : atoi(s);
	s = getenv("LIVENESS_SOURCE");
	if (s)
		snprintf(L.source, sizeof(L.source), "%s", s);
	s = getenv("LIVENESS_SYSFS");
	if (s && realpath(s, L.sysfs) == NULL)
		L.sysfs[0] = '\0';
	s = getenv("LIVENESS_STALL");
	for (int i = 1; s && i < (int)(sizeof(stall_name) / sizeof(stall_name[0])); i++)
		if (strcmp(s, stall_name[i]) == 0)
			L.stall = (enum stall)i;
	L.block_local = getenv("LIVENESS_BLOCK_LOCAL") != NULL;
	note_process();
	/* backtrace() loads libgcc_s on its first call: not inside a hook. */
	backtrace(warm, 2);
	L.ready = 1;
	in_hook = 0;
}

static int main_thread(void)
{
	return L.ready && !L.keeper && syscall(SYS_gettid) == getpid();
}

static int in_exe(const void *p)
{
	return (uintptr_t)p >= L.exe_lo && (uintptr_t)p < L.exe_hi;
}

/* The call's site (struct key); RA is the wrapper's return address. */
static void call_site(void *ra, struct key *k)
{
	void *frames[64];
	uintptr_t off[2] = { 0, 0 };
	int n = backtrace(frames, 64), found = 0;

	for (int i = 1; i < n && found < 2; i++)
		if (in_exe(frames[i]))
			off[found++] = (uintptr_t)frames[i] - L.exe_base;
	if (found == 0 && in_exe(ra))
		off[found++] = (uintptr_t)ra - L.exe_base;
	k->direct = in_exe(ra);
	snprintf(k->at, sizeof(k->at), "0x%lx/0x%lx", (unsigned long)off[0],
		 (unsigned long)off[1]);
}

static void update_phase(void)
{
	char name[32];

	while (L.phase + 1 < N_PHASES) {
		snprintf(name, sizeof(name), "phase.%s", phase_name[L.phase + 1]);
		if (!exists(name))
			break;
		L.phase++;
	}
}

/* 1 if this (phase, function, site) is new here. */
static int record(const char *fn, const struct key *k, enum cls c,
		  const char *what)
{
	char line[PATH_MAX + 128];
	size_t i;
	int fresh = 0;

	for (i = 0; i < L.n_sites; i++) {
		struct site *s = &L.sites[i];

		if (s->phase == L.phase && strcmp(s->at, k->at) == 0 &&
		    strcmp(s->fn, fn) == 0)
			break;
	}
	if (i < L.n_sites) {
		if (c <= L.sites[i].cls)
			return 0;
		L.sites[i].cls = c; /* a stronger class: said again, last wins */
	} else {
		if (L.n_sites == MAX_SITES)
			return 0;
		L.sites[L.n_sites] = (struct site){ .fn = fn, .phase = L.phase,
						    .cls = c };
		snprintf(L.sites[L.n_sites++].at, KEY_LEN, "%s", k->at);
		fresh = 1;
	}
	snprintf(line, sizeof(line), "%s %s %s %s %s %d %s\n",
		 phase_name[L.phase], fn, k->at, cls_name[c],
		 k->direct ? "direct" : "lib", L.gen, what && what[0] ? what : "-");
	append_line("sites", line);
	return fresh;
}

/* ---- stalls: noting the calls that meet one --------------------------------- */

static int stall_on(enum stall s)
{
	return L.ready && !L.keeper && L.stall == s && L.dir[0] && exists("stall");
}

/* A call at @ra met the stalled peer: said once per (function, site). */
static void note_met(const char *fn, void *ra)
{
	char line[160];
	struct key k;
	int is_main = syscall(SYS_gettid) == getpid();

	in_hook++;
	call_site(ra, &k);
	pthread_mutex_lock(&L.met_lock);
	for (size_t i = 0; i < L.n_met; i++)
		if (strcmp(L.met[i].at, k.at) == 0 && strcmp(L.met[i].fn, fn) == 0 &&
		    L.met[i].main == is_main)
			goto out;
	if (L.n_met < MAX_MET) {
		L.met[L.n_met] = (struct met){ .fn = fn, .main = is_main };
		snprintf(L.met[L.n_met++].at, KEY_LEN, "%s", k.at);
		snprintf(line, sizeof(line), "%s %s %s %s\n", fn, k.at,
			 L.stall == ST_NONE ? "stalled-fd" : stall_name[L.stall],
			 is_main ? "main" : "other");
		append_line("met", line);
	}
out:
	pthread_mutex_unlock(&L.met_lock);
	in_hook--;
}

static int is_fifo_fd(int fd)
{
	struct stat st;

	return syscall(SYS_fstat, fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/*
 * Does a call on @fd meet the stalled peer?  READING 1 a read (or a poll
 * for input), 0 a write.  The driver fills a stalled stdout or stderr
 * pipe, so every write to it meets the stall; a socket write meets it only
 * when it finds no room (stalled_write()).
 */
static int meets_stall(int fd, int reading)
{
	if (fd < 0 || fd >= MAX_FDS)
		return 0;
	if ((L.stall == ST_STDERR && fd == 2 && !reading) ||
	    (L.stall == ST_STDOUT && fd == 1 && !reading))
		return is_fifo_fd(fd) && stall_on(L.stall);
	if ((L.stall == ST_EGD && atomic_load(&L.accepted_fd[fd])) ||
	    (L.stall == ST_KEEPER && atomic_load(&L.pair_fd[fd])))
		return reading && stall_on(L.stall);
	return 0;
}

static void stalled_write(const char *fn, void *ra, int fd, long r, int err)
{
	if (r < 0 && (err == EAGAIN || err == EWOULDBLOCK) && fd >= 0 &&
	    fd < MAX_FDS &&
	    ((L.stall == ST_EGD && atomic_load(&L.accepted_fd[fd])) ||
	     (L.stall == ST_KEEPER && atomic_load(&L.pair_fd[fd]))) &&
	    stall_on(L.stall))
		note_met(fn, ra);
}

/* ---- classifying a call ----------------------------------------------------- */

static void fd_what(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = syscall(SYS_readlinkat, AT_FDCWD, link, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == ' ' || *p == '\n')
			*p = '_';
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return n && strncmp(path, dir, n) == 0 && (path[n] == '/' || !path[n]);
}

/* A sysfs attribute: under /sys, or one of the fixture's rng_* files that
 * stand for hw_random's (not the hand-over's lock the gate keeps beside
 * a fixture, which is /run's on a machine). */
static int sysfs_path(const char *abs)
{
	return under(abs, "/sys") ||
	       (L.sysfs[0] && under(abs, L.sysfs) &&
		strncmp(abs + strlen(L.sysfs), "/rng_", 5) == 0);
}

static int is_signalfd(int fd);

/*
 * How a call on FD can wait; READING: 1 a read, 0 a write, 2 an ioctl.
 * The kernel's memory devices (1:x) never make a caller wait, except a
 * read of /dev/random (1:8) before the CRNG is ready.  On an O_NONBLOCK
 * FIFO, socket, device or eventfd the call says EAGAIN instead of
 * waiting (NONBLOCK), except a signalfd's read: the kernel queues the
 * signal, nothing outside can hold it back.
 */
static enum cls fd_class(int fd, int reading)
{
	struct stat st;
	int fl = (int)syscall(SYS_fcntl, fd, F_GETFL);

	if (fl < 0 || syscall(SYS_fstat, fd, &st) < 0)
		return NOWAIT; /* a bad fd: the call fails at once */
	/* A pipe or socketpair it made itself has its own processes at the
	 * other end (the detach verdict, the PID file's keeper): a write is
	 * a byte or a verdict into an empty buffer.  Reading waits on that
	 * process, which may be stopped. */
	if (fd < MAX_FDS && atomic_load(&L.own_fd[fd]) && reading == 0)
		return NOWAIT;
	if (S_ISREG(st.st_mode) && reading != 2) {
		char what[PATH_MAX];

		fd_what(fd, what, sizeof(what));
		if (sysfs_path(what))
			return SYSFS;
	}
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode))
		return LOCAL;
	if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1)
		return reading == 1 && minor(st.st_rdev) == 8 &&
		       !(fl & O_NONBLOCK) ? WAIT : NOWAIT;
	if (fl & O_NONBLOCK)
		return reading == 2 || is_signalfd(fd) ? NOWAIT : NONBLOCK;
	return WAIT; /* FIFO, socket, other device, anonymous inode */
}

static enum cls path_class(int dirfd, const char *path, int flags)
{
	struct stat st;

	if (syscall(SYS_newfstatat, dirfd, path, &st, 0) < 0)
		return LOCAL; /* created or refused: no wait */
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return LOCAL; /* a sysfs file's open does not wait either */
	if (flags & O_NONBLOCK)
		return NOWAIT;
	/* The memory devices, and hw_random's misc device (10:183), whose
	 * open only checks its flags. */
	if (S_ISCHR(st.st_mode) &&
	    (major(st.st_rdev) == 1 ||
	     (major(st.st_rdev) == 10 && minor(st.st_rdev) == 183)))
		return NOWAIT;
	return WAIT;
}

static enum cls sleep_class(const struct timespec *ts)
{
	return ts && ts->tv_sec >= 1 ? WAIT : BOUNDED;
}

static int is_signalfd(int fd)
{
	char what[64];

	fd_what(fd, what, sizeof(what));
	return strcmp(what, "anon_inode:[signalfd]") == 0;
}

/* ---- blocking as the kernel does ---------------------------------------------- */

/*
 * Wait for ever as a call blocked in the kernel does.  Signals that the
 * thread has blocked stay pending.  A handled one runs its handler here,
 * and then (END_RESTART) the call fails with EINTR unless the handler has
 * SA_RESTART, (END_EINTR) it always does, (END_NEVER) it never does.
 * Returns when the call should fail with EINTR.  Default actions (a
 * SIGKILL, a SIGTERM that is neither blocked nor handled) act as usual.
 */
static void wait_forever(enum ending how)
{
	for (;;) {
		sigset_t cur, handled;
		siginfo_t info;
		int handled_any = 0, sig;

		sigemptyset(&handled);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, 8);
		for (int s = 1; s < NSIG; s++) {
			struct sigaction sa;

			if (sigismember(&cur, s) == 1 || sigaction(s, NULL, &sa) < 0)
				continue;
			if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
				continue;
			sigaddset(&handled, s);
			handled_any = 1;
		}
		if (!handled_any) {
			syscall(SYS_ppoll, NULL, 0, NULL, NULL, 8);
			continue;
		}
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &handled, NULL, 8);
		sig = sigwaitinfo(&handled, &info);
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &cur, NULL, 8);
		if (sig > 0) {
			struct sigaction sa;

			if (sigaction(sig, NULL, &sa) < 0)
				continue;
			if (sa.sa_flags & SA_SIGINFO)
				sa.sa_sigaction(sig, &info, NULL);
			else if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
				sa.sa_handler(sig);
			if (how == END_EINTR ||
			    (how == END_RESTART && !(sa.sa_flags & SA_RESTART)))
				return;
		}
	}
}

/*
 * What to do with this call: 0 go on (after a signal, perhaps), 1 fail
 * with *err, 2 block.  Records the site on the way.
 */
static int decide(const char *fn, void *ra, enum cls c, const char *what,
		  int *err)
{
	struct key k;
	const char *off = k.at;
	int fresh;

	if (in_hook || !main_thread())
		return 0;
	in_hook = 1;
	update_phase();
	call_site(ra, &k);
	fresh = record(fn, &k, c, what);
	in_hook = 0;
	if (L.action == ACT_NONE || !L.want_fn ||
	    (L.want_gen >= 0 && L.gen != L.want_gen))
		return 0;
	if (!L.any_site && (strcmp(k.at, L.want_at) != 0 ||
			    strcmp(fn, L.want_fn) != 0))
		return 0;
	if (L.want_phase >= 0 && L.phase != L.want_phase)
		return 0;
	switch (L.action) {
	case ACT_BLOCK:
		if (c != WAIT && c != NONBLOCK && c != SYSFS &&
		    !(c == LOCAL && L.block_local))
			return 0;
		if (L.acted++ == 0)
			note_hit(fn, off, "block", c == NONBLOCK ? "nonblock"
						 : c == SYSFS  ? "sysfs"
							       : "wait");
		if (c == NONBLOCK) {
			*err = EAGAIN;
			return 1;
		}
		return 2;
	case ACT_EINTR:
	case ACT_EAGAIN:
		/* A library's own error handling is not rngfeed's. */
		if (!k.direct || L.acted >= TRANSIENT_FAULTS)
			return 0;
		/* fall through */
	case ACT_ERROR:
		if (!k.direct)
			return 0;
		if (L.acted++ == 0)
			note_hit(fn, off, act_name[L.action], cls_name[c]);
		*err = L.action == ACT_EINTR ? EINTR
		     : L.action == ACT_EAGAIN ? EAGAIN : EIO;
		return 1;
	default:
		if (L.any_site ? fresh : L.acted == 0) {
			if (L.acted++ == 0)
				note_hit(fn, off, act_name[L.action], cls_name[c]);
			syscall(SYS_kill, getpid(),
				L.action == ACT_SIGHUP ? SIGHUP
				: L.action == ACT_SIGUSR1 ? SIGUSR1 : SIGTERM);
		}
		return 0;
	}
}

static void mark_stalled(int fd)
{
	if (fd >= 0 && fd < MAX_FDS)
		atomic_store(&L.stalled_fd[fd], 1);
}

/* A stalled peer is outside: the main thread sees it stalled; the
 * daemon's own threads on the same fd (readers poking the eventfd) are
 * not its peer. */
static int is_stalled(int fd)
{
	return fd >= 0 && fd < MAX_FDS && atomic_load(&L.stalled_fd[fd]) &&
	       !in_hook && main_thread();
}

/*
 * decide() for calls on an fd.  A blocked call on a non-blocking fd makes
 * that fd a stalled peer; a call on a stalled fd at any site says EAGAIN.
 */
#define FD_CALL(fn, fd, reading, how, fail)                                   \
	do {                                                                  \
		int err_ = 0, d_;                                              \
		char what_[96] = "";                                           \
		enum cls c_ = NOWAIT;                                          \
		if (!in_hook && main_thread()) {                               \
			c_ = fd_class(fd, reading);                            \
			fd_what(fd, what_, sizeof(what_));                     \
		}                                                              \
		d_ = decide(fn, __builtin_return_address(0), c_, what_, &err_); \
		if (d_ == 1 && c_ == NONBLOCK && L.action == ACT_BLOCK)        \
			mark_stalled(fd);                                      \
		if (d_ == 0 && (reading) != 2 && is_stalled(fd)) {             \
			note_met(fn, __builtin_return_address(0));             \
			d_ = 1;                                                \
			err_ = EAGAIN;                                         \
		}                                                              \
		if (d_ == 0 && (reading) != 2 && meets_stall(fd, reading))     \
			note_met(fn, __builtin_return_address(0));             \
		if (d_ == 2)                                                   \
			wait_forever(how);                                     \
		if (d_ == 2)                                                   \
			err_ = EINTR;                                          \
		if (d_ >= 1) {                                                 \
			fixture_restore(fd);                                   \
			errno = err_;                                          \
			return fail;                                           \
		}                                                              \
	} while (0)

/* ---- counting the source's bytes and the credit ----------------------------- */

static void note_open(const char *path, int fd)
{
	char abs[PATH_MAX];

	if (fd < 0 || fd >= MAX_FDS || !L.source[0] || !path)
		return;
	if (realpath(path, abs) && strcmp(abs, L.source) == 0)
		atomic_store(&L.source_fd[fd], 1);
}

static void note_read(int fd, ssize_t n)
{
	if (n > 0 && fd >= 0 && fd < MAX_FDS && atomic_load(&L.source_fd[fd]))
		atomic_fetch_add(&L.source_bytes, (unsigned long long)n);
}

/*
 * LIVENESS_STALL=source: once DIR/stall exists, a reader thread's read of
 * the source never returns, whatever signal it gets (a device read that
 * only a fatal signal ends, as a stuck virtio-rng's).
 */
static void stall_source(int fd, void *ra)
{
	if (in_hook || L.stall != ST_SOURCE || main_thread() || fd < 0 ||
	    fd >= MAX_FDS || !atomic_load(&L.source_fd[fd]) ||
	    !stall_on(ST_SOURCE))
		return;
	if (atomic_exchange(&L.stalled_source, 1) == 0)
		note_hit("source", "-", "stall", "source");
	note_met("read", ra);
	wait_forever(END_NEVER);
}

int close(int fd)
{
	REAL(close);
	if (fd >= 0 && fd < MAX_FDS) {
		atomic_store(&L.source_fd[fd], 0);
		atomic_store(&L.stalled_fd[fd], 0);
		atomic_store(&L.accepted_fd[fd], 0);
		atomic_store(&L.pair_fd[fd], 0);
		atomic_store(&L.own_fd[fd], 0);
	}
	return real_close(fd);
}

/* ---- processes ---------------------------------------------------------------- */

pid_t fork(void)
{
	pid_t r;

	REAL(fork);
	r = real_fork();
	if (r == 0) {
		L.gen++;
		L.pid = getpid();
		note_process();
	}
	return r;
}

int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_NAME && a[0] &&
	    strcmp((const char *)a[0], "rngfeed-pidfile") == 0 && !L.keeper) {
		char line[48];

		snprintf(line, sizeof(line), "%d keeper\n", (int)getpid());
		append_line("procs", line);
		snprintf(line, sizeof(line), "%d\n", (int)getpid());
		append_line("keeper", line);
		L.keeper = 1;
	}
	return (int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
}

int socketpair(int domain, int type, int proto, int sv[2])
{
	int r = (int)syscall(SYS_socketpair, domain, type, proto, sv);

	if (r == 0)
		for (int i = 0; i < 2; i++)
			if (sv[i] >= 0 && sv[i] < MAX_FDS) {
				atomic_store(&L.pair_fd[sv[i]], 1);
				atomic_store(&L.own_fd[sv[i]], 1);
			}
	return r;
}

int pipe2(int p[2], int flags)
{
	int r = (int)syscall(SYS_pipe2, p, flags);

	if (r == 0)
		for (int i = 0; i < 2; i++)
			if (p[i] >= 0 && p[i] < MAX_FDS)
				atomic_store(&L.own_fd[p[i]], 1);
	return r;
}

int pipe(int p[2])
{
	return pipe2(p, 0);
}

/* ---- the wrappers ------------------------------------------------------------ */

static int do_open(const char *fn, void *ra, int dirfd, const char *path,
		   int flags, mode_t mode)
{
	int err = 0, d = 0, fd;
	enum cls c = NOWAIT;

	if (!in_hook && main_thread())
		c = path_class(dirfd, path, flags);
	if (L.stall == ST_CONFFILE && !in_hook && main_thread()) {
		struct stat st;

		if (syscall(SYS_newfstatat, dirfd, path, &st, 0) == 0 &&
		    S_ISFIFO(st.st_mode) && stall_on(ST_CONFFILE))
			note_met(fn, ra);
	}
	d = decide(fn, ra, c, path, &err);
	if (d == 2) {
		wait_forever(END_RESTART);
		errno = EINTR;
		return -1;
	}
	if (d == 1) {
		errno = err;
		return -1;
	}
	fd = (int)syscall(SYS_openat, dirfd, path, flags, mode);
	if (fd < 0)
		return -1;
	note_open(path, fd);
	return fd;
}

static mode_t va_mode(int flags, va_list ap)
{
	return (flags & (O_CREAT | __O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = va_mode(flags, ap);
	va_end(ap);
	return do_open("open", __builtin_return_address(0), AT_FDCWD, path, flags, m);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = va_mode(flags, ap);
	va_end(ap);
	return do_open("open", __builtin_return_address(0), AT_FDCWD, path, flags, m);
}

int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
	return do_open("open", __builtin_return_address(0), AT_FDCWD, path, flags, 0);
}

int __open64_2(const char *path, int flags);
int __open64_2(const char *path, int flags)
{
	return do_open("open", __builtin_return_address(0), AT_FDCWD, path, flags, 0);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = va_mode(flags, ap);
	va_end(ap);
	return do_open("openat", __builtin_return_address(0), dirfd, path, flags, m);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = va_mode(flags, ap);
	va_end(ap);
	return do_open("openat", __builtin_return_address(0), dirfd, path, flags, m);
}

static FILE *do_fopen(const char *fn, void *ra, const char *path,
		      const char *mode, FILE *(*realf)(const char *, const char *))
{
	int err = 0, d;
	enum cls c = NOWAIT;
	FILE *f;

	if (!in_hook && main_thread())
		c = path_class(AT_FDCWD, path, 0);
	d = decide(fn, ra, c, path, &err);
	if (d == 2) {
		wait_forever(END_RESTART);
		errno = EINTR;
		return NULL;
	}
	if (d == 1) {
		errno = err;
		return NULL;
	}
	in_hook++;
	f = realf(path, mode);
	in_hook--;
	return f;
}

FILE *fopen(const char *path, const char *mode)
{
	REAL(fopen);
	return do_fopen("fopen", __builtin_return_address(0), path, mode, real_fopen);
}

FILE *fopen64(const char *path, const char *mode)
{
	REAL(fopen64);
	return do_fopen("fopen", __builtin_return_address(0), path, mode, real_fopen64);
}

ssize_t read(int fd, void *buf, size_t len)
{
	ssize_t n;

	stall_source(fd, __builtin_return_address(0));
	FD_CALL("read", fd, 1, END_RESTART, -1);
	n = syscall(SYS_read, fd, buf, len);
	note_read(fd, n);
	return n;
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	ssize_t n;

	if (len > buflen)
		abort();
	stall_source(fd, __builtin_return_address(0));
	FD_CALL("read", fd, 1, END_RESTART, -1);
	n = syscall(SYS_read, fd, buf, len);
	note_read(fd, n);
	return n;
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n;

	FD_CALL("pread", fd, 1, END_RESTART, -1);
	n = syscall(SYS_pread64, fd, buf, len, off);
	note_read(fd, n);
	return n;
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	return pread64(fd, buf, len, off);
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t n;

	FD_CALL("readv", fd, 1, END_RESTART, -1);
	n = syscall(SYS_readv, fd, iov, cnt);
	note_read(fd, n);
	return n;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	long r;

	FD_CALL("write", fd, 0, END_RESTART, -1);
	r = syscall(SYS_write, fd, buf, len);
	stalled_write("write", __builtin_return_address(0), fd, r, errno);
	return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	long r;

	FD_CALL("pwrite", fd, 0, END_RESTART, -1);
	r = syscall(SYS_pwrite64, fd, buf, len, off);
	if (r >= 0 && fd >= 0 && fd < MAX_FDS)
		fixture_saved[fd].len = 0;
	return r;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite64(fd, buf, len, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	FD_CALL("writev", fd, 0, END_RESTART, -1);
	return syscall(SYS_writev, fd, iov, cnt);
}

/* MSG_DONTWAIT makes a socket call non-blocking whatever the fd says. */
#define SOCK_CALL(fn, fd, flags, reading)                                     \
	do {                                                                  \
		if ((flags) & MSG_DONTWAIT) {                                  \
			int err_ = 0, d_;                                      \
			d_ = decide(fn, __builtin_return_address(0), NONBLOCK, \
				    "MSG_DONTWAIT", &err_);                    \
			if (d_ == 1 && L.action == ACT_BLOCK)                  \
				mark_stalled(fd);                              \
			if (d_ == 0 && is_stalled(fd)) {                       \
				note_met(fn, __builtin_return_address(0));     \
				d_ = 1;                                        \
				err_ = EAGAIN;                                 \
			}                                                      \
			if (d_ == 0 && (reading) && meets_stall(fd, 1))        \
				note_met(fn, __builtin_return_address(0));     \
			if (d_ == 1) {                                         \
				errno = err_;                                  \
				return -1;                                     \
			}                                                      \
		} else {                                                       \
			FD_CALL(fn, fd, reading, END_RESTART, -1);             \
		}                                                              \
	} while (0)

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	ssize_t n;

	SOCK_CALL("recv", fd, flags, 1);
	n = syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
	note_read(fd, n);
	return n;
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
		 struct sockaddr *addr, socklen_t *alen)
{
	SOCK_CALL("recvfrom", fd, flags, 1);
	return syscall(SYS_recvfrom, fd, buf, len, flags, addr, alen);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	SOCK_CALL("recvmsg", fd, flags, 1);
	return syscall(SYS_recvmsg, fd, msg, flags);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	long r;

	SOCK_CALL("send", fd, flags, 0);
	r = syscall(SYS_sendto, fd, buf, len, flags, NULL, 0);
	stalled_write("send", __builtin_return_address(0), fd, r, errno);
	return r;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *addr, socklen_t alen)
{
	SOCK_CALL("sendto", fd, flags, 0);
	return syscall(SYS_sendto, fd, buf, len, flags, addr, alen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	SOCK_CALL("sendmsg", fd, flags, 0);
	return syscall(SYS_sendmsg, fd, msg, flags);
}

int connect(int fd, const struct sockaddr *addr, socklen_t alen)
{
	FD_CALL("connect", fd, 1, END_RESTART, -1);
	return (int)syscall(SYS_connect, fd, addr, alen);
}

static int accepted(int fd)
{
	if (fd >= 0 && fd < MAX_FDS)
		atomic_store(&L.accepted_fd[fd], 1);
	return fd;
}

int accept(int fd, struct sockaddr *addr, socklen_t *alen)
{
	FD_CALL("accept", fd, 1, END_RESTART, -1);
	return accepted((int)syscall(SYS_accept4, fd, addr, alen, 0));
}

int accept4(int fd, struct sockaddr *addr, socklen_t *alen, int flags)
{
	FD_CALL("accept", fd, 1, END_RESTART, -1);
	return accepted((int)syscall(SYS_accept4, fd, addr, alen, flags));
}

/*
 * poll and ppoll.  Stalled fds (and, for a blocked poll, every fd but the
 * signalfds) are left out of the set the kernel sees, so they are never
 * ready; the timeout and the signal mask are the caller's.
 */
static int do_poll(void *ra, struct pollfd *fds, nfds_t n, int timeout_ms,
		   const struct timespec *ts, const sigset_t *mask)
{
	int err = 0, d, r, met = 0;
	enum cls c = (ts ? (ts->tv_sec || ts->tv_nsec) : timeout_ms != 0) ? WAIT
									   : NOWAIT;
	char what[32];
	struct timespec t;
	struct pollfd copy[MAX_POLL];
	int strip_all;

	snprintf(what, sizeof(what), "timeout=%dms",
		 ts ? (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000) : timeout_ms);
	d = decide("poll", ra, c, what, &err);
	if (d == 1) {
		errno = err;
		return -1;
	}
	strip_all = d == 2;
	if (!ts && timeout_ms >= 0) {
		t.tv_sec = timeout_ms / 1000;
		t.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		ts = &t;
	}
	if (n > MAX_POLL)
		return (int)syscall(SYS_ppoll, fds, n, ts, mask, 8);
	for (nfds_t i = 0; i < n; i++) {
		int fd = fds[i].fd;

		copy[i] = fds[i];
		if (fd < 0)
			continue;
		if ((strip_all && !is_signalfd(fd)) || is_stalled(fd)) {
			copy[i].fd = -1;
			met |= !strip_all;
		} else if (meets_stall(fd, 1)) {
			/* Input from the stalled peer, or room to write to it
			 * (a client that never reads): neither comes. */
			met = 1;
		}
	}
	if (met)
		note_met("poll", ra);
	r = (int)syscall(SYS_ppoll, copy, n, ts, mask, 8);
	for (nfds_t i = 0; i < n; i++)
		fds[i].revents = copy[i].revents;
	return r;
}

int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	return do_poll(__builtin_return_address(0), fds, n, timeout_ms, NULL, NULL);
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t len);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t len)
{
	(void)len;
	return do_poll(__builtin_return_address(0), fds, n, timeout_ms, NULL, NULL);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
	  const sigset_t *mask)
{
	if (!ts)
		return do_poll(__builtin_return_address(0), fds, n, -1, NULL, mask);
	return do_poll(__builtin_return_address(0), fds, n, 0, ts, mask);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	long r;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	FD_CALL("ioctl", fd, 2, END_RESTART, -1);
	r = syscall(SYS_ioctl, fd, req, arg);
	if (req == RNDADDENTROPY && r == 0 && L.dir[0]) {
		const struct rand_pool_info *p = arg;
		char line[64];

		snprintf(line, sizeof(line), "%d %llu\n", p->entropy_count,
			 (unsigned long long)atomic_load(&L.source_bytes));
		append_line("credit", line);
	}
	return (int)r;
}

int fsync(int fd)
{
	FD_CALL("fsync", fd, 0, END_RESTART, -1);
	return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
	FD_CALL("fdatasync", fd, 0, END_RESTART, -1);
	return (int)syscall(SYS_fdatasync, fd);
}

static int do_sleep(const char *fn, void *ra, const struct timespec *ts)
{
	int err = 0, d;
	char what[32];

	snprintf(what, sizeof(what), "%lds+%ldns", ts ? (long)ts->tv_sec : -1L,
		 ts ? ts->tv_nsec : 0L);
	d = decide(fn, ra, sleep_class(ts), what, &err);
	if (d == 2) {
		wait_forever(END_EINTR);
		return EINTR;
	}
	return d == 1 ? err : 0;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int e = do_sleep("nanosleep", __builtin_return_address(0), req);

	if (e) {
		errno = e;
		return -1;
	}
	return (int)syscall(SYS_nanosleep, req, rem);
}

int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
		    struct timespec *rem)
{
	struct timespec rel = { 0, 0 }, now;
	int e;

	if (flags & TIMER_ABSTIME && req) {
		clock_gettime(clk, &now);
		rel.tv_sec = req->tv_sec - now.tv_sec;
	} else if (req) {
		rel = *req;
	}
	e = do_sleep("clock_nanosleep", __builtin_return_address(0), &rel);
	if (e)
		return e;
	return syscall(SYS_clock_nanosleep, clk, flags, req, rem) < 0 ? errno : 0;
}

int usleep(useconds_t us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };
	int e = do_sleep("usleep", __builtin_return_address(0), &ts);

	if (e) {
		errno = e;
		return -1;
	}
	return (int)syscall(SYS_nanosleep, &ts, NULL);
}

unsigned int sleep(unsigned int s)
{
	struct timespec ts = { s, 0 };

	if (do_sleep("sleep", __builtin_return_address(0), &ts))
		return s;
	return syscall(SYS_nanosleep, &ts, NULL) < 0 ? s : 0;
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	int err = 0, d;

	/* GRND_INSECURE never waits, even before the CRNG is ready;
	 * GRND_NONBLOCK says EAGAIN until it is. */
	d = decide("getrandom", __builtin_return_address(0),
		   flags & GRND_INSECURE ? NOWAIT
		   : flags & GRND_NONBLOCK ? NONBLOCK : WAIT,
		   flags & GRND_INSECURE ? "GRND_INSECURE"
		   : flags & GRND_NONBLOCK ? "GRND_NONBLOCK" : "blocking", &err);
	if (d == 2) {
		wait_forever(END_RESTART);
		errno = EINTR;
		return -1;
	}
	if (d == 1) {
		errno = err;
		return -1;
	}
	return syscall(SYS_getrandom, buf, len, flags);
}

int pthread_join(pthread_t t, void **ret)
{
	int err = 0, d;

	REAL(pthread_join);
	d = decide("pthread_join", __builtin_return_address(0), WAIT, "-", &err);
	if (d == 2)
		wait_forever(END_NEVER);
	return real_pthread_join(t, ret);
}

/*
 * A timed join in a loop waits as long as the thread lives: a reader in a
 * read that no signal interrupts (a device's killable-only wait) never
 * ends.  Blocked, every call waits out its deadline and says ETIMEDOUT,
 * as that thread would make it.
 */
int pthread_timedjoin_np(pthread_t t, void **ret, const struct timespec *abst)
{
	int err = 0, d;

	REAL(pthread_timedjoin_np);
	d = decide("pthread_timedjoin_np", __builtin_return_address(0), WAIT,
		   "a thread that never ends", &err);
	if (d == 2) {
		while (syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME,
			       abst, NULL) != 0 && errno == EINTR)
			;
		return ETIMEDOUT;
	}
	return real_pthread_timedjoin_np(t, ret, abst);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int err = 0, d;
	static int (*real_cw)(pthread_cond_t *, pthread_mutex_t *);

	if (!real_cw)
		real_cw = (int (*)(pthread_cond_t *, pthread_mutex_t *))
			dlvsym(RTLD_NEXT, "pthread_cond_wait", "GLIBC_2.3.2");
	if (!real_cw)
		real_cw = (int (*)(pthread_cond_t *, pthread_mutex_t *))
			real("pthread_cond_wait");
	d = decide("pthread_cond_wait", __builtin_return_address(0), WAIT, "-", &err);
	if (d == 2)
		wait_forever(END_NEVER);
	return real_cw(c, m);
}

int getaddrinfo(const char *node, const char *service,
		const struct addrinfo *hints, struct addrinfo **res)
{
	int err = 0, d;

	REAL(getaddrinfo);
	d = decide("getaddrinfo", __builtin_return_address(0),
		   node && !(hints && hints->ai_flags & AI_NUMERICHOST) ? WAIT : NOWAIT,
		   node ? node : "-", &err);
	if (d == 2)
		wait_forever(END_NEVER);
	if (d == 1)
		return err == EINTR || err == EAGAIN ? EAI_AGAIN : EAI_FAIL;
	in_hook++;
	d = real_getaddrinfo(node, service, hints, res);
	in_hook--;
	return d;
}

static int do_fcntl(const char *fn, void *ra, int fd, int cmd, void *arg)
{
	int err = 0, d;
	int locks = cmd == F_SETLKW || cmd == F_OFD_SETLKW;

	if (cmd == F_GETFL || cmd == F_GETFD || cmd == F_SETFD)
		return (int)syscall(SYS_fcntl, fd, cmd, arg);
	d = decide(fn, ra, locks ? WAIT : NOWAIT, locks ? "F_SETLKW" : "-", &err);
	if (d == 2) {
		wait_forever(END_RESTART);
		errno = EINTR;
		return -1;
	}
	if (d == 1) {
		errno = err;
		return -1;
	}
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return do_fcntl("fcntl", __builtin_return_address(0), fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return do_fcntl("fcntl", __builtin_return_address(0), fd, cmd, arg);
}

/* The daemon logs with one fprintf(stderr) a line (or a write(2)): stderr
 * may be a pipe (a journal stream) that stops being read. */
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	REAL(__vfprintf_chk);
	/* Other streams are buffered files: their writes come at fflush
	 * or fclose, inside libc. */
	if (fileno(f) >= 0 && fileno(f) <= 2)
		FD_CALL("fprintf", fileno(f), 0, END_RESTART, -1);
	va_start(ap, fmt);
	in_hook++;
	r = real___vfprintf_chk(f, flag, fmt, ap);
	in_hook--;
	va_end(ap);
	return r;
}

/*
 * syslog: there is no syslog daemon in the test, so each message is also
 * appended to DIR/log, as one would write it.  Its socket fills when the
 * syslog daemon stops reading (wait); LIVENESS_STALL=syslog makes every
 * call wait from DIR/stall on, in any thread.
 */
void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap);
static void do_syslog(void *ra, int pri, int flag, const char *fmt, va_list ap)
{
	char line[1200];
	va_list copy;
	int err = 0, d;

	REAL(__vsyslog_chk);
	va_copy(copy, ap);
	snprintf(line, sizeof(line), "rngfeed: ");
	vsnprintf(line + 9, sizeof(line) - 10, fmt, copy);
	va_end(copy);
	strcat(line, "\n");
	d = decide("syslog", ra, WAIT, "syslog", &err);
	if (d == 0 && stall_on(ST_SYSLOG)) {
		note_met("syslog", ra);
		d = 2;
	}
	if (d == 2) {
		wait_forever(END_RESTART);
		return; /* a send that ended with EINTR: the line is lost */
	}
	append_line("log", line);
	in_hook++;
	real___vsyslog_chk(pri, flag, fmt, ap);
	in_hook--;
}

void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
	do_syslog(__builtin_return_address(0), pri, flag, fmt, ap);
}

void __syslog_chk(int pri, int flag, const char *fmt, ...);
void __syslog_chk(int pri, int flag, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	do_syslog(__builtin_return_address(0), pri, flag, fmt, ap);
	va_end(ap);
}

void vsyslog(int pri, const char *fmt, va_list ap)
{
	do_syslog(__builtin_return_address(0), pri, 1, fmt, ap);
}

void syslog(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	do_syslog(__builtin_return_address(0), pri, 1, fmt, ap);
	va_end(ap);
}

/* ---- files the daemon writes (the PID file, metrics): local, faults only ---- */

static int do_local(const char *fn, void *ra, const char *what)
{
	int err = 0, d = decide(fn, ra, LOCAL, what, &err);

	if (d == 2) {
		wait_forever(END_RESTART);
		errno = EINTR;
		return -1;
	}
	if (d == 1)
		errno = err;
	return d == 1 ? -1 : 0;
}

int fclose(FILE *f)
{
	int r;

	REAL(fclose);
	if (f && fileno(f) >= 0 && !in_hook && main_thread()) {
		char what[96];
		int err = 0, d;

		fd_what(fileno(f), what, sizeof(what));
		d = decide("fclose", __builtin_return_address(0),
			   fd_class(fileno(f), 0), what, &err);
		if (d == 2)
			wait_forever(END_RESTART);
		if (d >= 1) {
			/* The stream is still released, as a failed fclose does. */
			real_fclose(f);
			errno = d == 2 ? EINTR : err;
			return EOF;
		}
	}
	in_hook++;
	r = real_fclose(f);
	in_hook--;
	return r;
}

int fflush(FILE *f)
{
	int r;

	REAL(fflush);
	if (f && fileno(f) >= 0)
		FD_CALL("fflush", fileno(f), 0, END_RESTART, EOF);
	in_hook++;
	r = real_fflush(f);
	in_hook--;
	return r;
}

int rename(const char *from, const char *to)
{
	if (do_local("rename", __builtin_return_address(0), to) < 0)
		return -1;
	return (int)syscall(SYS_renameat, AT_FDCWD, from, AT_FDCWD, to);
}

int unlink(const char *path)
{
	if (do_local("unlink", __builtin_return_address(0), path) < 0)
		return -1;
	return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
}

/* A truncate is the file's metadata: a sysfs attribute's (a no-op there)
 * never reaches its driver. */
static void fixture_save(int fd)
{
	char what[PATH_MAX];
	long n;

	if (fd < 0 || fd >= MAX_FDS || !L.sysfs[0])
		return;
	fd_what(fd, what, sizeof(what));
	if (!under(what, L.sysfs) || strncmp(what + strlen(L.sysfs), "/rng_", 5))
		return;
	n = syscall(SYS_pread64, fd, fixture_saved[fd].text,
		    sizeof(fixture_saved[fd].text), 0);
	fixture_saved[fd].len = n > 0 ? (int)n : 0;
}

int ftruncate64(int fd, off_t len)
{
	FD_CALL("ftruncate", fd, 2, END_RESTART, -1);
	fixture_save(fd);
	return (int)syscall(SYS_ftruncate, fd, len);
}

int ftruncate(int fd, off_t len)
{
	return ftruncate64(fd, len);
}

int mkostemp64(char *tmpl, int flags)
{
	int r;

	REAL(mkostemp64);
	if (do_local("mkostemp", __builtin_return_address(0), tmpl) < 0)
		return -1;
	in_hook++;
	r = real_mkostemp64(tmpl, flags);
	in_hook--;
	return r;
}
