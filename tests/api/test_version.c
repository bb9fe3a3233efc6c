// SPDX-License-Identifier: MIT
/*
 * The version macros of imgfs/version.h, imgfs_version() and configure's
 * AC_INIT version (PACKAGE_VERSION in config.h) all say the same.
 */
#include <stdio.h>
#include <string.h>

#include "imgfs/version.h"

#include "../unit/unit.h"

int main(void)
{
	char parts[64];

	snprintf(parts, sizeof(parts), "%d.%d.%d", IMGFS_VERSION_MAJOR,
		 IMGFS_VERSION_MINOR, IMGFS_VERSION_PATCH);
	CHECK(strcmp(parts, IMGFS_VERSION_STRING) == 0);
	CHECK(strcmp(IMGFS_VERSION_STRING, PACKAGE_VERSION) == 0);
	CHECK(strcmp(imgfs_version(), IMGFS_VERSION_STRING) == 0);

	CHECK(IMGFS_VERSION == ((IMGFS_VERSION_MAJOR << 16) |
				(IMGFS_VERSION_MINOR << 8) |
				IMGFS_VERSION_PATCH));
	CHECK(IMGFS_VERSION_NUMBER(1, 2, 3) > IMGFS_VERSION_NUMBER(1, 1, 9));
	CHECK(IMGFS_VERSION_NUMBER(2, 0, 0) > IMGFS_VERSION_NUMBER(1, 255, 255));
	CHECK(IMGFS_VERSION_MINOR < 256 && IMGFS_VERSION_PATCH < 256);

	printf("imgfs %s\n", imgfs_version());
	return unit_done("test_version");
}
