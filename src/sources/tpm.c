// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tpm: random bytes from a TPM 2.0 by TPM2_GetRandom (Part 3 §16.1).
 *
 * device=/dev/tpmrm0 (default; the kernel's resource manager, shared by
 * any number of users) or /dev/tpm0 (the raw chip, one user at a time),
 * or device=unix:PATH for a TPM that speaks the command protocol on a
 * unix stream socket, as "swtpm socket --tpm2 --server type=unixio,
 * path=PATH" does: the raw command and response bytes, with no framing
 * around them (checked against swtpm 0.7.1).  Such a software TPM serves
 * one connection at a time; a second client waits, and times out here.
 *
 * Each read() is one transaction: write one GetRandom command, read the
 * whole response (a character device hands it over in one read; a socket
 * may need several), check it with tpm2.c, copy the bytes out.  The
 * transaction survives -EINTR: the next read() carries on with the
 * response instead of sending a second command, so the stream never gets
 * out of step.  Anything that could leave it out of step (a timeout, a
 * malformed or truncated response, end of stream) breaks the instance:
 * every later read fails the same way until it is closed and reopened.
 *
 * Drivers do not log; the last error, with the response code by name, is
 * kept for describe().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/sources.h"
#include "rngfeed/tpm2.h"
#include "rngfeed/util.h"

#define UNIX_PREFIX "unix:"

/*
 * Bytes asked per command.  A TPM returns at most its largest digest size
 * (TPM2B_DIGEST holds sizeof(TPMU_HA), Part 2 §10.4.2): 64 with SHA-512,
 * 32 with SHA-256 only, and then we simply loop.  swtpm asked for 128
 * returns 64 (measured on swtpm over its unix socket), so asking for more
 * buys nothing.
 */
#define TPM_ASK_MAX 64u
/* Room for any response, as the kernel's TPM_BUFSIZE: a response longer
 * than a GetRandom can be is read whole and then refused, not cut. */
#define TPM_RSP_BUF 4096u
/* How long one response may take; GetRandom is a short command, so a TPM
 * silent this long is hung (or, for swtpm, serving another client). */
#define TPM_TIMEOUT_MS_DEFAULT 5000
#define TPM_TIMEOUT_MS_MAX 600000
/* How long "not now" answers (TPM_RC_RETRY, _TESTING, ... or zero bytes)
 * may go on before the source counts as failed: source_read() retries
 * -EAGAIN forever, and a TPM stuck in self-test should not hang --raw. */
#define TPM_BUSY_LIMIT_MS 30000

static const char *const tpm_keys[] = { "timeout-ms", NULL };

