/* SPDX-License-Identifier: MIT */
/*
 * Numbers and sizes on the command lines of mkfs.img, fsck.img and
 * dump.img, and the SOURCE_DATE_EPOCH rule: one parser each, so that the
 * three programs take a value the same way. Each returns 0 with *@out
 * set, or -1 when @s is not a whole number in range (nothing printed,
 * except by fe_source_date_epoch()).
 */
#ifndef FRONTEND_NUMBER_H
#define FRONTEND_NUMBER_H

#include <stdint.h>

/*
 * A signed number in @base (10, or 0 for C prefixes), strtoll's form:
 * leading blanks and a sign are taken.
 */
int fe_parse_int(const char *s, int base, int64_t min, int64_t max,
		 int64_t *out);

/* An unsigned number in @base (10 or 0): digits only, no sign, no blank. */
int fe_parse_uint(const char *s, int base, uint64_t min, uint64_t max,
		  uint64_t *out);

/*
 * A size: an unsigned number as fe_parse_uint(), then one optional
 * letter of @units ("KMGT", "kKmMgG", ...), a power of 1024 by its
 * place in KMGT whatever its case.
 */
int fe_parse_size(const char *s, int base, const char *units, uint64_t min,
		  uint64_t max, uint64_t *out);

/*
 * $SOURCE_DATE_EPOCH into *@t: 1 when set, 0 when unset, -1 when it is
 * not decimal digits only (no sign, no blank) from 0 to INT64_MAX; then
 * "PROG: SOURCE_DATE_EPOCH ... is not ..." is printed on stderr. The one
 * rule of every command line that reads it.
 */
int fe_source_date_epoch(const char *prog, int64_t *t);

#endif /* FRONTEND_NUMBER_H */
