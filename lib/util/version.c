// SPDX-License-Identifier: MIT
/*
 * The library's version, fixed when it is built: a program compares it
 * with the IMGFS_VERSION_* it was compiled against.
 */
#include "imgfs/version.h"

const char *imgfs_version(void)
{
	return IMGFS_VERSION_STRING;
}
