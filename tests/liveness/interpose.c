// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * interpose.so: the LD_PRELOAD half of make liveness (tests/liveness/run.sh).
 *
 * Every call the daemon's MAIN thread makes to a function that can wait
 * (open, read, write, poll, connect, accept, recv, send, ioctl, fsync,
 * nanosleep, getrandom, pthread_join, ...) is keyed by its call site: the
 * offset in the rngfeed executable of the first return address on the
 * stack that lies in the executable (the call itself when rngfeed makes
 * it, the rngfeed call into a library such as sd_notify() when the
 * library makes it).  Other threads pass straight through, except that
 * the credit check below counts every thread.
 *
 * Environment (all optional; with none of them set the library only
 * counts credit):
 *   LIVENESS_DIR     a private directory for everything below
 *   LIVENESS_SITE    "FUNC:0xOFFSET" the site to act on
 *   LIVENESS_ACTION  block | eintr | eagain | error | sighup | sigusr1 | sigterm
 *   LIVENESS_PHASE   start | steady | reload | stop: act only in that phase
 *   LIVENESS_SOURCE  path of the data file the file source reads
 *   LIVENESS_STALL_SOURCE  a reader's read of it never returns (below)
 *
 * Phases: the driver creates DIR/phase.steady, phase.reload and
 * phase.stop as it goes; the library looks for the next one on each
 * main-thread call (one access(2)), so it knows which phase a call is in.
 *
 * Files written in DIR:
 *   sites   one line per distinct (phase, function, site) the main thread
 *           reached: "PHASE FUNC 0xOFFSET CLASS WHAT", CLASS the strongest
 *           seen there (wait > local > bounded > nowait, below)
 *   hit     "FUNC 0xOFFSET ACTION" when the action is taken
 *   credit  one line per RNDADDENTROPY from any thread: "BITS RAWBYTES",
 *           the bits it credited and the bytes of LIVENESS_SOURCE read by
 *           any thread before it (so each credit can be checked against
 *           the tested input read so far)
 *
 * Classes (what a call could wait on, judged from its arguments):
 *   wait     something outside the process: an open without O_NONBLOCK
 *            of a FIFO, socket or device; I/O on a blocking FIFO, socket,
 *            device or anonymous fd; connect/accept on a blocking socket;
 *            poll/ppoll with a non-zero timeout; a sleep of 1 s or more;
 *            getrandom without GRND_NONBLOCK or GRND_INSECURE; pthread_join,
 *            pthread_timedjoin_np or pthread_cond_wait (a reader stuck
 *            in a device read);
 *            getaddrinfo without AI_NUMERICHOST; fcntl F_SETLKW; stdio
 *            to a blocking pipe or socket on fd 2.
 *   local    regular files and directories (the disk): never blocked
 *            unless LIVENESS_BLOCK_LOCAL=1, but faults are injected.
 *   bounded  a sleep under 1 s, a timed wait: never blocked.
 *   nonblock it would wait but was made not to (O_NONBLOCK on a FIFO,
 *            socket, device or eventfd; MSG_DONTWAIT; GRND_NONBLOCK): its
 *            "block" is a stall, EAGAIN on every call (the peer never
 *            gets ready, the CRNG never gets ready).
 *   nowait   the call cannot wait (timeout 0, GRND_INSECURE, a
 *            signalfd's read, an ioctl on a non-blocking fd, the
 *            kernel's memory devices: /dev/random's ioctls, /dev/null).
 *
 * Actions, at the first call at the site in the phase (the class must be
 * wait or nonblock for block):
 *   block    nonblock: EAGAIN on every call.  wait: the call never returns (as a blocked read whose signal
 *            handlers restart it), except that poll/ppoll keep waiting
 *            on the signalfds in their set (a loop that takes SIGTERM
 *            through its own signalfd passes) and sleeps end with EINTR
 *            on a handled signal.
 *   eintr, eagain   the first 3 calls at the site fail with that errno.
 *   error    every call at the site fails with EIO (getaddrinfo:
 *            EAI_FAIL; pthread functions: block only).
 *   sighup, sigusr1, sigterm   the signal is sent to the process just
 *            before the call, which then runs normally.
 *
 * Calls glibc makes internally (fprintf's write, fopen's open) never
 * reach an interposer; fopen and fprintf are wrapped themselves.
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
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum cls { NOWAIT, NONBLOCK, BOUNDED, LOCAL, WAIT };
static const char *const cls_name[] = { "nowait", "nonblock", "bounded",
					"local", "wait" };
