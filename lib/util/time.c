// SPDX-License-Identifier: MIT
/*
 * Times as one signed decimal, for dump.img and fsck.img --compare.
 */
#include <inttypes.h>
#include <stdio.h>

#include "imgfs/stats.h"

void imgfs_time_decimal(int64_t sec, uint32_t nsec,
			char buf[IMGFS_TIME_DECIMAL_MAX])
{
	if (nsec >= 1000000000u)
		snprintf(buf, IMGFS_TIME_DECIMAL_MAX,
			 "%" PRId64 " s + %" PRIu32 " ns", sec, nsec);
	else if (sec < 0 && nsec)
		snprintf(buf, IMGFS_TIME_DECIMAL_MAX, "-%" PRIu64 ".%09" PRIu32,
			 (uint64_t)(-1 - sec), 1000000000u - nsec);
	else
		snprintf(buf, IMGFS_TIME_DECIMAL_MAX, "%" PRId64 ".%09" PRIu32,
			 sec, nsec);
}
