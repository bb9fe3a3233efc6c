/* SPDX-License-Identifier: MIT */
/*
 * bigbuf.h - scratch buffers that may grow to megabytes (not installed),
 * such as a decoded pcluster. From 2 MiB on, a buffer is mapped on its own
 * with transparent huge pages advised, so filling it takes a few page
 * faults rather than one per 4 KiB page (each a trip to the hypervisor in
 * a virtual machine); smaller ones come from malloc. Growing one does not
 * keep its contents.
 */
#ifndef IMGFS_BIGBUF_H
#define IMGFS_BIGBUF_H

#include <stddef.h>
#include <stdint.h>

/* *@buf holds at least @need bytes: 0, or -ENOMEM (*@buf then unchanged). */
int bigbuf_reserve(uint8_t **buf, size_t *cap, size_t need);
/* Free a buffer bigbuf_reserve() gave, of capacity @cap. */
void bigbuf_free(uint8_t *buf, size_t cap);

#endif /* IMGFS_BIGBUF_H */