enum action { ACT_NONE, ACT_BLOCK, ACT_EINTR, ACT_EAGAIN, ACT_ERROR,
	      ACT_SIGHUP, ACT_SIGUSR1, ACT_SIGTERM };
static const char *const act_name[] = { "none", "block", "eintr", "eagain",
					"error", "sighup", "sigusr1", "sigterm" };
static const char *const phase_name[] = { "start", "steady", "reload", "stop" };
#define N_PHASES 4
#define TRANSIENT_FAULTS 3 /* eintr, eagain: the first 3 calls */
#define MAX_SITES 2048
#define MAX_FDS 4096

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

static struct {
	int ready;
	char dir[PATH_MAX - 64];
	uintptr_t exe_lo, exe_hi, exe_base;
	const char *want_fn;
	char want_at[KEY_LEN];
	enum action action;
	int want_phase;		/* -1: any */
	int phase;		/* main thread's view */
	int acted;		/* calls acted on so far */
	int block_local;
	int stall_source;	/* LIVENESS_STALL_SOURCE */
	atomic_int stalled;
	char source[PATH_MAX];
	struct site sites[MAX_SITES];
	size_t n_sites;
	atomic_uchar source_fd[MAX_FDS]; /* fds open on LIVENESS_SOURCE */
	atomic_ullong source_bytes;
	pid_t pid;
} L;

static __thread int in_hook;

/* ---- small tools that never go through the wrappers ----------------------- */

static int raw_open(const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
}

static void append_line(const char *name, const char *line);

/* "FUNC KEY ACTION EPOCH": the driver times a sigterm case from it. */
static void note_hit(const char *fn, const char *at, const char *act)
{
	char line[160];
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(line, sizeof(line), "%s %s %s %lld.%06ld\n", fn, at, act,
		 (long long)ts.tv_sec, ts.tv_nsec / 1000);
	append_line("hit", line);
}

static void append_line(const char *name, const char *line)
{
	char path[PATH_MAX];
	int fd;

	if (!L.dir[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", L.dir, name);
	fd = raw_open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd < 0)
		return;
	(void)!syscall(SYS_write, fd, line, strlen(line));
	syscall(SYS_close, fd);
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
	s = getenv("LIVENESS_SOURCE");
	if (s)
		snprintf(L.source, sizeof(L.source), "%s", s);
	L.block_local = getenv("LIVENESS_BLOCK_LOCAL") != NULL;
	L.stall_source = getenv("LIVENESS_STALL_SOURCE") != NULL;
	/* backtrace() loads libgcc_s on its first call: not inside a hook. */
	backtrace(warm, 2);
	L.ready = 1;
	in_hook = 0;
}

static int main_thread(void)
{
	return L.ready && syscall(SYS_gettid) == getpid();
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
		/* Read by the readers too (stall_source()). */
		__atomic_store_n(&L.phase, L.phase + 1, __ATOMIC_RELAXED);
	}
}

