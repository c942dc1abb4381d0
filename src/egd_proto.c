// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The EGD protocol: the request parser, the reply encoders and the
 * listening address.  See include/rngfeed/egd_proto.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/egd_proto.h"
#include "rngfeed/util.h"

/* ---- the request parser ------------------------------------------------- */

enum {
	ST_CMD,   /* waiting for a command byte */
	ST_LEN,   /* 0x01/0x02: waiting for N */
	ST_WHDR,  /* 0x03: waiting for the 3 header bytes */
	ST_WDATA, /* 0x03: skipping the data */
	ST_BAD,   /* garbage seen: stays */
};

void egd_parser_init(struct egd_parser *p)
{
	*p = (struct egd_parser){ .state = ST_CMD };
}

bool egd_parser_midway(const struct egd_parser *p)
{
	return p->state == ST_LEN || p->state == ST_WHDR ||
	       p->state == ST_WDATA;
}

static void finish_write(struct egd_parser *p, struct egd_request *req)
{
	*req = (struct egd_request){
		.cmd = EGD_CMD_WRITE,
		.len = p->hdr[2],
		.bits = (unsigned int)p->hdr[0] << 8 | p->hdr[1],
	};
	p->state = ST_CMD;
}

size_t egd_parse(struct egd_parser *p, const uint8_t *buf, size_t len,
		 enum egd_event *ev, struct egd_request *req)
{
	size_t i = 0;

	*ev = EGD_EV_MORE;
	if (p->state == ST_BAD) {
		*ev = EGD_EV_BAD;
		return 0;
	}
	while (i < len) {
		uint8_t b = buf[i];

		switch (p->state) {
		case ST_CMD:
			i++;
			p->cmd = b;
			switch (b) {
			case EGD_CMD_AVAILABLE:
			case EGD_CMD_PID:
				*req = (struct egd_request){ .cmd = b };
				*ev = EGD_EV_REQUEST;
				return i;
			case EGD_CMD_READ_NONBLOCK:
			case EGD_CMD_READ_BLOCK:
				p->state = ST_LEN;
				break;
			case EGD_CMD_WRITE:
				p->have = 0;
				p->state = ST_WHDR;
				break;
			default:
				p->state = ST_BAD;
				*ev = EGD_EV_BAD;
				return i;
			}
			break;
		case ST_LEN:
			i++;
			*req = (struct egd_request){ .cmd = p->cmd, .len = b };
			p->state = ST_CMD;
			*ev = EGD_EV_REQUEST;
			return i;
		case ST_WHDR:
			i++;
			p->hdr[p->have++] = b;
			if (p->have < sizeof(p->hdr))
				break;
			p->skip = p->hdr[2];
			if (p->skip == 0) {
				finish_write(p, req);
				*ev = EGD_EV_REQUEST;
				return i;
			}
			p->state = ST_WDATA;
			break;
		case ST_WDATA: {
			/* Skipped whole: never stored, never mixed in. */
			size_t n = len - i < p->skip ? len - i : p->skip;

			i += n;
			p->skip -= (unsigned int)n;
			if (p->skip == 0) {
				finish_write(p, req);
				*ev = EGD_EV_REQUEST;
				return i;
			}
			break;
		}
		default:
			*ev = EGD_EV_BAD;
			return i;
		}
	}
	return i;
}

/* ---- replies ------------------------------------------------------------ */

void egd_reply_available(uint8_t out[4], uint32_t bits)
{
	out[0] = (uint8_t)(bits >> 24);
	out[1] = (uint8_t)(bits >> 16);
	out[2] = (uint8_t)(bits >> 8);
	out[3] = (uint8_t)bits;
}

size_t egd_reply_pid(uint8_t *out, size_t cap, unsigned long pid)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%lu", pid);

	if (n <= 0 || (size_t)n + 1 > cap)
		return 0;
	out[0] = (uint8_t)n;
	memcpy(out + 1, digits, (size_t)n);
	return (size_t)n + 1;
}

/* ---- addresses ---------------------------------------------------------- */

