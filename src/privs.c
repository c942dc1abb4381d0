// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rngfeed/privs.h"

static int fail(char *why, size_t len, int err, const char *what)
{
	snprintf(why, len, "%s: %s", what, strerror(err));
	return -err;
}

int privs_lookup_user(const char *spec, uid_t *uid, gid_t *gid, char *why,
		      size_t len)
{
	char name[64], *colon;
	struct passwd *pw;
	struct group *gr;

	if (strlen(spec) >= sizeof(name))
		return fail(why, len, ENAMETOOLONG, "user name");
	strcpy(name, spec);
	colon = strchr(name, ':');
	if (colon)
		*colon++ = '\0';
	errno = 0;
	/* Not getpwnam_r: privs_drop() runs before any thread exists (it
	 * must, capabilities are per thread; see daemon_run()). */
	// cppcheck-suppress getpwnamCalled
	pw = getpwnam(name);
	if (!pw) {
		snprintf(why, len, "unknown user '%s'", name);
		return -ENOENT;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	if (colon) {
		// cppcheck-suppress getgrnamCalled ; single-threaded, as above
		gr = getgrnam(colon);
		if (!gr) {
			snprintf(why, len, "unknown group '%s'", colon);
			return -ENOENT;
		}
		*gid = gr->gr_gid;
	}
	return 0;
}

bool privs_have_cap(cap_value_t cap)
{
	cap_t caps = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (caps) {
		cap_get_flag(caps, cap, CAP_EFFECTIVE, &v);
		cap_free(caps);
	}
	return v == CAP_SET;
}

/* What mlock(2) of one page says here: 0 or an errno value. */
static int mlock_errno(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = page > 0 ? (size_t)page : 4096;
	void *p = aligned_alloc(n, n);
	int e = 0;

	if (!p)
		return ENOMEM;
	if (mlock(p, n) < 0)
		e = errno;
	else
		munlock(p, n);
	free(p);
	return e;
}

void privs_describe_memlock(char *why, size_t len)
{
	unsigned long long kib;
	struct rlimit rl;
	int e = mlock_errno();

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		rl.rlim_cur = 0;
	kib = rl.rlim_cur == RLIM_INFINITY ? 0 : (unsigned long long)rl.rlim_cur / 1024;
	if (privs_have_cap(CAP_IPC_LOCK))
		snprintf(why, len, "mlock(2) fails (%s) although this process "
			 "has CAP_IPC_LOCK", strerror(e));
	else if (e == EPERM && rl.rlim_cur != 0)
		/* The kernel says EPERM only for a limit of 0: a filter in
		 * front of it (systemd-nspawn's refuses @memlock without
		 * CAP_IPC_LOCK, whatever the limit). */
		snprintf(why, len, "this process lacks CAP_IPC_LOCK, and mlock(2) "
			 "is refused (EPERM) although RLIMIT_MEMLOCK allows "
			 "%llu KiB: a system call filter, as systemd-nspawn's "
			 "without CAP_IPC_LOCK", kib);
	else
		snprintf(why, len, "this process lacks CAP_IPC_LOCK, and "
			 "RLIMIT_MEMLOCK lets it lock %llu KiB%s%s%s", kib,
			 e ? " (mlock(2): " : "", e ? strerror(e) : "",
			 e ? ")" : "");
}

/* The bounding set limits what any later exec could gain. */
static int drop_bounding_set(bool keep_sys_admin, char *why, size_t len)
{
	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
		if (keep_sys_admin && c == CAP_SYS_ADMIN)
			continue;
		if (cap_drop_bound(c) < 0 && errno != EINVAL)
			return fail(why, len, errno, "dropping the bounding set");
	}
	return 0;
}

static int set_caps(bool keep_sys_admin, char *why, size_t len)
{
	const cap_value_t admin[] = { CAP_SYS_ADMIN };
	cap_t caps = cap_init(); /* all clear */
	int r = 0;

	if (!caps)
		return fail(why, len, errno, "cap_init");
	if (keep_sys_admin &&
	    (cap_set_flag(caps, CAP_PERMITTED, 1, admin, CAP_SET) < 0 ||
	     cap_set_flag(caps, CAP_EFFECTIVE, 1, admin, CAP_SET) < 0))
		r = fail(why, len, errno, "cap_set_flag");
	if (r == 0 && cap_set_proc(caps) < 0)
		r = fail(why, len, errno, "setting capabilities");
	cap_free(caps);
	if (r == 0 && cap_reset_ambient() < 0 && errno != EINVAL)
		r = fail(why, len, errno, "clearing ambient capabilities");
	return r;
}