static void record(const char *fn, const struct key *k, enum cls c,
		   const char *what)
{
	char line[PATH_MAX + 128];
	size_t i;

	for (i = 0; i < L.n_sites; i++) {
		struct site *s = &L.sites[i];

		if (s->phase == L.phase && strcmp(s->at, k->at) == 0 &&
		    strcmp(s->fn, fn) == 0)
			break;
	}
	if (i < L.n_sites) {
		if (c <= L.sites[i].cls)
			return;
		L.sites[i].cls = c; /* a stronger class: said again, last wins */
	} else {
		if (L.n_sites == MAX_SITES)
			return;
		L.sites[L.n_sites] = (struct site){ .fn = fn, .phase = L.phase,
						    .cls = c };
		snprintf(L.sites[L.n_sites++].at, KEY_LEN, "%s", k->at);
	}
	snprintf(line, sizeof(line), "%s %s %s %s %s %s\n", phase_name[L.phase],
		 fn, k->at, cls_name[c], k->direct ? "direct" : "lib",
		 what && what[0] ? what : "-");
	append_line("sites", line);
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
		return LOCAL;
	if (flags & O_NONBLOCK)
		return NOWAIT;
	if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1)
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

/* ---- the actions ------------------------------------------------------------ */

enum kind { K_RESTART, K_EINTR, K_POLL, K_PTHREAD };

/* Wait for ever as a blocked call would; K_EINTR calls end on a handled
 * signal, the others are restarted. */
