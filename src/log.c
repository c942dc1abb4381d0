// SPDX-License-Identifier: GPL-2.0-or-later
/* Logging, direct or through the writer's queue.  See include/rngfeed/log.h. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/journal.h"
#include "rngfeed/log.h"

/* Where messages go.  Set at start-up, before any thread exists (a
 * detached daemon switches to syslog before its first thread). */
static struct {
	int max_priority;
	enum log_target target;
} log_target = { LOG_NOTICE, LOG_TO_STDERR };

/* The last error message, while a detached start-up keeps it for the
 * parent that waits for its verdict (readers may log meanwhile). */
static struct {
	pthread_mutex_t lock;
	bool on;
	char line[LOG_LINE_MAX];
} last_error = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* One queued line: this header, then @len bytes of text (no NUL). */
struct log_record {
	uint16_t len;
	uint8_t priority;
	bool plain;   /* log_plain(): stderr, no prefix */
	uint32_t gap; /* lines dropped just before this one */
};

/* log_finish()'s own line always fits: other lines leave it this room. */
#define LOG_FINISH_ROOM 128

/*
 * The queue: process-wide like the target, as every thread logs.  A ring
 * of records, bytes [head, head + used) modulo its size.  The writer holds
 * the lock only to take a record, never while it writes.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;   /* to the writer: a record, or a gap */
	pthread_cond_t caught; /* to log_finish(): the writer wrote one */
	bool on;               /* log_queue_begin() was called */
	bool writer;           /* the writer thread runs */
	bool busy;             /* ...and is writing a line, since busy_since */
	double busy_since;     /* CLOCK_MONOTONIC */
	size_t head, used;
	bool dropping;         /* dropping lines until there is room again */
	uint32_t gap;          /* dropped since the last queued record */
	uint64_t dropped;      /* in all */
	unsigned char ring[LOG_QUEUE_BYTES];
} queue = { .lock = PTHREAD_MUTEX_INITIALIZER,
	    .more = PTHREAD_COND_INITIALIZER };

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void log_keep_last_error(bool on)
{
	pthread_mutex_lock(&last_error.lock);
	last_error.on = on;
	last_error.line[0] = '\0';
	pthread_mutex_unlock(&last_error.lock);
}

void log_last_error(char *buf, size_t len)
{
	pthread_mutex_lock(&last_error.lock);
	snprintf(buf, len, "%s", last_error.line);
	pthread_mutex_unlock(&last_error.lock);
}

static void keep_error(int priority, const char *line)
{
	pthread_mutex_lock(&last_error.lock);
	if (last_error.on && priority <= LOG_ERR)
		snprintf(last_error.line, sizeof(last_error.line), "%s", line);
	pthread_mutex_unlock(&last_error.lock);
}

void log_setup(int max_priority, enum log_target target)
{
	log_target.max_priority = max_priority;
	log_target.target = target;
	if (target == LOG_TO_SYSLOG)
		openlog("rngfeed", LOG_PID, LOG_DAEMON);
}

int log_max_priority(void)
{
	return log_target.max_priority;
}

/* ---- writing a line where it goes (the writer, or the caller before the
 * queue) --------------------------------------------------------------------- */

/* All of @buf to stderr.  Whoever shares its open file may have made it
 * non-blocking (--stdout's fd 1 when 2>&1): then wait for room here. */
static int stderr_write(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, buf, len);

		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = STDERR_FILENO,
					    .events = POLLOUT };

			(void)poll(&p, 1, -1);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* 0, or -errno when the target refused the line. */
static int write_line(int priority, bool plain, const char *text)
{
	char buf[LOG_LINE_MAX + 16];
	char prefix[16] = "";
	int n;

	if (!plain && log_target.target == LOG_TO_SYSLOG) {
		syslog(priority, "%s", text);
		return 0;
	}
	if (!plain && log_target.target == LOG_TO_JOURNAL) {
		int r = journal_write(priority, text);

		if (r != -EOPNOTSUPP)
			return r;
		/* No native journal in this build: journald reads the
		 * priority from a "<N>" prefix on the service's stream. */
		snprintf(prefix, sizeof(prefix), "<%d>", priority & LOG_PRIMASK);
	} else if (!plain) {
		snprintf(prefix, sizeof(prefix), "rngfeed: ");
	}
	/* One write per line, so lines from threads do not mix. */
	n = snprintf(buf, sizeof(buf), "%s%s\n", prefix, text);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(buf)) {
		n = (int)sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	return stderr_write(buf, (size_t)n);
}

