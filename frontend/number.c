// SPDX-License-Identifier: MIT
/*
 * Number, size and SOURCE_DATE_EPOCH parsing for the programs
 * (frontend/number.h).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/number.h"

int fe_parse_int(const char *s, int base, int64_t min, int64_t max,
		 int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, base);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The digits at @s, *@end after them: strtoull without its sign and blanks. */
static int leading_uint(const char *s, int base, uint64_t *v, char **end)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, end, base);
	return errno ? -1 : 0;
}

int fe_parse_uint(const char *s, int base, uint64_t min, uint64_t max,
		  uint64_t *out)
{
	uint64_t v;
	char *end;

	if (leading_uint(s, base, &v, &end) || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int fe_parse_size(const char *s, int base, const char *units, uint64_t min,
		  uint64_t max, uint64_t *out)
{
	static const char powers[] = "KMGT";
	unsigned int shift = 0;
	const char *p;
	uint64_t v;
	char *end;

	if (leading_uint(s, base, &v, &end))
		return -1;
	if (*end && strchr(units, *end) &&
	    (p = strchr(powers, toupper((unsigned char)*end)))) {
		shift = 10 * (unsigned int)(p - powers + 1);
		end++;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	v <<= shift;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int fe_source_date_epoch(const char *prog, int64_t *t)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	uint64_t v;

	if (!s)
		return 0;
	if (fe_parse_uint(s, 10, 0, INT64_MAX, &v)) {
		fprintf(stderr,
			"%s: SOURCE_DATE_EPOCH '%s' is not a number of seconds since 1970 (0 to %" PRId64
			", digits only)\n",
			prog, s, INT64_MAX);
		return -1;
	}
	*t = (int64_t)v;
	return 1;
}
