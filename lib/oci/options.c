// SPDX-License-Identifier: MIT
/*
 * options.c - the OCI options a caller hands over: their defaults, the
 * struct_size rule, and the mkfs options a unit is converted with. Below
 * every other file of lib/oci, which all read the options through it.
 */
#include <errno.h>
#include <string.h>

#include "imgfs/oci.h"
#include "imgfs/writer.h"
#include "oci/internal.h"
#include "util/error.h"
#include "util/sized.h"

void imgfs_oci_options_init(struct imgfs_oci_options *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	/* mkfs NULL: the defaults, which are containerd's converter's (no
	 * inline data, 4096-byte blocks) */
}

void oci_mkfs_of(const struct imgfs_oci_options *o,
		 struct imgfs_mkfs_options *m)
{
	if (o->mkfs)
		*m = *o->mkfs;
	else
		imgfs_mkfs_options_init(m);
}

/*
 * The struct_size rule (util/sized.h). While no field has been added
 * since the smallest size accepted, the caller's struct holds everything
 * the library reads, so it is used as it is.
 */
int oci_options_in(const struct imgfs_oci_options *o, struct imgfs_error *err)
{
	struct imgfs_oci_options full;

	if (!o)
		return error_set(err, -EINVAL, "no OCI options");
	imgfs_oci_options_init(&full);
	return SIZED_IN(&full, o, sizeof(full), "OCI options", err);
}
