// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CAVP DRBG .rsp reader; see cavp.h.  Written to be fed hostile input: every
 * length is bounded before use, lines are never modified in place (so a
 * pushed-back line can be classified again), and errors carry a line number.
 */
#include "cavp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct cavp_reader {
	FILE *f;
	char *line; /* CAVP_MAX_LINE + 1 */
	size_t len;
	bool pending; /* line read but belongs to the next case */
	unsigned long lineno;
	/* Section state, copied into each case. */
	char mechanism[CAVP_MAX_MECH + 1];
	bool have_mechanism;
	int pred_resist;
	int64_t entropy_bits, nonce_bits, pers_bits, add_bits, returned_bits;
	char err[160];
	unsigned long errline;
};

struct span {
	const char *p;
	size_t n;
};

static int error_at(struct cavp_reader *r, unsigned long line,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int error_at(struct cavp_reader *r, unsigned long line,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->errline = line;
	return -1;
}

static void reset_section(struct cavp_reader *r)
{
	r->pred_resist = -1;
	r->entropy_bits = r->nonce_bits = r->pers_bits = -1;
	r->add_bits = r->returned_bits = -1;
}

struct cavp_reader *cavp_reader_new(FILE *f)
{
	struct cavp_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->line = malloc(CAVP_MAX_LINE + 1);
	if (!r->line) {
		free(r);
		return NULL;
	}
	r->f = f;
	reset_section(r);
	return r;
}

void cavp_reader_free(struct cavp_reader *r)
{
	if (!r)
		return;
	free(r->line);
	free(r);
}

const char *cavp_error(const struct cavp_reader *r)
{
	return r->err;
}

unsigned long cavp_error_line(const struct cavp_reader *r)
{
	return r->errline;
}

unsigned long cavp_lines(const struct cavp_reader *r)
{
	return r->lineno;
}

static void buf_clear(struct cavp_buf *b)
{
	free(b->p);
	*b = (struct cavp_buf){ 0 };
}

void cavp_case_clear(struct cavp_case *c)
{
	buf_clear(&c->entropy);
	buf_clear(&c->nonce);
	buf_clear(&c->pers);
	buf_clear(&c->entropy_reseed);
	buf_clear(&c->add_reseed);
	buf_clear(&c->returned);
	for (size_t i = 0; i < CAVP_MAX_CALLS; i++) {
		buf_clear(&c->add[i]);
		buf_clear(&c->entropy_pr[i]);
	}
	memset(c, 0, sizeof(*c));
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int cavp_hex_decode(uint8_t *out, const char *hex, size_t n)
{
	if (n % 2)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* One line into r->line without its end of line; 1, 0 at EOF, -1. */
static int read_line(struct cavp_reader *r)
{
	size_t n = 0;
	int ch;

	while ((ch = getc(r->f)) != EOF && ch != '\n') {
		if (n == CAVP_MAX_LINE)
			return error_at(r, r->lineno + 1,
					"line longer than %u bytes",
					CAVP_MAX_LINE);
		if (ch == '\0')
			return error_at(r, r->lineno + 1, "NUL byte in line");
		r->line[n++] = (char)ch;
	}
	if (ch == EOF && ferror(r->f))
		return error_at(r, r->lineno + 1, "read error: %s",
				strerror(errno));
	if (ch == EOF && n == 0)
		return 0;
	r->line[n] = '\0';
	r->len = n;
	r->lineno++;
	return 1;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' ||
	       ch == '\f';
}

static struct span trim(const char *p, size_t n)
{
	while (n && is_space(*p))
		p++, n--;
	while (n && is_space(p[n - 1]))
		n--;
	return (struct span){ p, n };
}

static bool span_is(struct span s, const char *word)
{
	return strlen(word) == s.n && !memcmp(s.p, word, s.n);
}

/* Split "name = value" at the first '='; false if there is none. */
static bool split_eq(struct span s, struct span *name, struct span *value)
{
	const char *eq = memchr(s.p, '=', s.n);

	if (!eq)
		return false;
	*name = trim(s.p, (size_t)(eq - s.p));
	*value = trim(eq + 1, s.n - (size_t)(eq - s.p) - 1);
	return true;
}

/* A decimal number up to max; false on anything else. */
static bool parse_dec(struct span s, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;

	if (!s.n || s.n > 20)
		return false;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return false;
		if (x > (max - (uint64_t)(s.p[i] - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(s.p[i] - '0');
	}
	*out = x;
	return true;
}

/* Printable, bounded copy of a name for messages. */
static const char *shown(struct span s, char buf[40])
{
	size_t n = s.n < 32 ? s.n : 32;

	for (size_t i = 0; i < n; i++)
		buf[i] = (s.p[i] >= 0x20 && s.p[i] < 0x7f) ? s.p[i] : '?';
	buf[n] = '\0';
	if (s.n > n)
		strcpy(buf + n, "...");
	return buf;
}

static int section_header(struct cavp_reader *r, struct span in)
{
	static const struct {
		const char *name;
		size_t off;
	} lens[] = {
		{ "EntropyInputLen", offsetof(struct cavp_reader, entropy_bits) },
		{ "NonceLen", offsetof(struct cavp_reader, nonce_bits) },
		{ "PersonalizationStringLen", offsetof(struct cavp_reader, pers_bits) },
		{ "AdditionalInputLen", offsetof(struct cavp_reader, add_bits) },
		{ "ReturnedBitsLen", offsetof(struct cavp_reader, returned_bits) },
	};
	struct span name, value;
	uint64_t x;

	if (!split_eq(in, &name, &value)) {
		/* A mechanism: "[AES-256 use df]", "[SHA-256]", ... */
		if (!in.n)
			return error_at(r, r->lineno, "empty section header");
		if (in.n > CAVP_MAX_MECH)
			return error_at(r, r->lineno,
					"section name longer than %u bytes",
					CAVP_MAX_MECH);
		memcpy(r->mechanism, in.p, in.n);
		r->mechanism[in.n] = '\0';
		r->have_mechanism = true;
		reset_section(r);
		return 0;
	}
	if (span_is(name, "PredictionResistance")) {
		if (span_is(value, "True"))
			r->pred_resist = 1;
		else if (span_is(value, "False"))
			r->pred_resist = 0;
		else
			return error_at(r, r->lineno,
					"PredictionResistance is not True or False");
		return 0;
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		if (!span_is(name, lens[i].name))
			continue;
		if (!parse_dec(value, CAVP_MAX_BITS, &x))
			return error_at(r, r->lineno,
					"%s is not a number from 0 to 2^35",
					lens[i].name);
		*(int64_t *)((char *)r + lens[i].off) = (int64_t)x;
		return 0;
	}
	/* Other "[Name = value]" headers carry nothing we need. */
	return 0;
}

/* The field name → where it goes in a case. */
static struct cavp_buf *field_slot(struct cavp_case *c, struct span name,
				   bool *repeated, size_t **count)
{
	static const struct {
		const char *name;
		size_t off;
	} once[] = {
		{ "EntropyInput", offsetof(struct cavp_case, entropy) },
		{ "Nonce", offsetof(struct cavp_case, nonce) },
		{ "PersonalizationString", offsetof(struct cavp_case, pers) },
		{ "EntropyInputReseed", offsetof(struct cavp_case, entropy_reseed) },
		{ "AdditionalInputReseed", offsetof(struct cavp_case, add_reseed) },
		{ "ReturnedBits", offsetof(struct cavp_case, returned) },
	};

	*repeated = false;
	for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
		if (span_is(name, once[i].name))
			return (struct cavp_buf *)((char *)c + once[i].off);
	*repeated = true;
	if (span_is(name, "AdditionalInput")) {
		*count = &c->n_add;
		return c->add;
	}
	if (span_is(name, "EntropyInputPR")) {
		*count = &c->n_entropy_pr;
		return c->entropy_pr;
	}
	return NULL;
}

static int add_field(struct cavp_reader *r, struct cavp_case *c,
		     struct span name, struct span value)
{
	struct cavp_buf *b;
	size_t *count = NULL;
	bool repeated;
	char nb[40];

	b = field_slot(c, name, &repeated, &count);
	if (!b)
		return error_at(r, r->lineno, "unknown field '%s'",
				shown(name, nb));
	if (c->returned.present)
		return error_at(r, r->lineno, "%s after ReturnedBits",
				shown(name, nb));
	if (repeated) {
		if (*count == CAVP_MAX_CALLS)
			return error_at(r, r->lineno,
					"more than %u %s fields in one case",
					CAVP_MAX_CALLS, shown(name, nb));
		b += (*count)++;
	} else if (b->present) {
		return error_at(r, r->lineno, "duplicate %s", shown(name, nb));
	}
	if (value.n % 2)
		return error_at(r, r->lineno, "odd number of hex digits in %s",
				shown(name, nb));
	b->present = true;
	b->len = value.n / 2;
	if (b->len) {
		b->p = malloc(b->len);
		if (!b->p)
			return error_at(r, r->lineno, "out of memory");
	}
	if (cavp_hex_decode(b->p, value.p, value.n))
		return error_at(r, r->lineno, "bad hex digit in %s",
				shown(name, nb));
	return 0;
}

static int start_case(struct cavp_reader *r, struct cavp_case *c,
		      struct span value)
{
	uint64_t n;

	if (!r->have_mechanism)
		return error_at(r, r->lineno,
				"COUNT before any section header like [AES-256 use df]");
	if (!parse_dec(value, UINT32_MAX, &n))
		return error_at(r, r->lineno, "COUNT is not a number");
	memcpy(c->mechanism, r->mechanism, sizeof(c->mechanism));
	c->pred_resist = r->pred_resist;
	c->entropy_bits = r->entropy_bits;
	c->nonce_bits = r->nonce_bits;
	c->pers_bits = r->pers_bits;
	c->add_bits = r->add_bits;
	c->returned_bits_hdr = r->returned_bits;
	c->count = (unsigned long)n;
	c->line = r->lineno;
	return 0;
}

/* The fields present must describe one of the CTR_DRBG test procedures. */
static int finish_case(struct cavp_reader *r, struct cavp_case *c)
{
	uint64_t hdr = (uint64_t)c->returned_bits_hdr;

	if (!c->entropy.present)
		return error_at(r, c->line, "case COUNT = %lu has no EntropyInput",
				c->count);
	if (!c->returned.present)
		return error_at(r, c->line, "case COUNT = %lu has no ReturnedBits",
				c->count);
	if (c->add_reseed.present && !c->entropy_reseed.present)
		return error_at(r, c->line,
				"case COUNT = %lu has AdditionalInputReseed without EntropyInputReseed",
				c->count);
	if (c->n_entropy_pr && c->n_add && c->n_add != c->n_entropy_pr)
		return error_at(r, c->line,
				"case COUNT = %lu has %zu AdditionalInput but %zu EntropyInputPR",
				c->count, c->n_add, c->n_entropy_pr);
	if (c->pred_resist == 1 && !c->n_entropy_pr)
		return error_at(r, c->line,
				"case COUNT = %lu: PredictionResistance = True but no EntropyInputPR",
				c->count);
	if (c->pred_resist == 0 && c->n_entropy_pr)
		return error_at(r, c->line,
				"case COUNT = %lu: EntropyInputPR but PredictionResistance = False",
				c->count);
	/* The header may give a bit count that is not whole bytes; the hex
	 * always holds whole bytes.  Otherwise trust the hex. */
	if (c->returned_bits_hdr >= 0 && (hdr + 7) / 8 == c->returned.len)
		c->returned_bits = hdr;
	else
		c->returned_bits = (uint64_t)c->returned.len * 8;
	return 1;
}

int cavp_next(struct cavp_reader *r, struct cavp_case *c)
{
	bool open = false;
	int rc;

	cavp_case_clear(c);
	for (;;) {
		struct span s, name, value;

		if (!r->pending) {
			rc = read_line(r);
			if (rc < 0)
				goto fail;
			if (rc == 0)
				break;
		}
		r->pending = false;
		s = trim(r->line, r->len);
		if (!s.n || s.p[0] == '#')
			continue;
		if (s.p[0] == '[') {
			if (s.p[s.n - 1] != ']') {
				error_at(r, r->lineno,
					 "section header without ']'");
				goto fail;
			}
			if (open) {
				r->pending = true;
				break;
			}
			if (section_header(r, trim(s.p + 1, s.n - 2)))
				goto fail;
			continue;
		}
		if (!split_eq(s, &name, &value)) {
			error_at(r, r->lineno,
				 "expected 'Name = value', a [header], a # comment or a blank line");
			goto fail;
		}
		if (span_is(name, "COUNT")) {
			if (open) {
				r->pending = true;
				break;
			}
			if (start_case(r, c, value))
				goto fail;
			open = true;
			continue;
		}
		if (!open) {
			char nb[40];

			error_at(r, r->lineno,
				 "%s outside a test case (no COUNT line before it)",
				 shown(name, nb));
			goto fail;
		}
		if (add_field(r, c, name, value))
			goto fail;
	}
	if (!open)
		return 0;
	if (finish_case(r, c) < 0)
		goto fail;
	return 1;
fail:
	cavp_case_clear(c);
	return -1;
}
