// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The serial source: its profiles driven through a recording port (what
 * a OneRNG is told and in which order, the TrueRNGpro's knock and DTR),
 * the OneRNG's version answer, the TrueRNGpro's raw-binary decoder, the
 * USB identity behind a tty in a fixture sysfs, and the driver itself on
 * a pseudo-terminal (data, a hang-up, what the device choice credits).
 *
 * A pty has no modem lines (TIOCMBIS: ENOTTY) and cannot show the speeds
 * a tty went through, only the last one: the recorder is where the whole
 * sequence is seen; tests/test_serial.sh drives the real daemon against
 * tests/helper_ttyrng, which watches the speeds as they come.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "rngfeed/serial_profile.h"
#include "rngfeed/serial_tty.h"
#include "rngfeed/source.h"
#include "rngfeed/sources.h"
#include "test_doubles.h"

/* ---- a port that records ------------------------------------------------------ */

struct rec {
	char log[2048];         /* "w:cmdo|p:100|f|..." */
	const uint8_t *in;      /* what reads return, in turn */
	size_t in_len, in_at;
	size_t chunk;           /* at most this much per read; 0: all */
	int read_error;         /* once the input is used up: this, or
				 * -EAGAIN when 0 */
	int dtr_error;          /* set_dtr's answer */
	int reads;
	/* Once this command is written, reads return @answer instead. */
	const char *answer_on;
	const uint8_t *answer;
	size_t answer_len;
	bool endless;           /* the input starts over when used up */
	uint8_t joined[16384];  /* what is left of the input, then @answer */
};

static void note(struct rec *r, const char *fmt, const char *arg,
		 unsigned int n)
{
	size_t at = strlen(r->log);

	snprintf(r->log + at, sizeof(r->log) - at, fmt, arg, n);
}

static int rec_write(void *ctx, const void *buf, size_t len, int timeout_ms)
{
	char text[64];

	(void)timeout_ms;
	struct rec *r = ctx;

	snprintf(text, sizeof(text), "%.*s", (int)len, (const char *)buf);
	text[strcspn(text, "\n")] = '\0';
	note(ctx, "w:%s|", text, 0);
	if (r->answer_on && strcmp(text, r->answer_on) == 0) {
		/* The answer comes after what was still on its way. */
		size_t left = r->in_len - r->in_at;

		ck_assert_uint_le(left + r->answer_len, sizeof(r->joined));
		if (left > 0) /* r->in may be NULL: nothing was queued */
			memmove(r->joined, r->in + r->in_at, left);
		memcpy(r->joined + left, r->answer, r->answer_len);
		r->in = r->joined;
		r->in_len = left + r->answer_len;
		r->in_at = 0;
	}
	return 0;
}

