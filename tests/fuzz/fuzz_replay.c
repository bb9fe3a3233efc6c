// SPDX-License-Identifier: MIT
/*
 * fuzz_replay.c - run the fuzz target once on every file of the seed
 * corpus and of the regression inputs (crashes found by fuzzing), without
 * libFuzzer. Part of "make check"; built with the sanitizers when
 * configured with --enable-sanitizers. Directories default to
 * $top_srcdir/tests/fuzz/{corpus,regress} (REPLAY_CORPUS and
 * REPLAY_REGRESS name others, for another target).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef REPLAY_CORPUS
#define REPLAY_CORPUS "corpus"
#define REPLAY_REGRESS "regress"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int replay_dir(const char *dir, unsigned int *count)
{
	struct dirent *de;
	char path[4096];
	DIR *d = opendir(dir);

	if (!d && errno == ENOENT)
		return 0; /* no regression inputs yet */
	if (!d) {
		perror(dir);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (replay_file(path)) {
			closedir(d);
			return -1;
		}
		(*count)++;
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	unsigned int count = 0;
	char dir[4096];
	int i;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			if (replay_dir(argv[i], &count))
				return 1;
	} else {
		static const char *const sub[] = { REPLAY_CORPUS,
						   REPLAY_REGRESS };

		for (i = 0; i < 2; i++) {
			snprintf(dir, sizeof(dir), "%s/tests/fuzz/%s",
				 top ? top : ".", sub[i]);
			if (replay_dir(dir, &count))
				return 1;
		}
	}
	printf("fuzz_replay: %u inputs replayed\n", count);
	return count ? 0 : 1;
}