static void block_forever(enum kind k)
{
	for (;;) {
		long r = syscall(SYS_ppoll, NULL, 0, NULL, NULL, 8);

		if (r < 0 && errno == EINTR && k == K_EINTR)
			return;
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

	if (in_hook || !main_thread())
		return 0;
	in_hook = 1;
	update_phase();
	call_site(ra, &k);
	record(fn, &k, c, what);
	in_hook = 0;
	if (L.action == ACT_NONE || !L.want_fn || strcmp(k.at, L.want_at) != 0 ||
	    strcmp(fn, L.want_fn) != 0)
		return 0;
	if (L.want_phase >= 0 && L.phase != L.want_phase)
		return 0;
	switch (L.action) {
	case ACT_BLOCK:
		/* Non-blocking: the peer never gets ready, EAGAIN each time. */
		if (c == NONBLOCK) {
			if (L.acted++ == 0)
				note_hit(fn, off, "block");
			*err = EAGAIN;
			return 1;
		}
		if (c != WAIT && !(c == LOCAL && L.block_local))
			return 0;
		if (L.acted++ == 0) {
			note_hit(fn, off, "block");
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
		if (L.acted++ == 0) {
			note_hit(fn, off, act_name[L.action]);
		}
		*err = L.action == ACT_EINTR ? EINTR
		     : L.action == ACT_EAGAIN ? EAGAIN : EIO;
		return 1;
	default:
		if (L.acted++ == 0) {
			note_hit(fn, off, act_name[L.action]);
			syscall(SYS_kill, L.pid,
				L.action == ACT_SIGHUP ? SIGHUP
				: L.action == ACT_SIGUSR1 ? SIGUSR1 : SIGTERM);
		}
		return 0;
	}
}

/* decide() for calls on an fd. */
#define FD_CALL(fn, fd, reading, kind, fail)                                  \
	do {                                                                  \
		int err_ = 0, d_;                                              \
		char what_[96] = "";                                           \
		enum cls c_ = NOWAIT;                                          \
		if (!in_hook && main_thread()) {                               \
			c_ = fd_class(fd, reading);                            \
			fd_what(fd, what_, sizeof(what_));                     \
		}                                                              \
		d_ = decide(fn, __builtin_return_address(0), c_, what_, &err_); \
		if (d_ == 2)                                                   \
			block_forever(kind);                                   \
		if (d_ == 2 && (kind) == K_EINTR)                              \
			err_ = EINTR;                                          \
		if (d_ >= 1) {                                                 \
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
 * LIVENESS_STALL_SOURCE: from the phase LIVENESS_PHASE names on, a reader
 * thread's read of the source never returns, whatever signal it gets (a
 * device read that only a fatal signal ends, as a stuck virtio-rng's).
 */
static void stall_source(int fd)
{
	if (!L.stall_source || in_hook || main_thread() || fd < 0 ||
	    fd >= MAX_FDS || !atomic_load(&L.source_fd[fd]))
		return;
	if (L.want_phase >= 0 &&
	    __atomic_load_n(&L.phase, __ATOMIC_RELAXED) < L.want_phase)
		return;
	if (atomic_exchange(&L.stalled, 1) == 0)
		note_hit("source", "-", "stall");
	block_forever(K_RESTART);
}

int close(int fd)
{
	REAL(close);
	if (fd >= 0 && fd < MAX_FDS)
		atomic_store(&L.source_fd[fd], 0);
	return real_close(fd);
}

/* ---- the wrappers ------------------------------------------------------------ */

static int do_open(const char *fn, void *ra, int dirfd, const char *path,
		   int flags, mode_t mode)
{
	int err = 0, d = 0, fd;
	enum cls c = NOWAIT;

	if (!in_hook && main_thread())
		c = path_class(dirfd, path, flags);
	d = decide(fn, ra, c, path, &err);
	if (d == 2)
		block_forever(K_RESTART);
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
	if (d == 2)
		block_forever(K_RESTART);
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

	stall_source(fd);
	FD_CALL("read", fd, 1, K_RESTART, -1);
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
	stall_source(fd);
	FD_CALL("read", fd, 1, K_RESTART, -1);
	n = syscall(SYS_read, fd, buf, len);
	note_read(fd, n);
	return n;
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n;

	FD_CALL("pread", fd, 1, K_RESTART, -1);
	n = syscall(SYS_pread64, fd, buf, len, off);
	note_read(fd, n);
	return n;
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n;

	FD_CALL("pread", fd, 1, K_RESTART, -1);
	n = syscall(SYS_pread64, fd, buf, len, off);
	note_read(fd, n);
	return n;
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t n;

	FD_CALL("readv", fd, 1, K_RESTART, -1);
	n = syscall(SYS_readv, fd, iov, cnt);
	note_read(fd, n);
	return n;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	FD_CALL("write", fd, 0, K_RESTART, -1);
	return syscall(SYS_write, fd, buf, len);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	FD_CALL("pwrite", fd, 0, K_RESTART, -1);
	return syscall(SYS_pwrite64, fd, buf, len, off);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	FD_CALL("pwrite", fd, 0, K_RESTART, -1);
	return syscall(SYS_pwrite64, fd, buf, len, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	FD_CALL("writev", fd, 0, K_RESTART, -1);
	return syscall(SYS_writev, fd, iov, cnt);
}

/* MSG_DONTWAIT makes a socket call non-blocking whatever the fd says. */
#define SOCK_CALL(fn, fd, flags, reading)                                     \
	do {                                                                  \
		if ((flags) & MSG_DONTWAIT) {                                  \
			int err_ = 0;                                          \
			if (decide(fn, __builtin_return_address(0), NONBLOCK,  \
				   "MSG_DONTWAIT", &err_) == 1) {              \
				errno = err_;                                  \
				return -1;                                     \
			}                                                      \
		} else {                                                       \
			FD_CALL(fn, fd, reading, K_RESTART, -1);               \
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
	SOCK_CALL("send", fd, flags, 0);
	return syscall(SYS_sendto, fd, buf, len, flags, NULL, 0);
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
	FD_CALL("connect", fd, 1, K_RESTART, -1);
	return (int)syscall(SYS_connect, fd, addr, alen);
}

int accept(int fd, struct sockaddr *addr, socklen_t *alen)
{
	FD_CALL("accept", fd, 1, K_RESTART, -1);
	return (int)syscall(SYS_accept4, fd, addr, alen, 0);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *alen, int flags)
{
	FD_CALL("accept", fd, 1, K_RESTART, -1);
	return (int)syscall(SYS_accept4, fd, addr, alen, flags);
}

/* A blocked poll: for ever, but still woken by the signalfds in its set
 * (a loop that takes SIGTERM through its own signalfd does not need the
 * timeout to see it). */
static int blocked_poll(struct pollfd *fds, nfds_t n)
{
	struct pollfd sig[16];
	nfds_t k = 0, map[16];
	int r = -1;

	for (nfds_t i = 0; i < n; i++) {
		fds[i].revents = 0;
		if (fds[i].fd >= 0 && k < 16 && is_signalfd(fds[i].fd)) {
			sig[k] = fds[i];
			map[k++] = i;
		}
	}
	if (k == 0)
		block_forever(K_EINTR);
	else
		do
			r = (int)syscall(SYS_ppoll, sig, k, NULL, NULL, 8);
		while (r == 0);
	if (k == 0 || r < 0) {
		errno = EINTR;
		return -1;
	}
	for (nfds_t j = 0; j < k; j++)
		fds[map[j]].revents = sig[j].revents;
	return r;
}

static int do_poll(void *ra, struct pollfd *fds, nfds_t n, int timeout_ms,
		   const struct timespec *ts, const sigset_t *mask)
{
	int err = 0, d;
	enum cls c = (ts ? (ts->tv_sec || ts->tv_nsec) : timeout_ms != 0) ? WAIT
									   : NOWAIT;
	char what[32];
	struct timespec t;

	snprintf(what, sizeof(what), "timeout=%dms",
		 ts ? (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000) : timeout_ms);
	d = decide("poll", ra, c, what, &err);
	if (d == 2)
		return blocked_poll(fds, n);
	if (d == 1) {
		errno = err;
		return -1;
	}
	if (!ts && timeout_ms >= 0) {
		t.tv_sec = timeout_ms / 1000;
		t.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		ts = &t;
	}
	return (int)syscall(SYS_ppoll, fds, n, ts, mask, 8);
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
	FD_CALL("ioctl", fd, 2, K_RESTART, -1);
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
	FD_CALL("fsync", fd, 0, K_RESTART, -1);
	return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
	FD_CALL("fdatasync", fd, 0, K_RESTART, -1);
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
		block_forever(K_EINTR);
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
	if (d == 2)
		block_forever(K_RESTART);
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
		block_forever(K_RESTART);
	return real_pthread_join(t, ret);
}

/*
 * A timed join in a loop (reader_stop()) waits as long as the thread
 * lives: a reader in a read that no signal interrupts (a device's
 * killable-only wait) never ends.  Blocked, every call waits out its
 * deadline and says ETIMEDOUT, as that thread would make it.
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
		block_forever(K_RESTART);
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
		block_forever(K_RESTART);
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
	if (d == 2)
		block_forever(K_RESTART);
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

/* The daemon logs with one fprintf(stderr) a line: stderr may be a pipe
 * (a journal stream) that stops being read.  make liveness points stderr
 * at a file (class local): a stalled journal is out of its scope. */
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
		FD_CALL("fprintf", fileno(f), 0, K_RESTART, -1);
	va_start(ap, fmt);
	in_hook++;
	r = real___vfprintf_chk(f, flag, fmt, ap);
	in_hook--;
	va_end(ap);
	return r;
}

/* ---- files the daemon writes (the PID file, metrics): local, faults only ---- */

static int do_local(const char *fn, void *ra, const char *what)
{
	int err = 0, d = decide(fn, ra, LOCAL, what, &err);

	if (d == 2)
		block_forever(K_RESTART);
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
			block_forever(K_RESTART);
		if (d == 1) {
			/* The stream is still released, as a failed fclose does. */
			real_fclose(f);
			errno = err;
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
		FD_CALL("fflush", fileno(f), 0, K_RESTART, EOF);
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

int ftruncate64(int fd, off_t len)
{
	FD_CALL("ftruncate", fd, 0, K_RESTART, -1);
	return (int)syscall(SYS_ftruncate, fd, len);
}

int ftruncate(int fd, off_t len)
{
	FD_CALL("ftruncate", fd, 0, K_RESTART, -1);
	return (int)syscall(SYS_ftruncate, fd, len);
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
