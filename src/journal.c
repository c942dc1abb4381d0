// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>

#include "rngfeed/journal.h"
#include "rngfeed/log.h"

#if RNGFEED_SYSTEMD
#include <systemd/sd-journal.h>

void journal_printv(int priority, const char *fmt, va_list ap)
{
	sd_journal_printv(priority, fmt, ap);
}
#else
void journal_printv(int priority, const char *fmt, va_list ap)
{
	/* One fprintf per line so lines from threads do not mix; journald
	 * names the unit, so no "rngfeed: " before the message. */
	char line[LOG_LINE_MAX];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "<%d>%s\n", priority & LOG_PRIMASK, line);
}
#endif
