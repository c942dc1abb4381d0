/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The EGD server's listening socket (--egd-server ADDR): set-up only, before
 * threads exist (it sets the umask for a moment and looks the owner up
 * with getpwnam(3)).
 */
#ifndef RNGFEED_EGD_LISTEN_H
#define RNGFEED_EGD_LISTEN_H

#include <stdbool.h>
#include <stddef.h>

#include "rngfeed/egd_proto.h"

struct egd_listen_params {
	const struct egd_addr *addr;
	const char *name;          /* the address, for messages */
	unsigned int mode;         /* unix socket permissions */
	const char *owner;         /* "USER[:GROUP]"; "" or NULL = as created */
};

/*
 * A non-blocking listening socket for @p->addr: the one systemd passed
 * for it (sd_listen_fds(3)), else a new one.  *@created: a unix socket
 * file was made, to unlink at the end.  The fd, or -errno with a one-line
 * reason in @why (nothing left behind).
 */
int egd_listen_open(const struct egd_listen_params *p, bool *created,
		    char *why, size_t why_len);

#endif