static ssize_t rec_read(void *ctx, void *buf, size_t len, int timeout_ms)
{
	struct rec *r = ctx;
	size_t n = r->in_len - r->in_at;

	r->reads++;
	if (n == 0 && r->endless && r->in_len) {
		r->in_at = 0;
		n = r->in_len;
	}
	if (n == 0 && r->read_error)
		return r->read_error;
	if (n == 0) {
		/* A real port waits this long for nothing. */
		struct timespec ts = { timeout_ms / 1000,
				       (long)(timeout_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		return -EAGAIN;
	}
	if (r->chunk && n > r->chunk)
		n = r->chunk;
	if (n > len)
		n = len;
	memcpy(buf, r->in + r->in_at, n);
	r->in_at += n;
	return (ssize_t)n;
}

static int rec_speed(void *ctx, unsigned int baud)
{
	note(ctx, "%s%u|", "s:", baud);
	return 0;
}

static int rec_dtr(void *ctx, bool on)
{
	struct rec *r = ctx;

	note(ctx, "%s%u|", "d:", on);
	return r->dtr_error;
}

static int rec_flush(void *ctx)
{
	note(ctx, "%sf|", "", 0);
	return 0;
}

static int rec_pause(void *ctx, unsigned int ms)
{
	note(ctx, "%s%u|", "p:", ms);
	return 0;
}

static const struct serial_port_ops rec_ops = {
	.write = rec_write, .read = rec_read, .set_speed = rec_speed,
	.set_dtr = rec_dtr, .flush_input = rec_flush, .pause = rec_pause,
};

static void session_on(struct serial_session *s, struct rec *r,
		       const char *profile, uint16_t vendor, uint16_t product)
{
	const struct serial_profile *p = serial_profile_find(profile);

	ck_assert_ptr_nonnull(p);
	serial_session_init(s, (struct serial_port){ &rec_ops, r }, p,
			    vendor ? serial_profile_model(p, vendor, product)
				   : NULL);
}

/* ---- the profiles' table ------------------------------------------------------- */

START_TEST(test_profile_table)
{
	ck_assert_ptr_nonnull(serial_profile_find("onerng"));
	ck_assert_ptr_nonnull(serial_profile_find("truerng"));
	ck_assert_ptr_eq(serial_profile_find("generic"), &serial_profile_generic);
	ck_assert_ptr_null(serial_profile_find("auto"));
	ck_assert_uint_eq(serial_profile_generic.credit, 0);
	for (size_t i = 0; serial_profiles[i]; i++) {
		const struct serial_profile *p = serial_profiles[i];
		/* The credit rule: never above 1024 x H / 8. */
		unsigned int cap = (unsigned int)(1024 * p->min_entropy / 8);

		ck_assert_msg(p->credit <= cap, "%s: %u > %u", p->name,
			      p->credit, cap);
		ck_assert_ptr_nonnull(p->credit_reason);
		for (const struct serial_model *m = p->models; m->vendor; m++) {
			const struct serial_model *found = NULL;

			ck_assert_msg(m->credit <= cap, "%s: %u > %u", m->name,
				      m->credit, cap);
			/* Every id belongs to one profile. */
			ck_assert_ptr_eq(serial_profile_for_usb(m->vendor,
								m->product,
								&found),
					 p);
			ck_assert_ptr_eq(found, m);
		}
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(p->name, serial_profiles[j]->name);
	}
	ck_assert_ptr_null(serial_profile_for_usb(0x0403, 0x6001, NULL));
}
END_TEST

/* ---- OneRNG -------------------------------------------------------------------- */

START_TEST(test_onerng_version)
{
	static const struct {
		const char *in;
		ssize_t at;
		const char *version;
	} cases[] = {
		{ "\r\nVersion 3\r\nAB", 13, "Version 3" },
		{ "xx\r\nVersion 2\r\n", 15, "Version 2" },
		{ "\r\nVersion 3", -1, "" },        /* no line end yet */
		{ "\r\nVers", -1, "" },
		{ "no answer at all\n", -1, "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char v[32] = "";
		ssize_t at = serial_onerng_version((const uint8_t *)cases[i].in,
						   strlen(cases[i].in), v,
						   sizeof(v));

		ck_assert_int_eq(at, cases[i].at);
		if (at >= 0)
			ck_assert_str_eq(v, cases[i].version);
	}
}
END_TEST

/*
 * Started: paused, its in-flight whitened data dropped, whitener off
 * (cmd1) before anything runs, pool flushed, version asked, run; the
 * answer's line taken off and the bytes after it are the first data.
 * Stopped: paused, whitener on (cmd0), pool flushed.
 */
START_TEST(test_onerng_start_stop)
{
	static const char answer[] = "\r\nVersion 3\r\nDATA";
	struct serial_session s;
	struct rec r = { .answer = (const uint8_t *)answer,
			 .answer_len = sizeof(answer) - 1, .answer_on = "cmdO",
			 .chunk = 5 };
	char why[256] = "";
	uint8_t buf[16];
	ssize_t n;

	session_on(&s, &r, "onerng", 0x1d50, 0x6086);
	ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)), 0);
	ck_assert_str_eq(r.log, "w:cmdo|f|w:cmd1|w:cmdw|w:cmdv|w:cmdO|");
	ck_assert_str_eq(s.detail, "Version 3");
	/* The answer came in pieces: what followed its line end first. */
	n = serial_session_read(&s, buf, sizeof(buf), 100, why, sizeof(why));
	ck_assert_int_eq(n, 2);
	n += serial_session_read(&s, buf + n, sizeof(buf) - (size_t)n, 100, why,
				 sizeof(why));
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(memcmp(buf, "DATA", 4), 0);
	r.log[0] = '\0';
	serial_session_stop(&s);
	ck_assert_str_eq(r.log, "w:cmdo|w:cmd0|w:cmdw|");
}
END_TEST

