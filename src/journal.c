// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>

#include "rngfeed/journal.h"

#if RNGFEED_SYSTEMD
#include <systemd/sd-journal.h>

int journal_write(int priority, const char *line)
{
	return sd_journal_print(priority, "%s", line);
}
#else
int journal_write(int priority, const char *line)
{
	(void)priority;
	(void)line;
	return -EOPNOTSUPP;
}
#endif
