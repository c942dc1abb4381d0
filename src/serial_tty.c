// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A serial port for a USB TRNG stick, and the USB identity behind a tty.
 * See include/rngfeed/serial_tty.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/serial_tty.h"
#include "rngfeed/source.h"
#include "rngfeed/util.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until @deadline, at least 0. */
static int left_ms(long long deadline)
{
	long long left = deadline - now_ms();

	return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* ---- open and close ------------------------------------------------------------- */

static bool absent_errno(int e)
{
	return e == ENOENT || e == ENODEV || e == ENXIO || e == EIO;
}

int serial_tty_open(struct serial_tty *t, const char *path, char *why,
		    size_t why_len)
{
	struct termios tio;
	struct stat st;
	int fd, r;

	t->fd = -1;
	t->no_modem = false;
	/* O_NONBLOCK: the open never waits for a carrier (CLOCAL is not
	 * set yet); it stays set, every wait is a poll with a bound. */
	fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = errno;
		snprintf(why, why_len, "cannot open %s: %s", path,
			 strerror(r));
		return absent_errno(r) ? -ENODEV : -r;
	}
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
		snprintf(why, why_len, "%s is not a character device", path);
		r = -ENOTTY;
		goto fail;
	}
	if (source_fd_is_kernel_output(fd) == 1) {
		snprintf(why, why_len, "refusing %s: %s", path,
			 SOURCE_LOOPBACK_REASON);
		r = -ELOOP;
		goto fail;
	}
	if (tcgetattr(fd, &tio) < 0) {
		r = -errno;
		snprintf(why, why_len, "%s is not a serial port (%s)", path,
			 strerror(-r));
		if (absent_errno(-r))
			r = -ENODEV;
		goto fail;
	}
	/* Nobody else opens it while it is read (root still can). */
	if (ioctl(fd, TIOCEXCL) < 0) {
		r = -errno;
		snprintf(why, why_len, "cannot make %s exclusive: %s", path,
			 strerror(-r));
		goto fail;
	}
	/* Raw: no echo (a OneRNG would read its own output back as
	 * commands), no line discipline, no flow control, 8 bits; a
	 * local line that reads.  VMIN 1, VTIME 0: a read returns what has
	 * come (it is non-blocking anyway). */
	cfmakeraw(&tio);
	tio.c_cflag |= CLOCAL | CREAD;
	tio.c_cflag &= ~(CRTSCTS | CSTOPB);
	tio.c_iflag &= ~(IXON | IXOFF | IXANY);
	tio.c_cc[VMIN] = 1;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSANOW, &tio) < 0) {
		r = -errno;
		snprintf(why, why_len, "cannot set %s raw: %s", path,
			 strerror(-r));
		if (absent_errno(-r))
			r = -ENODEV;
		goto fail;
	}
	/* What came before we owned it is not ours to test. */
	(void)tcflush(fd, TCIFLUSH);
	t->fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

void serial_tty_close(struct serial_tty *t, int drain_ms)
{
	long long deadline = now_ms() + drain_ms;
	int queued = 0;

	if (t->fd < 0)
		return;
	/* The last commands may go out; a device that takes no more must
	 * not hold the close (the tty layer would wait up to 30 s for the
	 * queue to drain).  Not poll: the reader's wake signal keeps
	 * coming while it stops. */
	while (ioctl(t->fd, TIOCOUTQ, &queued) == 0 && queued > 0 &&
	       now_ms() < deadline) {
		struct timespec ts = { 0, 5 * 1000000L };

		nanosleep(&ts, NULL);
	}
	/* Only what is still queued: on a pseudo-terminal this would drop
	 * what the other side has not read yet. */
	if (queued > 0)
		(void)tcflush(t->fd, TCOFLUSH);
	(void)ioctl(t->fd, TIOCNXCL);
	close(t->fd);
	t->fd = -1;
}

/* ---- the port ----------------------------------------------------------------- */

static int tty_write(void *ctx, const void *buf, size_t len, int timeout_ms)
{
	struct serial_tty *t = ctx;
	const char *p = buf;
	long long deadline = now_ms() + timeout_ms;

	while (len > 0) {
		struct pollfd pfd = { .fd = t->fd, .events = POLLOUT };
		ssize_t n = write(t->fd, p, len);
		int r;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			return -EINTR;
		if (n < 0 && errno != EAGAIN)
			return absent_errno(errno) ? -ENODEV : -errno;
		r = poll(&pfd, 1, left_ms(deadline));
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL))
			return -ENODEV;
	}
	return 0;
}