/* What it sent before it paused (here 10 KiB still on its way, which a
 * flush cannot reach) is drained and dropped, so that its answer to cmdv
 * is found after it.  Fails on the code before (the answer was looked for
 * among the first 4 KiB: -EPROTO). */
START_TEST(test_onerng_drains_backlog)
{
	static uint8_t backlog[10240];
	static const char answer[] = "\r\nVersion 3\r\nXY";
	struct serial_session s;
	struct rec r = { .in = backlog, .in_len = sizeof(backlog), .chunk = 512,
			 .answer = (const uint8_t *)answer,
			 .answer_len = sizeof(answer) - 1, .answer_on = "cmdO" };
	char why[256] = "";
	uint64_t seed = 3;
	uint8_t buf[4];

	for (size_t i = 0; i < sizeof(backlog); i++)
		backlog[i] = (uint8_t)(td_xorshift64(&seed) & 0x7f);
	session_on(&s, &r, "onerng", 0x1d50, 0x6086);
	ck_assert_msg(serial_session_start(&s, why, sizeof(why)) == 0, "%s", why);
	ck_assert_str_eq(s.detail, "Version 3");
	ck_assert_int_eq(serial_session_read(&s, buf, sizeof(buf), 100, why,
					     sizeof(why)),
			 2);
	ck_assert_int_eq(memcmp(buf, "XY", 2), 0);
}
END_TEST

/* No answer to cmdv: not a OneRNG; and one that goes away mid-start. */
START_TEST(test_onerng_no_answer)
{
	struct serial_session s;
	struct rec r = { 0 };
	char why[256] = "";

	session_on(&s, &r, "onerng", 0, 0);
	ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)), -ETIMEDOUT);
	ck_assert_msg(strstr(why, "cmdv"), "why: %s", why);
	/* Bounded: about 2 s of 100 ms reads. */
	ck_assert_int_le(r.reads, 21);

	/* A stream without the answer in it (a stick that ignores cmdv
	 * and never pauses): given up after 4 KiB, not read for ever. */
	{
		static uint8_t noise[8192];
		uint64_t seed = 7;

		for (size_t i = 0; i < sizeof(noise); i++)
			noise[i] = (uint8_t)(td_xorshift64(&seed) & 0x7f);
		memset(&r, 0, sizeof(r));
		r.answer = noise;
		r.answer_len = sizeof(noise);
		r.answer_on = "cmdO";
		session_on(&s, &r, "onerng", 0, 0);
		ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)),
				 -EPROTO);
		ck_assert_msg(strstr(why, "first 4096 bytes"), "why: %s", why);
		ck_assert_uint_le(r.in_at, 4096 + 96);
	}

	/* A line that never goes quiet after cmdo: given up after 5 s. */
	{
		static uint8_t noise[4096];
		struct rec busy = { .in = noise, .in_len = sizeof(noise),
				    .chunk = 64, .endless = true };

		session_on(&s, &busy, "onerng", 0, 0);
		ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)),
				 -EBUSY);
		ck_assert_msg(strstr(why, "kept sending"), "why: %s", why);
	}

	memset(&r, 0, sizeof(r));
	r.read_error = -ENODEV;
	session_on(&s, &r, "onerng", 0, 0);
	ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)), -ENODEV);
}
END_TEST

/* ---- TrueRNG ------------------------------------------------------------------- */

