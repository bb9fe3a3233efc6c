// SPDX-License-Identifier: MIT
/*
 * util.c - text formatting helpers of dump.img.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dump.h"
#include "frontend/escape.h"

void print_escaped(FILE *f, const void *s, size_t len, enum esc_mode mode)
{
	fe_escape_fwrite(f, s, len, mode == ESC_VALUE ? FE_ESC_ASCII : 0);
}

const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

char mode_type_char(uint32_t mode)
{
	switch (mode & 0170000) {
	case 0100000:
		return '-';
	case 0040000:
		return 'd';
	case 0120000:
		return 'l';
	case 0020000:
		return 'c';
	case 0060000:
		return 'b';
	case 0010000:
		return 'p';
	case 0140000:
		return 's';
	}
	return '?';
}

/* One rwx triplet; @special is the setuid/setgid/sticky bit of it. */
static void triplet(uint32_t mode, unsigned int shift, bool special,
		    char lower, char upper, char *out)
{
	out[0] = (mode >> shift) & 4 ? 'r' : '-';
	out[1] = (mode >> shift) & 2 ? 'w' : '-';
	if (special)
		out[2] = (mode >> shift) & 1 ? lower : upper;
	else
		out[2] = (mode >> shift) & 1 ? 'x' : '-';
}

void mode_string(uint32_t mode, char *buf)
{
	buf[0] = mode_type_char(mode);
	triplet(mode, 6, mode & 04000, 's', 'S', buf + 1);
	triplet(mode, 3, mode & 02000, 's', 'S', buf + 4);
	triplet(mode, 0, mode & 01000, 't', 'T', buf + 7);
	buf[10] = '\0';
}

void iso_time(int64_t sec, uint32_t nsec, bool with_nsec, char *buf)
{
	time_t t = (time_t)sec;
	struct tm tm;
	size_t n;

	if ((int64_t)t != sec || !gmtime_r(&t, &tm) ||
	    !(n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm))) {
		if (with_nsec)
			imgfs_time_decimal(sec, nsec, buf);
		else
			snprintf(buf, 48, "%" PRId64, sec);
		return;
	}
	if (with_nsec)
		snprintf(buf + n, 48 - n, ".%09uZ", nsec);
	else
		snprintf(buf + n, 48 - n, "Z");
}

