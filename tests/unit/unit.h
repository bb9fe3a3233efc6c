/* SPDX-License-Identifier: MIT */
/* unit.h - a minimal check macro for the unit tests. */
#ifndef IMGFS_UNIT_H
#define IMGFS_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failures;
static int unit_checks;

#define CHECK(cond)                                                         \
	do {                                                                \
		unit_checks++;                                              \
		if (!(cond)) {                                              \
			unit_failures++;                                    \
			fprintf(stderr, "%s:%d: check failed: %s\n",        \
				__FILE__, __LINE__, #cond);                  \
		}                                                           \
	} while (0)

#define CHECK_BYTES(got, want, len) CHECK(!memcmp((got), (want), (len)))

static inline int unit_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, unit_checks, unit_failures);
	return unit_failures ? 1 : 0;
}

#endif /* IMGFS_UNIT_H */