START_TEST(test_truerng_knock)
{
	struct serial_session s;
	struct rec r = { .dtr_error = -ENOTTY };
	char why[256] = "";

	/* A Pro: the knock, 19200 (raw binary), then DTR; a pty's ENOTTY
	 * for DTR is no error. */
	session_on(&s, &r, "truerng", 0x16d0, 0x0aa0);
	ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)), 0);
	ck_assert_str_eq(r.log, "d:0|s:9600|s:110|p:100|s:300|p:100|s:110|p:100|"
				"s:19200|p:100|d:1|p:100|f|");
	ck_assert(s.raw);
	r.log[0] = '\0';
	serial_session_stop(&s);
	ck_assert_str_eq(r.log, "d:0|");

	/* v1-v3: no modes, its whitened output. */
	memset(&r, 0, sizeof(r));
	session_on(&s, &r, "truerng", 0x04d8, 0xf5fe);
	ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)), 0);
	ck_assert_str_eq(r.log, "d:0|d:1|p:100|f|");
	ck_assert(!s.raw);

	/* An id it does not know: knocked, and the packets will tell. */
	memset(&r, 0, sizeof(r));
	session_on(&s, &r, "truerng", 0, 0);
	ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)), 0);
	ck_assert(s.raw);
	ck_assert_ptr_nonnull(strstr(r.log, "s:110|p:100|s:300|p:100|s:110|"));

	/* DTR refused for another reason: an error (before any knock). */
	memset(&r, 0, sizeof(r));
	r.dtr_error = -EIO;
	session_on(&s, &r, "truerng", 0x04d8, 0xf5fe);
	ck_assert_int_eq(serial_session_start(&s, why, sizeof(why)), -EIO);
}
END_TEST

/* Raw-binary packets of (g1, g2) samples. */
static size_t packets(uint8_t *out, const uint16_t (*samples)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint16_t a = samples[i][0], b = samples[i][1];

		out[4 * i] = (uint8_t)(0x00 | (a >> 6));
		out[4 * i + 1] = (uint8_t)(0x40 | (a & 0x3f));
		out[4 * i + 2] = (uint8_t)(0x80 | (b >> 6));
		out[4 * i + 3] = (uint8_t)(0xc0 | (b & 0x3f));
	}
	return 4 * n;
}

/* Decoded: one byte per packet, g1's low nibble then g2's; whole or in
 * pieces of any size, from any starting byte. */
START_TEST(test_truerng_decode)
{
	static const uint16_t samples[][2] = {
		{ 0x3a5, 0x1f3 }, { 0x200, 0x2ff }, { 0x001, 0x3fe }, { 0x18c, 0x271 },
	};
	static const uint8_t want[] = { 0x53, 0x0f, 0x1e, 0xc1 };
	uint8_t line[64], out[64], got[64];
	size_t n = packets(line, samples, 4);
	char why[256];

	for (size_t piece = 1; piece <= n; piece++) {
		struct serial_session s;
		struct rec r = { 0 };
		size_t k = 0;

		session_on(&s, &r, "truerng", 0x16d0, 0x0aa0);
		s.raw = true;
		for (size_t at = 0; at < n; at += piece) {
			size_t len = n - at < piece ? n - at : piece;
			ssize_t d = s.profile->decode(&s, line + at, len, out,
						      why, sizeof(why));

			ck_assert_int_ge(d, 0);
			memcpy(got + k, out, (size_t)d);
			k += (size_t)d;
		}
		ck_assert_uint_eq(k, sizeof(want));
		ck_assert_int_eq(memcmp(got, want, k), 0);
	}
	/* Entered mid-packet: the partial packet is dropped, no error. */
	{
		struct serial_session s;
		struct rec r = { 0 };
		ssize_t d;

		session_on(&s, &r, "truerng", 0x16d0, 0x0aa0);
		s.raw = true;
		d = s.profile->decode(&s, line + 2, n - 2, out, why, sizeof(why));
		ck_assert_int_eq(d, 3);
		ck_assert_int_eq(memcmp(out, want + 1, 3), 0);
	}
}
END_TEST

/* A few bytes out of step are dropped with their packets; a line in
 * another mode (whitened bytes: 3 in 4 have a wrong code) is refused
 * within one window. */