static int parse_port(const char *s, uint16_t *port)
{
	long long v;

	if (parse_ll(s, 1, 65535, &v) < 0)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

static int parse_tcp(const char *spec, struct egd_addr *a, char *err,
		     size_t err_len)
{
	char host[64];
	const char *port;
	size_t hl;

	/* tcp:PORT: the loopback address. */
	if (!strchr(spec, ':')) {
		a->kind = EGD_ADDR_TCP4;
		a->ip[0] = 127;
		a->ip[3] = 1;
		a->loopback = true;
		if (parse_port(spec, &a->port) < 0)
			goto bad_port;
		return 0;
	}
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':')
			return set_error(err, err_len,
				    "egd-server: 'tcp:%s' needs [IPV6]:PORT",
				    spec);
		hl = (size_t)(close - spec - 1);
		if (hl >= sizeof(host))
			goto bad_host;
		memcpy(host, spec + 1, hl);
		host[hl] = '\0';
		port = close + 2;
		a->kind = EGD_ADDR_TCP6;
		if (inet_pton(AF_INET6, host, a->ip) != 1)
			goto bad_host;
	} else {
		port = strrchr(spec, ':') + 1;
		hl = (size_t)(port - 1 - spec);
		if (hl >= sizeof(host))
			goto bad_host;
		memcpy(host, spec, hl);
		host[hl] = '\0';
		a->kind = EGD_ADDR_TCP4;
		if (strcmp(host, "localhost") == 0)
			strcpy(host, "127.0.0.1");
		if (inet_pton(AF_INET, host, a->ip) != 1)
			goto bad_host;
	}
	if (parse_port(port, &a->port) < 0)
		goto bad_port;
	if (a->kind == EGD_ADDR_TCP4) {
		static const uint8_t any4[4];

		a->loopback = a->ip[0] == 127;
		if (memcmp(a->ip, any4, 4) == 0)
			goto wildcard;
	} else {
		static const uint8_t any6[16], lo6[16] = { [15] = 1 };

		a->loopback = memcmp(a->ip, lo6, 16) == 0;
		if (memcmp(a->ip, any6, 16) == 0)
			goto wildcard;
	}
	return 0;
wildcard:
	return set_error(err, err_len,
		    "egd-server: '%s' is every interface: name the one address "
		    "to serve (loopback unless you name another)",
		    host);
bad_host:
	return set_error(err, err_len,
		    "egd-server: 'tcp:%s': the host must be a numeric address "
		    "or localhost",
		    spec);
bad_port:
	return set_error(err, err_len,
		    "egd-server: 'tcp:%s' needs a port from 1 to 65535", spec);
}

int egd_addr_parse(const char *s, struct egd_addr *a, char *err,
		   size_t err_len)
{
	*a = (struct egd_addr){ .kind = EGD_ADDR_UNIX };
	if (!s)
		return set_error(err, err_len, "egd-server needs an address");
	if (strncmp(s, "unix:", 5) == 0) {
		const char *path = s + 5;

		/* An abstract socket has no permissions to restrict. */
		if (path[0] != '/')
			return set_error(err, err_len,
				    "egd-server: 'unix:%s' needs an absolute path",
				    path);
		if (strlen(path) >= sizeof(a->path))
			return set_error(err, err_len,
				    "egd-server: the socket path is longer "
				    "than %zu bytes",
				    sizeof(a->path) - 1);
		strcpy(a->path, path);
		return 0;
	}
	if (strncmp(s, "tcp:", 4) == 0)
		return parse_tcp(s + 4, a, err, err_len);
	return set_error(err, err_len,
		    "egd-server must be unix:PATH or tcp:[HOST:]PORT, not '%s'",
		    s);
}

const char *egd_addr_format(const struct egd_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "";

	switch (a->kind) {
	case EGD_ADDR_UNIX:
		snprintf(buf, len, "unix:%s", a->path);
		break;
	case EGD_ADDR_TCP4:
		inet_ntop(AF_INET, a->ip, ip, sizeof(ip));
		snprintf(buf, len, "tcp:%s:%u", ip, (unsigned int)a->port);
		break;
	case EGD_ADDR_TCP6:
		inet_ntop(AF_INET6, a->ip, ip, sizeof(ip));
		snprintf(buf, len, "tcp:[%s]:%u", ip, (unsigned int)a->port);
		break;
	}
	return buf;
}
