/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Dropping privileges with libcap: after the devices are open, keep only
 * CAP_SYS_ADMIN (RNDADDENTROPY needs it) or nothing at all, optionally as
 * another user, and verify that nothing else can be regained.
 */
#ifndef RNGFEED_PRIVS_H
#define RNGFEED_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/capability.h>
#include <sys/types.h>

/* "USER[:GROUP]" → uid and gid (the user's primary group by default).
 * 0, or -errno with a one-line reason in @why.  Not thread-safe
 * (getpwnam): call it before any thread exists. */
int privs_lookup_user(const char *spec, uid_t *uid, gid_t *gid, char *why,
		      size_t why_len);

/*
 * @user_spec: "USER[:GROUP]" or "" to keep the current user.
 * @keep_sys_admin: keep CAP_SYS_ADMIN in the permitted and effective
 * sets (and the bounding set); otherwise keep no capability.
 * Returns 0, or -errno with a one-line reason in @why; the caller must
 * not continue on failure.
 */
int privs_drop(const char *user_spec, bool keep_sys_admin, char *why,
	       size_t why_len);

/* Whether @cap is in this process's effective set (false if it cannot
 * be read). */
bool privs_have_cap(cap_value_t cap);

/* Why mlock(2) may have failed here, as a clause for a message: whether
 * this process has CAP_IPC_LOCK, and its locked-memory limit. */
void privs_describe_memlock(char *why, size_t why_len);

#endif