START_TEST(test_truerng_out_of_step)
{
	uint8_t line[8192], out[8192];
	uint16_t samples[2048][2];
	uint64_t seed = 0x5eed;
	struct serial_session s;
	struct rec r = { 0 };
	char why[256] = "";
	ssize_t d;
	size_t n;

	for (size_t i = 0; i < 2048; i++) {
		samples[i][0] = (uint16_t)(td_xorshift64(&seed) & 0x3ff);
		samples[i][1] = (uint16_t)(td_xorshift64(&seed) & 0x3ff);
	}
	n = packets(line, (const uint16_t (*)[2])samples, 2048);
	/* Four bytes lost at spread places (a USB packet dropped). */
	for (size_t k = 1; k <= 4; k++)
		line[k * 1500] ^= 0x40;
	session_on(&s, &r, "truerng", 0x16d0, 0x0aa0);
	s.raw = true;
	d = s.profile->decode(&s, line, n, out, why, sizeof(why));
	ck_assert_int_ge(d, 2048 - 8);
	ck_assert_int_lt(d, 2048);
	ck_assert_uint_ge(s.out_of_step, 4);

	/* Whitened bytes: refused. */
	for (size_t i = 0; i < sizeof(line); i++)
		line[i] = (uint8_t)td_xorshift64(&seed);
	session_on(&s, &r, "truerng", 0x16d0, 0x0aa0);
	s.raw = true;
	d = s.profile->decode(&s, line, SERIAL_DECODE_WINDOW, out, why,
			      sizeof(why));
	ck_assert_int_eq(d, -EBADMSG);
	ck_assert_msg(strstr(why, "not the raw binary mode"), "why: %s", why);
}
END_TEST

/* ---- the USB identity in sysfs --------------------------------------------------- */

static char base[128];

static void mkdirs(const char *path)
{
	char p[512];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

/* @text in @dir/@name (paths longer than td_put() takes). */
static void put_attr(const char *dir, const char *name, const char *text)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* A fixture: @root/dev/char/MAJ:MIN -> the tty's directory @tty_dir
 * (relative to @root/devices), and idVendor/idProduct in @usb_dir. */
static void fixture(const char *root, unsigned int maj, unsigned int min,
		    const char *tty_dir, const char *usb_dir, const char *vid,
		    const char *pid, const char *product)
{
	char path[512], target[512], text[64];

	snprintf(path, sizeof(path), "%s/dev/char", root);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/devices/%s", root, tty_dir);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/dev/char/%u:%u", root, maj, min);
	snprintf(target, sizeof(target), "../../devices/%s", tty_dir);
	unlink(path);
	ck_assert_int_eq(symlink(target, path), 0);
	if (!usb_dir)
		return;
	snprintf(path, sizeof(path), "%s/devices/%s", root, usb_dir);
	snprintf(text, sizeof(text), "%s\n", vid);
	put_attr(path, "idVendor", text);
	snprintf(text, sizeof(text), "%s\n", pid);
	put_attr(path, "idProduct", text);
	snprintf(text, sizeof(text), "%s\n", product);
	put_attr(path, "product", text);
}

START_TEST(test_usb_id)
{
	char root[256];
	struct serial_usb_id id;

	td_dir_make(root, sizeof(root), base);
	/* CDC-ACM: the tty hangs off the interface of the USB device. */
	fixture(root, 166, 0, "pci0000:00/usb1/1-1/1-1:1.0/tty/ttyACM0",
		"pci0000:00/usb1/1-1", "1d50", "6086", "00");
	ck_assert_int_eq(serial_usb_id(root, makedev(166, 0), &id), 1);
	ck_assert_uint_eq(id.vendor, 0x1d50);
	ck_assert_uint_eq(id.product, 0x6086);
	ck_assert_str_eq(id.tty, "ttyACM0");
	/* FTDI: one level further (the usb-serial port). */
	fixture(root, 188, 0,
		"pci0000:00/usb2/2-1/2-1:1.0/ttyUSB0/tty/ttyUSB0",
		"pci0000:00/usb2/2-1", "0403", "6001", "QEMU USB SERIAL");
	ck_assert_int_eq(serial_usb_id(root, makedev(188, 0), &id), 1);
	ck_assert_uint_eq(id.vendor, 0x0403);
	ck_assert_str_eq(id.product_name, "QEMU USB SERIAL");
	/* A pseudo-terminal: no USB device above it. */
	fixture(root, 136, 3, "virtual/tty/pts3", NULL, NULL, NULL, NULL);
	ck_assert_int_eq(serial_usb_id(root, makedev(136, 3), &id), 0);
	ck_assert_str_eq(id.tty, "pts3");
	/* Not in sysfs at all. */
	ck_assert_int_lt(serial_usb_id(root, makedev(1, 99), &id), 0);
}
END_TEST

/* ---- the driver on a pseudo-terminal ------------------------------------------- */

struct pty {
	int master;
	char link[256];
	struct stat st;
};

