// SPDX-License-Identifier: MIT
/*
 * fmount - mount an EROFS image file directly (file-backed mount).
 *
 *   fmount [-o OPTS] IMAGE DIR   mount IMAGE read-only on DIR
 *   fmount -u DIR                unmount DIR
 *
 * util-linux mount(8) turns a regular file into a loop device first; calling
 * mount(2) with the file itself as source makes the kernel read the image
 * through the file (and, with "-o directio", with direct I/O).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: fmount [-o OPTS] IMAGE DIR\n"
		   "       fmount -u DIR\n");
}

static int do_umount(const char *dir)
{
	if (umount2(dir, 0) < 0) {
		fprintf(stderr, "fmount: umount %s: %s\n", dir, strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *opts = NULL;
	int unmount = 0;
	int c;

	while ((c = getopt(argc, argv, "o:uh")) != -1) {
		switch (c) {
		case 'o':
			opts = optarg;
			break;
		case 'u':
			unmount = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (unmount) {
		if (argc - optind != 1) {
			usage(stderr);
			return 2;
		}
		return do_umount(argv[optind]);
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	if (mount(argv[optind], argv[optind + 1], "erofs", MS_RDONLY,
		  opts) < 0) {
		fprintf(stderr, "fmount: mount %s on %s%s%s: %s\n",
			argv[optind], argv[optind + 1], opts ? " -o " : "",
			opts ? opts : "", strerror(errno));
		return 1;
	}
	return 0;
}
