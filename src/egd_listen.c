// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The EGD server's listening socket: a unix socket created with no
 * permissions and then given its mode and owner, a TCP socket on one
 * named address, or the socket systemd passed.  See egd_listen.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#if RNGFEED_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "rngfeed/egd_listen.h"
#include "rngfeed/log.h"
#include "rngfeed/util.h"

static int parse_owner(const char *spec, uid_t *uid, gid_t *gid, char *why,
		       size_t why_len)
{
	char user[64], *colon;
	struct passwd *pw;
	struct group *gr;

	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (!spec || !*spec)
		return 0;
	snprintf(user, sizeof(user), "%s", spec);
	colon = strchr(user, ':');
	if (colon)
		*colon++ = '\0';
	if (user[0]) {
		/* Not getpwnam_r: this runs before any thread exists. */
		// cppcheck-suppress getpwnamCalled
		pw = getpwnam(user);
		if (!pw)
			return set_error(why, why_len,
				    "egd-owner: no user '%s'", user);
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
	}
	if (colon && *colon) {
		// cppcheck-suppress getgrnamCalled ; single-threaded, as above
		gr = getgrnam(colon);
		if (!gr)
			return set_error(why, why_len,
				    "egd-owner: no group '%s'", colon);
		*gid = gr->gr_gid;
	}
	return 0;
}

/* A socket file left by a process that is gone is removed; a live one
 * (something answers) or a file that is not a socket is an error. */
static int clear_stale(const char *path, char *why, size_t why_len)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		set_error(why, why_len,
			  "egd-server: %s exists and is not a socket", path);
		return -EEXIST;
	}
	strcpy(un.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (struct sockaddr *)&un, sizeof(un));
	close(fd);
	if (r == 0) {
		set_error(why, why_len,
			  "egd-server: something serves %s already", path);
		return -EADDRINUSE;
	}
	return unlink(path) < 0 ? -errno : 0;
}

/* A socket systemd passed (rngfeed.socket) for this address, or -1. */
#if RNGFEED_SYSTEMD
static int listen_fd_from_systemd(const struct egd_addr *a)
{
	int n = sd_listen_fds(0);

	for (int fd = SD_LISTEN_FDS_START; n > 0 && fd < SD_LISTEN_FDS_START + n;
	     fd++) {
		if (a->kind == EGD_ADDR_UNIX &&
		    sd_is_socket_unix(fd, SOCK_STREAM, 1, a->path, 0) > 0)
			return fd;
		if (a->kind != EGD_ADDR_UNIX &&
		    sd_is_socket_inet(fd,
				      a->kind == EGD_ADDR_TCP4 ? AF_INET
								    : AF_INET6,
				      SOCK_STREAM, 1, a->port) > 0)
			return fd;
	}
	return -1;
}
#else
/* Built without libsystemd (make SYSTEMD=no): no socket activation.  A
 * socket passed anyway (LISTEN_PID names this process, as sd_listen_fds(3)
 * requires) is not used, and saying so explains the error that binding
 * the same address then gives. */
static int listen_fd_from_systemd(const struct egd_addr *a)
{
	const char *pid = getenv("LISTEN_PID");

	(void)a;
	if (getenv("LISTEN_FDS") && pid && strtol(pid, NULL, 10) == (long)getpid())
		log_warn("egd: LISTEN_FDS is set, but this rngfeed was built "
			 "without libsystemd: no socket activation, the "
			 "passed socket is not used");
	return -1;
}
#endif

static int listen_unix(const struct egd_listen_params *p, bool *created,
		       char *why, size_t why_len)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	const char *at;
	struct stat st;
	bool bound = false;
	uid_t uid;
	gid_t gid;
	mode_t old;
	int fd = -1, r;

	r = parse_owner(p->owner, &uid, &gid, why, why_len);
	if (r < 0)
		return r;
	r = clear_stale(p->addr->path, why, why_len);
	if (r < 0) {
		if (r != -EEXIST && r != -EADDRINUSE)
			set_error(why, why_len, "egd-server: %s: %s",
				  p->addr->path, strerror(-r));
		return r;
	}
	/* Bound and listening under a name of its own beside the path, then
	 * renamed into place (a rename, not a link: the AppArmor profile
	 * grants rw in the socket's directory, no l): whoever finds the path
	 * (a client, or another instance's clear_stale()) finds it
	 * listening.  Bound at the path itself, a connect between bind() and
	 * listen() was refused.  The path itself where the other name does
	 * not fit or is taken by something else than a socket. */
	at = p->addr->path;
	if (snprintf(un.sun_path, sizeof(un.sun_path), "%s.new", p->addr->path) <
	    (int)sizeof(un.sun_path) &&
	    (lstat(un.sun_path, &st) < 0 ? errno == ENOENT
					 : S_ISSOCK(st.st_mode) && unlink(un.sun_path) == 0))
		at = un.sun_path;
	else
		snprintf(un.sun_path, sizeof(un.sun_path), "%s", p->addr->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* Created with no permissions at all (no thread exists yet to
	 * share the umask), then given the mode: never a moment with
	 * more. */
	old = umask(0777);
	r = bind(fd, (struct sockaddr *)&un, sizeof(un));
	umask(old);
	if (r < 0)
		goto fail;
	bound = true;
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && chown(at, uid, gid) < 0)
		goto fail;
	if (chmod(at, (mode_t)p->mode) < 0 || listen(fd, 128) < 0)
		goto fail;
	if (at != p->addr->path && rename(at, p->addr->path) < 0)
		goto fail;
	*created = true;
	return fd;
fail:
	r = -errno;
	set_error(why, why_len, "egd-server: %s: %s", p->addr->path,
		  strerror(-r));
	if (fd >= 0)
		close(fd);
	if (bound)
		unlink(at);
	*created = false;
	return r;
}

static int listen_tcp(const struct egd_listen_params *p, char *why,
		      size_t why_len)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd, one = 1, r;

	if (p->addr->kind == EGD_ADDR_TCP4) {
		struct sockaddr_in *in = (void *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(p->addr->port);
		memcpy(&in->sin_addr, p->addr->ip, 4);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (void *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(p->addr->port);
		memcpy(&in6->sin6_addr, p->addr->ip, 16);
		len = sizeof(*in6);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);
	if (fd < 0)
		goto fail;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(fd, 128) < 0)
		goto fail;
	if (!p->addr->loopback)
		log_warn("egd: %s is not a loopback address: whoever can reach "
			 "it may draw output",
			 p->name);
	return fd;
fail:
	r = -errno;
	set_error(why, why_len, "egd-server: %s: %s", p->name, strerror(-r));
	if (fd >= 0)
		close(fd);
	return r;
}

int egd_listen_open(const struct egd_listen_params *p, bool *created,
		    char *why, size_t why_len)
{
	int fd = listen_fd_from_systemd(p->addr);

	*created = false;
	if (fd >= 0) {
		/* systemd made it with the unit's SocketMode=. */
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
			int r = -errno;

			set_error(why, why_len, "egd-server: %s: %s", p->name,
				  strerror(-r));
			return r;
		}
		log_info("egd: serving %s (socket from systemd)", p->name);
		return fd;
	}
	fd = p->addr->kind == EGD_ADDR_UNIX ? listen_unix(p, created, why, why_len)
					    : listen_tcp(p, why, why_len);
	if (fd >= 0)
		log_info("egd: serving %s", p->name);
	return fd;
}