/* A pty whose slave is reached through @dir/tty. */
static void pty_open(struct pty *p, const char *dir)
{
	const char *name;

	p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	ck_assert_int_ge(p->master, 0);
	ck_assert_int_eq(grantpt(p->master), 0);
	ck_assert_int_eq(unlockpt(p->master), 0);
	name = ptsname(p->master);
	ck_assert_ptr_nonnull(name);
	snprintf(p->link, sizeof(p->link), "%s/tty", dir);
	unlink(p->link);
	ck_assert_int_eq(symlink(name, p->link), 0);
	ck_assert_int_eq(stat(p->link, &p->st), 0);
}

static void config(struct source_config *c, const char *device,
		   const char *profile, const char *sysfs)
{
	char err[256];

	source_config_init(c, &source_serial);
	if (device)
		ck_assert_int_eq(source_config_set(c, "device", device, err,
						   sizeof(err)), 0);
	if (profile)
		ck_assert_int_eq(source_config_set(c, "profile", profile, err,
						   sizeof(err)), 0);
	if (sysfs)
		ck_assert_int_eq(source_config_set(c, "sysfs", sysfs, err,
						   sizeof(err)), 0);
}

/* A generic tty: what the pty's master writes is read; the master
 * closed (the device unplugged) is -ENODEV with the driver's words. */
START_TEST(test_driver_reads_and_sees_hangup)
{
	char dir[256], why[SOURCE_WHY_LEN], desc[SOURCE_WHY_LEN];
	uint8_t data[300], got[300];
	struct source_config c;
	struct source *src;
	struct pty p;
	ssize_t n;

	td_dir_make(dir, sizeof(dir), base);
	pty_open(&p, dir);
	config(&c, p.link, "generic", NULL);
	ck_assert_int_eq(source_driver_find("serial")->probe(&c, why,
							      sizeof(why)),
			 0);
	src = td_source_open(&c);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	ck_assert_int_eq(write(p.master, data, sizeof(data)), sizeof(data));
	n = source_read(src, got, sizeof(got), NULL);
	ck_assert_int_eq(n, sizeof(got));
	ck_assert_int_eq(memcmp(got, data, sizeof(got)), 0);
	source_describe(src, desc, sizeof(desc));
	ck_assert_msg(strstr(desc, "profile generic"), "%s", desc);
	close(p.master);
	n = source_read(src, got, sizeof(got), NULL);
	ck_assert_int_eq(n, -ENODEV);
	ck_assert_str_eq(source_why_failed(src, (int)n, why, sizeof(why)),
			 "the device went away (hang-up)");
	source_close(src);
}
END_TEST

/* Not there: the reader's "absent" errors; not a tty: refused. */
START_TEST(test_driver_absent_and_not_a_tty)
{
	char dir[256], path[300], why[SOURCE_WHY_LEN] = "";
	struct source_config c;
	struct source *src = NULL;

	td_dir_make(dir, sizeof(dir), base);
	snprintf(path, sizeof(path), "%s/gone", dir);
	config(&c, path, "onerng", NULL);
	ck_assert(source_open_error_is_absent(
		source_open(&src, &c, why, sizeof(why))));
	ck_assert_msg(strstr(why, "not plugged in"), "%s", why);
	put_attr(dir, "file", "x");
	snprintf(path, sizeof(path), "%s/file", dir);
	config(&c, path, "onerng", NULL);
	ck_assert_int_eq(source_open(&src, &c, why, sizeof(why)), -ENOTTY);
	/* No device at all: not waited for. */
	config(&c, NULL, "onerng", NULL);
	ck_assert_int_eq(source_driver_find("serial")->probe(&c, why,
							      sizeof(why)),
			 -ENOENT);
	ck_assert_msg(strstr(why, "no device given"), "%s", why);
}
END_TEST

/*
 * Which credit and H: a named profile on a tty with no known USB id gets
 * the profile's ceiling and H; auto on it is generic (0, H 6); a USB id
 * decides for auto; a device whose id is another profile's gets 0 under
 * the wrong name, with a warning; profile=auto on a missing device is 0
 * with a warning that says to name it.
 */