/* ---- the queue ------------------------------------------------------------- */

static void ring_put(const void *src, size_t n)
{
	size_t at = (queue.head + queue.used) % LOG_QUEUE_BYTES;
	size_t first = n < LOG_QUEUE_BYTES - at ? n : LOG_QUEUE_BYTES - at;

	memcpy(queue.ring + at, src, first);
	memcpy(queue.ring, (const unsigned char *)src + first, n - first);
	queue.used += n;
}

static void ring_get(void *dst, size_t n)
{
	size_t first = n < LOG_QUEUE_BYTES - queue.head
			       ? n
			       : LOG_QUEUE_BYTES - queue.head;

	memcpy(dst, queue.ring + queue.head, first);
	memcpy((unsigned char *)dst + first, queue.ring, n - first);
	queue.head = (queue.head + n) % LOG_QUEUE_BYTES;
	queue.used -= n;
}

/* Queue @text, or count it as dropped; never waits but for the lock.
 * @room: what must stay free after it (0: log_finish()'s own line, which
 * is not counted if even it finds no room). */
static void enqueue(int priority, bool plain, const char *text, size_t room)
{
	size_t len = strnlen(text, LOG_LINE_MAX - 1);
	struct log_record h = { .len = (uint16_t)len,
				.priority = (uint8_t)priority,
				.plain = plain };
	bool queued = false;
	size_t free_bytes;

	pthread_mutex_lock(&queue.lock);
	free_bytes = LOG_QUEUE_BYTES - queue.used;
	/* Once full, lines are dropped until a quarter is free again: one
	 * gap, not short lines slipping in between long ones dropped. */
	if (queue.dropping && free_bytes >= LOG_QUEUE_BYTES / 4)
		queue.dropping = false;
	if ((!queue.dropping || room == 0) &&
	    free_bytes >= sizeof(h) + len + room) {
		h.gap = queue.gap;
		queue.gap = 0;
		ring_put(&h, sizeof(h));
		ring_put(text, len);
		queued = true;
	} else if (room > 0) {
		queue.dropping = true;
		queue.gap++;
		queue.dropped++;
	}
	pthread_mutex_unlock(&queue.lock);
	if (queued)
		pthread_cond_signal(&queue.more);
}

/* Under the lock: take the next record (true), or a gap that no record
 * follows (*@gap; false).  @text gets the record's text. */
static bool take(struct log_record *h, char text[LOG_LINE_MAX], uint32_t *gap)
{
	if (queue.used == 0) {
		*gap = queue.gap;
		queue.gap = 0;
		return false;
	}
	ring_get(h, sizeof(*h));
	ring_get(text, h->len);
	text[h->len] = '\0';
	*gap = h->gap;
	return true;
}

/* Outside the lock: a gap's report, then the record's line. */
static void write_taken(bool have, const struct log_record *h,
			const char *text, uint32_t gap)
{
	bool refused;

	if (gap > 0 && LOG_WARNING <= log_target.max_priority) {
		char line[160];

		snprintf(line, sizeof(line),
			 "log: %u line%s dropped here: the log stream was not "
			 "taking them",
			 gap, gap == 1 ? "" : "s");
		(void)write_line(LOG_WARNING, false, line);
	}
	if (!have)
		return;
	refused = write_line(h->priority, h->plain, text) < 0;
	if (refused) {
		/* A broken stream: counted, and not said (it would fail). */
		pthread_mutex_lock(&queue.lock);
		queue.dropped++;
		pthread_mutex_unlock(&queue.lock);
	}
}