static ssize_t tty_read(void *ctx, void *buf, size_t len, int timeout_ms)
{
	struct serial_tty *t = ctx;
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
	ssize_t n;
	int r;

	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -EAGAIN;
	/* Data first: a hang-up may come with bytes still to read (a
	 * pseudo-terminal drops them; a USB tty may not). */
	n = read(t->fd, buf, len);
	if (n > 0)
		return n;
	if (n < 0 && errno == EINTR)
		return -EINTR;
	if (n < 0 && errno == EAGAIN)
		return (pfd.revents & (POLLHUP | POLLERR)) ? -ENODEV : -EAGAIN;
	/* End of file on a tty is a hang-up: the device went away (a USB
	 * stick unplugged, a pseudo-terminal's master closed); so is EIO. */
	return -ENODEV;
}

static const struct {
	unsigned int baud;
	speed_t code;
} speeds[] = {
	{ 110, B110 },     { 300, B300 },       { 600, B600 },
	{ 1200, B1200 },   { 2400, B2400 },     { 4800, B4800 },
	{ 9600, B9600 },   { 19200, B19200 },   { 38400, B38400 },
	{ 57600, B57600 }, { 115200, B115200 }, { 230400, B230400 },
};

unsigned int serial_tty_speed_code(unsigned int baud)
{
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (speeds[i].baud == baud)
			return (unsigned int)speeds[i].code;
	return 0;
}

static int tty_set_speed(void *ctx, unsigned int baud)
{
	struct serial_tty *t = ctx;
	speed_t code = (speed_t)serial_tty_speed_code(baud);
	struct termios tio;

	if (!code)
		return -EINVAL;
	if (tcgetattr(t->fd, &tio) < 0 || cfsetspeed(&tio, code) < 0 ||
	    tcsetattr(t->fd, TCSANOW, &tio) < 0)
		return absent_errno(errno) ? -ENODEV : -errno;
	return 0;
}

static int tty_set_dtr(void *ctx, bool on)
{
	struct serial_tty *t = ctx;
	int bits = TIOCM_DTR;

	if (ioctl(t->fd, on ? TIOCMBIS : TIOCMBIC, &bits) == 0)
		return 0;
	if (errno == ENOTTY || errno == EINVAL) {
		t->no_modem = true;
		return -ENOTTY;
	}
	return absent_errno(errno) ? -ENODEV : -errno;
}

static int tty_flush_input(void *ctx)
{
	struct serial_tty *t = ctx;

	return tcflush(t->fd, TCIFLUSH) < 0 ? -errno : 0;
}

static int tty_pause(void *ctx, unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	(void)ctx;
	return nanosleep(&ts, NULL) < 0 ? -errno : 0;
}

static const struct serial_port_ops tty_ops = {
	.write = tty_write,
	.read = tty_read,
	.set_speed = tty_set_speed,
	.set_dtr = tty_set_dtr,
	.flush_input = tty_flush_input,
	.pause = tty_pause,
};

struct serial_port serial_tty_port(struct serial_tty *t)
{
	return (struct serial_port){ .ops = &tty_ops, .ctx = t };
}

/* ---- the USB identity ------------------------------------------------------------ */

/* A hexadecimal sysfs attribute of 4 digits (idVendor). */
static int read_hex16(const char *dir, const char *name, uint16_t *out)
{
	char path[PATH_MAX], buf[16], *end;
	unsigned long v;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if (read_text_file(path, buf, sizeof(buf)) < 0)
		return -ENOENT;
	errno = 0;
	v = strtoul(buf, &end, 16);
	if (errno || *end || end == buf || v > 0xffff)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

static void read_string(const char *dir, const char *name, char *out,
			size_t len)
{
	char path[PATH_MAX];

	out[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) <
		    (int)sizeof(path) &&
	    read_text_file(path, out, len) < 0)
		out[0] = '\0';
}

int serial_usb_id(const char *sysfs_root, dev_t rdev, struct serial_usb_id *id)
{
	char link[PATH_MAX], dir[PATH_MAX];
	size_t root_len = strlen(sysfs_root);
	const char *base;

	memset(id, 0, sizeof(*id));
	if (snprintf(link, sizeof(link), "%s/dev/char/%u:%u", sysfs_root,
		     major(rdev), minor(rdev)) >= (int)sizeof(link))
		return -ENAMETOOLONG;
	if (!realpath(link, dir))
		return -errno;
	/* The tty's own directory is named after it. */
	base = strrchr(dir, '/');
	base = base ? base + 1 : dir;
	if (strlen(base) < sizeof(id->tty))
		memcpy(id->tty, base, strlen(base) + 1);
	/* Up from the tty, at most a few levels (the port, the interface,
	 * the device), never above the sysfs root. */
	for (int up = 0; up < 6; up++) {
		char *slash;

		if (read_hex16(dir, "idVendor", &id->vendor) == 0 &&
		    read_hex16(dir, "idProduct", &id->product) == 0) {
			read_string(dir, "manufacturer", id->manufacturer,
				    sizeof(id->manufacturer));
			read_string(dir, "product", id->product_name,
				    sizeof(id->product_name));
			return 1;
		}
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) <= root_len)
			break;
		*slash = '\0';
	}
	id->vendor = id->product = 0;
	return 0;
}
