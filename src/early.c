// SPDX-License-Identifier: GPL-2.0-or-later
/* Standard fds and signals before anything else.  See include/rngfeed/early.h. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "rngfeed/early.h"

static const int held[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 };

_Static_assert(sizeof(held) / sizeof(held[0]) ==
		       sizeof(((struct early_signals *)0)->old_action) /
			       sizeof(struct sigaction),
	       "one saved action per held signal");

int early_guard_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int nul;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* open() takes the lowest free fd: this one. */
		nul = open("/dev/null", O_RDWR | O_NOCTTY);
		if (nul < 0)
			return -errno;
		if (nul != fd) { /* cannot happen; never leave it astray */
			close(nul);
			return -EBADF;
		}
	}
	return 0;
}

void early_hold_signals(struct early_signals *saved)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t mask;

	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		sigaddset(&mask, held[i]);
	/* Blocked first: between the two steps a default action would
	 * otherwise end the process. */
	sigprocmask(SIG_BLOCK, &mask, &saved->old_mask);
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		sigaction(held[i], &dfl, &saved->old_action[i]);
}

void early_release_signals(const struct early_signals *saved)
{
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		sigaction(held[i], &saved->old_action[i], NULL);
	sigprocmask(SIG_SETMASK, &saved->old_mask, NULL);
}
