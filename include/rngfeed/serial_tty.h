/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A serial port for a USB TRNG stick (OneRNG, TrueRNG: CDC-ACM or FTDI
 * ttys), and the USB identity behind a tty.
 *
 * The port is opened O_NOCTTY | O_NONBLOCK (the open never waits for a
 * carrier), exclusive (TIOCEXCL), raw (no echo, no line discipline,
 * VMIN 1 / VTIME 0 for a stream), its input flushed.  It stays
 * non-blocking: every wait is a poll(2) with a bound, and a signal ends
 * it with -EINTR (the reader's wake signal: the source is being stopped).
 *
 * The profiles (serial_profile.h) drive a port through struct
 * serial_port, so a unit test can record what they would do to a device
 * (speeds, DTR, commands) in place of a tty.  No logging here.
 */
#ifndef RNGFEED_SERIAL_TTY_H
#define RNGFEED_SERIAL_TTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What a profile may do to a port.  All return 0 (a count for read) or
 * -errno; -EINTR when a signal interrupted a wait. */
struct serial_port_ops {
	/* All of @len, within @timeout_ms. */
	int (*write)(void *ctx, const void *buf, size_t len, int timeout_ms);
	/* Up to @len bytes within @timeout_ms: > 0 bytes, -EAGAIN when none
	 * came, -ENODEV when the device went away (hang-up, EIO). */
	ssize_t (*read)(void *ctx, void *buf, size_t len, int timeout_ms);
	/* A line speed in baud (a USB device sees SET_LINE_CODING). */
	int (*set_speed)(void *ctx, unsigned int baud);
	/* DTR on or off; -ENOTTY when the port has no modem lines (a
	 * pseudo-terminal). */
	int (*set_dtr)(void *ctx, bool on);
	/* Drop what arrived and was not read yet. */
	int (*flush_input)(void *ctx);
	/* Wait @ms milliseconds; -EINTR when interrupted. */
	int (*pause)(void *ctx, unsigned int ms);
};

struct serial_port {
	const struct serial_port_ops *ops;
	void *ctx;
};

/* ---- the tty ---------------------------------------------------------------- */

struct serial_tty {
	int fd;            /* -1: closed */
	bool no_modem;     /* TIOCMBIS said ENOTTY (a pseudo-terminal) */
};

/*
 * Open @path as above.  It must be a character device and not the
 * kernel's own random output.  0 with @t set, or -errno with @why: one
 * sentence.  ENOENT, ENODEV, ENXIO, and EIO from the open itself (a USB
 * device on its way out), come back as -ENODEV: the device is not there.
 */
int serial_tty_open(struct serial_tty *t, const char *path, char *why,
		    size_t why_len);
/*
 * Close it: the output still queued gets up to @drain_ms to go out (the
 * profile's last commands), then is dropped, so the close never waits
 * for a device that stopped taking data.
 */
void serial_tty_close(struct serial_tty *t, int drain_ms);
/* The port view of an open tty, for the profiles. */
struct serial_port serial_tty_port(struct serial_tty *t);

/* Baud as the termios speed constant, or 0 when it has none. */
unsigned int serial_tty_speed_code(unsigned int baud);

/* ---- the USB identity behind a tty ---------------------------------------- */

struct serial_usb_id {
	uint16_t vendor, product;
	char tty[32];          /* the kernel's name: ttyACM0 */
	char manufacturer[64]; /* USB strings, "" when absent */
	char product_name[64];
};

/*
 * The USB device behind the character device @rdev: its sysfs node is
 * @sysfs_root/dev/char/MAJOR:MINOR (@sysfs_root "/sys", or a test's
 * fixture), and the first directory up from it with idVendor and
 * idProduct is the USB device (a CDC-ACM tty hangs off its interface, an
 * FTDI port one level further).  1 found, 0 not a USB device (a
 * pseudo-terminal, a built-in UART), -errno when sysfs cannot be read.
 * The tty's name is filled in either way when sysfs has it.
 */
int serial_usb_id(const char *sysfs_root, dev_t rdev, struct serial_usb_id *id);

#endif