struct tpm_state {
	int fd;
	bool is_socket;
	int timeout_ms;
	char device[256];
	/* The transaction in progress, kept across -EINTR. */
	bool pending;
	uint16_t asked;
	size_t got;
	long long deadline_ms;
	/* Non-zero (-errno): the stream is out of step; every read fails. */
	int broken;
	long long busy_since_ms; /* first of a run of "not now"; 0 = none */
	char last_error[192];
	uint8_t rsp[TPM_RSP_BUF];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- opening: a character device or a unix socket ----------------------- */

static const char *socket_path(const char *device)
{
	if (strncmp(device, UNIX_PREFIX, strlen(UNIX_PREFIX)) != 0)
		return NULL;
	return device + strlen(UNIX_PREFIX);
}

static int socket_connect(const char *path, char *why, size_t why_len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (!path[0] || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, why_len, "socket path '%s' is %s", path,
			 path[0] ? "too long" : "empty");
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* Non-blocking connect: a unix socket whose listen queue is full
	 * would otherwise block here instead of failing with EAGAIN. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(why, why_len, "socket: %s", strerror(-r));
		return r;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		if (r == -ENOENT)
			snprintf(why, why_len,
				 "no socket at %s (is the TPM simulator "
				 "running?)",
				 path);
		else if (r == -ECONNREFUSED)
			snprintf(why, why_len,
				 "nothing listens on %s (is the TPM "
				 "simulator running?)",
				 path);
		else if (r == -EAGAIN)
			snprintf(why, why_len,
				 "%s does not accept connections (queue full)",
				 path);
		else
			snprintf(why, why_len, "cannot connect to %s: %s",
				 path, strerror(-r));
		goto fail;
	}
	/* Blocking from here on: reads are guarded by poll() with a
	 * deadline, and the 12-byte command always fits the buffer. */
	if (fcntl(fd, F_SETFL, 0) < 0) {
		r = -errno;
		snprintf(why, why_len, "fcntl: %s", strerror(-r));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return r;
}

/*
 * Writing TPM commands into something that is not a TPM could do harm
 * (a tty, a regular file), so a device path must be a character device
 * and, where sysfs can tell, one of class tpm or tpmrm.
 */
static int check_tpm_chardev(int fd, const char *path, char *why,
			     size_t why_len)
{
	char sys[64], link[PATH_MAX];
	const char *cls;
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISCHR(st.st_mode)) {
		snprintf(why, why_len,
			 "%s is not a TPM character device (for a socket, "
			 "use device=unix:PATH)",
			 path);
		return -ENOTTY;
	}
	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u/subsystem",
		 major(st.st_rdev), minor(st.st_rdev));
	n = readlink(sys, link, sizeof(link) - 1);
	if (n < 0)
		return 0; /* no sysfs (a container?): trust the user */
	link[n] = '\0';
	cls = strrchr(link, '/');
	cls = cls ? cls + 1 : link;
	if (strcmp(cls, "tpm") != 0 && strcmp(cls, "tpmrm") != 0) {
		snprintf(why, why_len, "%s is not a TPM (device class %s)",
			 path, cls);
		return -ENOTTY;
	}
	return 0;
}

static int device_open(const char *path, char *why, size_t why_len)
{
	int fd, r;

	/* source_fd_open() refuses the kernel's own output; O_RDONLY is 0,
	 * so the extra flag makes it O_RDWR. */
	fd = source_fd_open(path, O_RDWR, why, why_len);
	if (fd == -ENOENT)
		snprintf(why, why_len,
			 "%s does not exist (no TPM 2.0, or its driver is not "
			 "loaded)",
			 path);
	else if (fd == -EBUSY)
		snprintf(why, why_len,
			 "%s is in use by another program (it allows one; "
			 "/dev/tpmrm0 can be shared)",
			 path);
	else if (fd == -EACCES)
		snprintf(why, why_len,
			 "no permission to open %s (root or the tss group)",
			 path);
	if (fd < 0)
		return fd;
	r = check_tpm_chardev(fd, path, why, why_len);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* An fd for the device or socket in @cfg; sets *@is_socket. */
static int tpm_connect(const struct source_config *cfg, bool *is_socket,
		       char *why, size_t why_len)
{
	const char *device = source_config_device(cfg);
	const char *path = socket_path(device);

	*is_socket = path != NULL;
	return path ? socket_connect(path, why, why_len)
		    : device_open(device, why, why_len);
}

static int tpm_probe(const struct source_config *cfg, char *why,
		     size_t why_len)
{
	bool is_socket;
	int fd;

	/* Opening is enough: no command is sent, nothing is consumed. */
	fd = tpm_connect(cfg, &is_socket, why, why_len);
	if (fd < 0)
		return fd;
	close(fd);
	snprintf(why, why_len, "%s", source_config_device(cfg));
	return 0;
}

static int parse_timeout(const struct source_config *cfg, int *ms,
			 char *why, size_t why_len)
{
	const char *v = source_config_get(cfg, "timeout-ms");
	long long n = TPM_TIMEOUT_MS_DEFAULT;

	if (v && parse_ll(v, 1, TPM_TIMEOUT_MS_MAX, &n) < 0) {
		snprintf(why, why_len,
			 "timeout-ms must be an integer from 1 to %d, "
			 "not '%s'",
			 TPM_TIMEOUT_MS_MAX, v);
		return -EINVAL;
	}
	*ms = (int)n;
	return 0;
}

static int tpm_open(const struct source_config *cfg, void **state,
		    char *why, size_t why_len)
{
	struct tpm_state *st;
	int timeout_ms, r;

	r = parse_timeout(cfg, &timeout_ms, why, why_len);
	if (r < 0)
		return r;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->fd = tpm_connect(cfg, &st->is_socket, why, why_len);
	if (st->fd < 0) {
		r = st->fd;
		free(st);
		return r;
	}
	st->timeout_ms = timeout_ms;
	snprintf(st->device, sizeof(st->device), "%s",
		 source_config_device(cfg));
	*state = st;
	return 0;
}

/* ---- one transaction ---------------------------------------------------- */

/*
 * Before a command the stream must be quiet: anything readable now is
 * either the peer closing (a socket) or bytes no command asked for.
 */
static int check_idle(struct tpm_state *st)
{
	struct pollfd p = { .fd = st->fd, .events = POLLIN };
	uint8_t junk[64];
	ssize_t n;

	if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP)))
		return 0;
	n = read(st->fd, junk, sizeof(junk));
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	explicit_bzero(junk, sizeof(junk));
	if (n == 0) {
		snprintf(st->last_error, sizeof(st->last_error),
			 "the TPM closed the connection");
		return -ECONNRESET;
	}
	snprintf(st->last_error, sizeof(st->last_error),
		 "%zd bytes arrived that no command asked for", n);
	return -EPROTO;
}

