// SPDX-License-Identifier: MIT
/* CRC-32C against published vectors and against a bitwise reference. */
#include <stdint.h>
#include <stdlib.h>

#include "imgfs/crc32c.h"
#include "unit.h"

static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
	}
	return crc;
}

int main(void)
{
	uint8_t buf[4099];
	uint8_t zeros[32] = { 0 };

	/* the standard check value is the inverted raw state */
	CHECK(imgfs_crc32c(0xFFFFFFFFu, "123456789", 9) == 0x1CF96D7Cu);
	CHECK(~imgfs_crc32c(0xFFFFFFFFu, "123456789", 9) == 0xE3069283u);
	/* RFC 3720 B.4: 32 bytes of zeros -> 0x8A9136AA */
	CHECK(~imgfs_crc32c(0xFFFFFFFFu, zeros, 32) == 0x8A9136AAu);
	CHECK(imgfs_crc32c(0x1234u, "", 0) == 0x1234u);
	srand(7);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (size_t len = 0; len < sizeof(buf); len += 97) {
		/* every alignment and tail length of the sliced loop */
		for (size_t off = 0; off < 8 && off < len; off++)
			CHECK(imgfs_crc32c(0xFFFFFFFFu, buf + off, len - off) ==
			      crc_bitwise(0xFFFFFFFFu, buf + off, len - off));
	}
	/* chaining equals one pass */
	CHECK(imgfs_crc32c(imgfs_crc32c(0xFFFFFFFFu, buf, 1000), buf + 1000,
			   3000) == imgfs_crc32c(0xFFFFFFFFu, buf, 4000));
	return unit_done("crc32c");
}
