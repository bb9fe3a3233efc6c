// SPDX-License-Identifier: MIT
/*
 * Directory entries: 12 bytes each at the start of a directory block,
 * names after them (docs/format.md §6.1, §6.2).
 */
#include "format/format.h"

void dirent_encode(const struct imgfs_dirent *de, uint8_t *b)
{
	imgfs_put_le64(b + 0, de->nid);
	imgfs_put_le16(b + 8, de->nameoff);
	b[10] = de->file_type;
	b[11] = 0;
}

void dirent_decode(const uint8_t *b, struct imgfs_dirent *de)
{
	de->nid = imgfs_get_le64(b + 0);
	de->nameoff = imgfs_get_le16(b + 8);
	de->file_type = b[10];
}