static int send_command(struct tpm_state *st, uint16_t asked)
{
	uint8_t cmd[TPM2_GET_RANDOM_CMD_SIZE];
	size_t len = tpm2_get_random_command(cmd, asked), done = 0;
	int r;

	r = check_idle(st);
	if (r < 0)
		return r;
	/* Finish the write even across signals: a half-sent command would
	 * leave the TPM waiting for the rest.  A character device takes
	 * the whole command in one write(2) or none of it. */
	while (done < len) {
		ssize_t n = st->is_socket
				    ? send(st->fd, cmd + done, len - done,
					   MSG_NOSIGNAL)
				    : write(st->fd, cmd + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(st->last_error, sizeof(st->last_error),
				 "sending TPM2_GetRandom: %s", strerror(-r));
			return r;
		}
		if (n == 0 || (!st->is_socket && (size_t)n != len)) {
			snprintf(st->last_error, sizeof(st->last_error),
				 "the TPM took %zu of %zu command bytes",
				 done + (size_t)n, len);
			return -EIO;
		}
		done += (size_t)n;
	}
	st->pending = true;
	st->asked = asked;
	st->got = 0;
	st->deadline_ms = now_ms() + st->timeout_ms;
	return 0;
}

/* Wait until the fd is readable or the transaction's deadline passes. */
static int wait_readable(struct tpm_state *st)
{
	struct pollfd p = { .fd = st->fd, .events = POLLIN };
	long long left = st->deadline_ms - now_ms();
	int r;

	if (left < 0)
		left = 0;
	r = poll(&p, 1, (int)left);
	if (r < 0)
		return -errno; /* -EINTR: the caller resumes later */
	if (r == 0) {
		snprintf(st->last_error, sizeof(st->last_error),
			 "no response from the TPM within %d ms%s",
			 st->timeout_ms,
			 st->is_socket ? " (is another client connected?)"
				       : "");
		return -ETIMEDOUT;
	}
	return 0;
}

/*
 * How many bytes the response needs: a header first, then what its size
 * field says, refused when no GetRandom response can be that long.
 */
static int response_need(struct tpm_state *st, size_t *need)
{
	struct tpm2_header hdr;
	int r;

	if (st->got < TPM2_HEADER_SIZE) {
		*need = TPM2_HEADER_SIZE;
		return 0;
	}
	r = tpm2_parse_header(st->rsp, st->got, &hdr, st->last_error,
			      sizeof(st->last_error));
	if (r < 0)
		return r;
	if (hdr.size > TPM2_GET_RANDOM_RSP_SIZE(st->asked)) {
		snprintf(st->last_error, sizeof(st->last_error),
			 "response size field says %u bytes, more than a "
			 "GetRandom of %u can be",
			 hdr.size, st->asked);
		return -EPROTO;
	}
	*need = hdr.size;
	return 0;
}