/* Check the result: only the wanted capability, and no way back. */
static int verify(bool keep_sys_admin, bool switched, char *why, size_t len)
{
	cap_t want = cap_init(), have = cap_get_proc();
	const cap_value_t admin[] = { CAP_SYS_ADMIN };
	int r = 0;

	if (!want || !have) {
		r = fail(why, len, errno ? errno : ENOMEM, "cap_get_proc");
		goto out;
	}
	if (keep_sys_admin) {
		cap_set_flag(want, CAP_PERMITTED, 1, admin, CAP_SET);
		cap_set_flag(want, CAP_EFFECTIVE, 1, admin, CAP_SET);
	}
	if (cap_compare(want, have) != 0) {
		char *text = cap_to_text(have, NULL);

		snprintf(why, len, "capabilities are '%s' after the drop",
			 text ? text : "?");
		cap_free(text);
		r = -EPERM;
		goto out;
	}
	/* With root's uid gone, setuid(0) must fail. */
	if (switched && (setuid(0) == 0 || seteuid(0) == 0)) {
		snprintf(why, len, "could regain uid 0 after switching user");
		r = -EPERM;
	}
out:
	cap_free(want);
	cap_free(have);
	return r;
}

/*
 * Before anything is dropped: can this process switch user at all?
 * Root without some of these (a container, a unit's
 * CapabilityBoundingSet=) is not "not root": name what is missing.
 */
static int check_switch_caps(const char *user_spec, char *why, size_t len)
{
	static const struct {
		cap_value_t cap;
		const char *what;
	} needs[] = {
		{ CAP_SETPCAP, "CAP_SETPCAP (to empty the bounding set)" },
		{ CAP_SETUID, "CAP_SETUID (to change user)" },
		{ CAP_SETGID, "CAP_SETGID (to change group)" },
	};
	const char *missing[3];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if (!privs_have_cap(needs[i].cap))
			missing[n++] = needs[i].what;
	if (n == 0)
		return 0;
	if (geteuid() == 0)
		snprintf(why, len,
			 "switching to user '%s' needs %s%s%s%s%s, which this "
			 "process lacks",
			 user_spec, missing[0],
			 n == 1 ? "" : n == 2 ? " and " : ", ",
			 n > 1 ? missing[1] : "", n > 2 ? " and " : "",
			 n > 2 ? missing[2] : "");
	else
		snprintf(why, len, "switching to user '%s' needs root",
			 user_spec);
	return -EPERM;
}

int privs_drop(const char *user_spec, bool keep_sys_admin, char *why,
	       size_t why_len)
{
	bool switching = user_spec && user_spec[0];
	uid_t uid = 0;
	gid_t gid = 0;
	int r;

	if (switching) {
		r = privs_lookup_user(user_spec, &uid, &gid, why, why_len);
		if (r < 0)
			return r;
	}
	/* Unprivileged (tests, --stdout as a user): nothing to keep; the
	 * kernel will refuse RNDADDENTROPY and say so. */
	if (keep_sys_admin && !privs_have_cap(CAP_SYS_ADMIN))
		keep_sys_admin = false;
	if (switching) {
		r = check_switch_caps(user_spec, why, why_len);
		if (r < 0)
			return r;
	}
	if (privs_have_cap(CAP_SETPCAP)) {
		r = drop_bounding_set(keep_sys_admin, why, why_len);
		if (r < 0)
			return r;
	}
	if (switching) {
		/* Keep the permitted set across the uid change; the
		 * capabilities are trimmed right after. */
		if (prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) < 0)
			return fail(why, why_len, errno, "PR_SET_KEEPCAPS");
		if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			return fail(why, why_len, errno, "switching user");
		prctl(PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L);
	}
	r = set_caps(keep_sys_admin, why, why_len);
	if (r < 0)
		return r;
	/* Nothing exec'd later can gain privileges either. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0)
		return fail(why, why_len, errno, "PR_SET_NO_NEW_PRIVS");
	return verify(keep_sys_admin, switching && uid != 0, why, why_len);
}