START_TEST(test_driver_credit_choice)
{
	char dir[256], root[300], sysfs[300], why[SOURCE_WHY_LEN];
	struct source_config c;
	struct pty p;
	char gone[320];

	td_dir_make(dir, sizeof(dir), base);
	pty_open(&p, dir);
	config(&c, p.link, "onerng", NULL);
	ck_assert_uint_eq(source_config_credit(&c), 768);
	ck_assert(source_config_min_entropy(&c) == 6.0);
	config(&c, p.link, "truerng", NULL);
	ck_assert_uint_eq(source_config_credit(&c), 512);
	ck_assert(source_config_min_entropy(&c) == 4.0);
	ck_assert_uint_eq(source_credit_cap(&c), 512);
	config(&c, p.link, NULL, NULL);
	ck_assert_uint_eq(source_config_credit(&c), 0);
	config(&c, p.link, "generic", NULL);
	ck_assert_uint_eq(source_config_credit(&c), 0);

	/* The same pty, seen through a fixture sysfs as a TrueRNG v3. */
	snprintf(root, sizeof(root), "%s/sys", dir);
	fixture(root, major(p.st.st_rdev), minor(p.st.st_rdev),
		"pci0000:00/usb1/1-2/1-2:1.0/tty/ttyACM1", "pci0000:00/usb1/1-2",
		"04d8", "f5fe", "TrueRNG");
	snprintf(sysfs, sizeof(sysfs), "%s", root);
	config(&c, p.link, NULL, sysfs);
	ck_assert_uint_eq(source_config_credit(&c), 64);
	ck_assert(source_config_min_entropy(&c) == 4.0);
	ck_assert_int_eq(source_driver_find("serial")->probe(&c, why,
							      sizeof(why)),
			 0);
	ck_assert_msg(strstr(why, "TrueRNG 04d8:f5fe") &&
			      strstr(why, "profile truerng (auto)"),
		      "%s", why);
	config(&c, p.link, "onerng", sysfs);
	ck_assert_uint_eq(source_config_credit(&c), 0);
	ck_assert_int_eq(source_config_warning(&c, why, sizeof(why)), 1);
	ck_assert_msg(strstr(why, "credited 0"), "%s", why);

	snprintf(gone, sizeof(gone), "%s/gone", dir);
	config(&c, gone, NULL, NULL);
	ck_assert_uint_eq(source_config_credit(&c), 0);
	ck_assert_int_eq(source_config_warning(&c, why, sizeof(why)), 1);
	ck_assert_msg(strstr(why, "name its profile"), "%s", why);
	config(&c, gone, "onerng", NULL);
	ck_assert_uint_eq(source_config_credit(&c), 768);
	close(p.master);
}
END_TEST

START_TEST(test_driver_options)
{
	struct source_config c;
	char err[256];

	source_config_init(&c, &source_serial);
	ck_assert_int_eq(source_config_set(&c, "profile", "auto", err,
					   sizeof(err)), 0);
	ck_assert_int_eq(source_config_set(&c, "profile", "OneRNG", err,
					   sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "onerng, truerng or generic"), "%s", err);
	ck_assert_int_eq(source_config_set(&c, "sysfs", "rel", err,
					   sizeof(err)), -EINVAL);
	/* Above the profile's cap: refused as for every source. */
	ck_assert_int_eq(source_config_set(&c, "profile", "truerng", err,
					   sizeof(err)), 0);
	ck_assert_int_eq(source_config_set(&c, "credit", "768", err,
					   sizeof(err)), 0);
	ck_assert_int_eq(source_config_validate(&c, err, sizeof(err)), -EINVAL);
	ck_assert(source_serial.flags & SOURCE_F_PLUGGED);
}
END_TEST

int main(void)
{
	return td_run_suite(
		td_suite("serial", "serial", NULL, NULL, 60,
			 TD_TESTS(test_profile_table, test_onerng_version,
				  test_onerng_start_stop,
				  test_onerng_drains_backlog,
				  test_onerng_no_answer,
				  test_truerng_knock, test_truerng_decode,
				  test_truerng_out_of_step, test_usb_id,
				  test_driver_reads_and_sees_hangup,
				  test_driver_absent_and_not_a_tty,
				  test_driver_credit_choice,
				  test_driver_options)),
		base, sizeof(base), "serial");
}