/* Read the rest of the pending response into st->rsp. */
static int receive_response(struct tpm_state *st)
{
	for (;;) {
		size_t need;
		ssize_t n;
		int r;

		r = response_need(st, &need);
		if (r < 0)
			return r;
		/* More than needed is left for the parser to refuse. */
		if (st->got >= need)
			return 0;
		/* A character device returns the whole response to the
		 * first read(2); a short one is all there will be. */
		if (!st->is_socket && st->got > 0)
			break;
		r = wait_readable(st);
		if (r < 0)
			return r;
		n = read(st->fd, st->rsp + st->got, sizeof(st->rsp) - st->got);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n < 0 && errno == EINTR)
			return -EINTR;
		if (n < 0) {
			r = -errno;
			snprintf(st->last_error, sizeof(st->last_error),
				 "reading the response: %s", strerror(-r));
			return r;
		}
		if (n == 0) {
			if (st->got == 0) {
				snprintf(st->last_error,
					 sizeof(st->last_error),
					 "the TPM closed the connection "
					 "without answering");
				return -ECONNRESET;
			}
			break;
		}
		st->got += (size_t)n;
	}
	snprintf(st->last_error, sizeof(st->last_error),
		 "truncated response: %zu bytes, its header says more",
		 st->got);
	return -EPROTO;
}

/* A "not now" answer: retry, unless they have gone on too long. */
static int not_now(struct tpm_state *st)
{
	long long t = now_ms();

	if (!st->busy_since_ms)
		st->busy_since_ms = t;
	if (t - st->busy_since_ms < TPM_BUSY_LIMIT_MS)
		return -EAGAIN;
	snprintf(st->last_error + strlen(st->last_error),
		 sizeof(st->last_error) - strlen(st->last_error),
		 ", for %d s", TPM_BUSY_LIMIT_MS / 1000);
	return -ETIMEDOUT;
}

/* Check the complete response and copy its bytes to @buf. */
static ssize_t take_response(struct tpm_state *st, void *buf)
{
	struct tpm2_random out;
	ssize_t n;

	n = tpm2_get_random_parse(st->rsp, st->got, st->asked, &out,
				  st->last_error, sizeof(st->last_error));
	if (n > 0) {
		memcpy(buf, out.bytes, (size_t)n);
		st->busy_since_ms = 0;
	} else if (n == 0) {
		snprintf(st->last_error, sizeof(st->last_error),
			 "the TPM returned no bytes");
		n = not_now(st);
	} else if (n == -EAGAIN) {
		n = not_now(st);
	} else if (n == -EIO && out.hdr.code == TPM2_RC_INITIALIZE) {
		snprintf(st->last_error + strlen(st->last_error),
			 sizeof(st->last_error) - strlen(st->last_error),
			 "; TPM2_Startup has not been run");
	}
	explicit_bzero(st->rsp, st->got);
	st->got = 0;
	return n;
}

static ssize_t tpm_read(void *state, void *buf, size_t len)
{
	struct tpm_state *st = state;
	int r;

	if (st->broken)
		return st->broken;
	if (len == 0)
		return 0;
	if (!st->pending) {
		r = send_command(st, len < TPM_ASK_MAX ? (uint16_t)len
						       : TPM_ASK_MAX);
		if (r < 0)
			goto broken;
	}
	r = receive_response(st);
	if (r == -EINTR)
		return r; /* still pending: the next call carries on */
	st->pending = false;
	if (r < 0)
		goto broken;
	r = (int)take_response(st, buf);
	/* A well-formed error response leaves the stream in step; a
	 * malformed one means the peer is not speaking TPM 2.0. */
	if (r == -EPROTO || r == -EBADMSG)
		goto broken;
	return r;
broken:
	explicit_bzero(st->rsp, sizeof(st->rsp));
	st->got = 0;
	st->broken = r;
	return r;
}

