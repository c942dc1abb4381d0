// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Runs a fuzz harness's LLVMFuzzerTestOneInput() over saved inputs, in an
 * ordinary build without libFuzzer: "replay FILE|DIR...".  This is how the
 * seed corpus and every input that once crashed a harness (the regression
 * cases) run in "make check" (tests/test_fuzz_regressions.sh).  A failed
 * invariant aborts, so the exit status tells.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned long runs;

static int run_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "rb");

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (len == cap) {
			uint8_t *p;

			cap = cap ? cap * 2 : 4096;
			p = realloc(buf, cap);
			if (!p) {
				fclose(f);
				free(buf);
				return -1;
			}
			buf = p;
		}
		size_t n = fread(buf + len, 1, cap - len, f);

		if (n == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	/* An exactly-sized copy, as libFuzzer passes it. */
	uint8_t *exact = malloc(len ? len : 1);

	if (!exact) {
		free(buf);
		return -1;
	}
	if (len)
		memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	runs++;
	return 0;
}

static int run_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n, r = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char sub[4096];

		if (names[i]->d_name[0] != '.' && r == 0) {
			snprintf(sub, sizeof(sub), "%s/%s", path,
				 names[i]->d_name);
			r = run_path(sub);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (run_path(argv[i]) < 0)
			return 1;
	printf("%s: %lu inputs, all invariants held\n", argv[0], runs);
	return 0;
}