static void *writer_thread(void *arg)
{
	char text[LOG_LINE_MAX];

	(void)arg;
	pthread_mutex_lock(&queue.lock);
	for (;;) {
		struct log_record h;
		uint32_t gap;
		bool have;

		/* Untimed: this thread may wait for ever; nobody waits for
		 * it longer than log_finish()'s bound. */
		while (queue.used == 0 && queue.gap == 0)
			pthread_cond_wait(&queue.more, &queue.lock);
		have = take(&h, text, &gap);
		queue.busy = true;
		queue.busy_since = mono_s();
		pthread_mutex_unlock(&queue.lock);
		write_taken(have, &h, text, gap);
		pthread_mutex_lock(&queue.lock);
		queue.busy = false;
		pthread_cond_broadcast(&queue.caught);
	}
	return NULL;
}

void log_queue_begin(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&queue.caught, &ca);
	pthread_condattr_destroy(&ca);
	queue.on = true;
}

int log_writer_start(void)
{
	pthread_attr_t a;
	pthread_t t;
	int r;

	if (!queue.on || queue.writer)
		return 0;
	pthread_attr_init(&a);
	/* Never joined: the process may end while it waits on the stream. */
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &a, writer_thread, NULL);
	pthread_attr_destroy(&a);
	if (r != 0)
		return -r;
	pthread_mutex_lock(&queue.lock);
	queue.writer = true;
	pthread_mutex_unlock(&queue.lock);
	return 0;
}

uint64_t log_dropped_lines(void)
{
	uint64_t n;

	pthread_mutex_lock(&queue.lock);
	n = queue.dropped;
	pthread_mutex_unlock(&queue.lock);
	return n;
}

/* No writer could be started: write what waits here, as before the queue. */
static void drain_here(void)
{
	char text[LOG_LINE_MAX];

	for (;;) {
		struct log_record h;
		uint32_t gap;
		bool have;

		pthread_mutex_lock(&queue.lock);
		have = take(&h, text, &gap);
		pthread_mutex_unlock(&queue.lock);
		if (!have && gap == 0)
			return;
		write_taken(have, &h, text, gap);
	}
}

void log_finish(double until)
{
	uint64_t dropped;

	if (!queue.on)
		return;
	dropped = log_dropped_lines();
	if (dropped > 0 && LOG_WARNING <= log_target.max_priority) {
		char line[160];

		snprintf(line, sizeof(line),
			 "log: %llu line%s dropped in all: the log stream was "
			 "not taking them",
			 (unsigned long long)dropped, dropped == 1 ? "" : "s");
		enqueue(LOG_WARNING, false, line, 0);
	}
	if (log_writer_start() < 0) {
		drain_here();
		return;
	}
	pthread_mutex_lock(&queue.lock);
	while (queue.used > 0 || queue.gap > 0 || queue.busy) {
		double now = mono_s(), wake = until;
		struct timespec ts;

		/* A line in the writing for LOG_STALLED_S: the stream has
		 * stalled, and what waits behind it stays unwritten. */
		if (queue.busy && now - queue.busy_since >= LOG_STALLED_S)
			break;
		if (now >= until)
			break;
		if (queue.busy && queue.busy_since + LOG_STALLED_S < wake)
			wake = queue.busy_since + LOG_STALLED_S;
		ts.tv_sec = (time_t)wake;
		ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&queue.caught, &queue.lock, &ts);
	}
	pthread_mutex_unlock(&queue.lock);
}

/* ---- the callers' side ------------------------------------------------------ */

void log_msg(int priority, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;

	/* Formatted only if it is shown or kept. */
	if (priority > log_target.max_priority && priority > LOG_ERR)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	keep_error(priority, line);
	if (priority > log_target.max_priority)
		return;
	if (queue.on)
		enqueue(priority, false, line, LOG_FINISH_ROOM);
	else
		(void)write_line(priority, false, line);
}

void log_plain(const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (queue.on)
		enqueue(LOG_NOTICE, true, line, LOG_FINISH_ROOM);
	else
		(void)write_line(LOG_NOTICE, true, line);
}