static void tpm_close(void *state)
{
	struct tpm_state *st = state;

	if (!st)
		return;
	close(st->fd);
	explicit_bzero(st, sizeof(*st));
	free(st);
}

/*
 * A TPM reached over a unix: socket is a software TPM (swtpm): its
 * randomness is its host kernel's output, so by default it earns nothing;
 * a hardware TPM (a character device) keeps the default.
 */
static unsigned int tpm_device_credit(const struct source_config *cfg)
{
	return socket_path(source_config_device(cfg)) ? 0
						       : cfg->driver->default_credit;
}

static int tpm_check_option(const char *key, const char *value, char *err,
			    size_t err_len)
{
	return source_check_uint(key, value, 1, TPM_TIMEOUT_MS_MAX, err,
				 err_len);
}

static int tpm_describe(void *state, char *buf, size_t len)
{
	struct tpm_state *st = state;

	if (st->last_error[0])
		snprintf(buf, len, "%s (last error: %s)", st->device,
			 st->last_error);
	else
		snprintf(buf, len, "%s", st->device);
	return 0;
}

static bool tpm_guest_owned(const struct source_config *cfg,
			    const char *hw_device)
{
	(void)hw_device;
	return cfg->guest_owned;
}

const struct source_driver source_tpm = {
	.name = "tpm",
	.description = "TPM 2.0 random number generator (TPM2_GetRandom)",
	/*
	 * 64/1024, one bit in 16: 32 bits for a full 64-byte GetRandom.
	 * TCG fixes the RNG's shape (Part 1 §11.4.10: an entropy source
	 * and collector feeding a DRBG per SP 800-90A) but neither an
	 * entropy rate nor a reseed interval, and its reference code
	 * reseeds the DRBG only every 2^20 requests
	 * (CTR_DRBG_MAX_REQUESTS_PER_RESEED).  The assumption here is that
	 * the TPM mixes at least 32 fresh TRNG bits into each answer, as a
	 * hardware TPM that samples its TRNG continuously does; a TPM that
	 * only reseeds as the reference code does earns ~0, and the health
	 * tests cannot tell the two apart.  A software TPM (swtpm draws
	 * from its host kernel through OpenSSL) is a kernel's own output at
	 * one remove: on a unix: socket it defaults to 0 (tpm_device_credit).
	 */
	.default_credit = 64,
	.credit_reason = "64/1024: DRBG output; TCG sets no entropy rate or "
			 "reseed interval, so 32 fresh bits per 64-byte "
			 "answer are assumed; 0 on a unix: socket (a software "
			 "TPM: its host kernel's randomness)",
	.sample_bits = 8,
	/* DRBG output looks like full entropy; the tests catch stuck and
	 * patterned output, which is what fails in the field. */
	.min_entropy = 8.0,
	.flags = SOURCE_F_DEVICE,
	/* The kernel's TPM hw_random device (tpm-rng-N) answers from the
	 * same TPM2_GetRandom: one physical source, one credit. */
	.hw_random_twin = "tpm-rng",
	.default_device = "/dev/tpmrm0",
	.option_keys = tpm_keys,
	.probe = tpm_probe,
	.open = tpm_open,
	.read = tpm_read,
	.close = tpm_close,
	.describe = tpm_describe,
	.device_credit = tpm_device_credit,
	.check_option = tpm_check_option,
	/* A VM's TPM is the host's (QEMU's tpm-crb over swtpm), unless it
	 * runs where the host cannot reach: an SVSM vTPM in the guest's
	 * own VMPL0 (SEV-SNP), which guest-owned=yes declares. */
	.host_provided = "a TPM the host emulates (swtpm behind QEMU's "
			 "tpm-crb or tpm-tis); guest-owned=yes for one the "
			 "host cannot reach (an SVSM vTPM)",
	.guest_owned = tpm_guest_owned,
};
