// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD shim for the tests: openat() with O_TMPFILE fails with
 * EOPNOTSUPP, as on a filesystem that cannot make unnamed files, so the
 * named fallback of the image output gets exercised.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

typedef int (*openat_fn)(int, const char *, int, ...);

static int call_real(const char *name, int dirfd, const char *path,
		     int flags, mode_t mode)
{
	openat_fn real = (openat_fn)dlsym(RTLD_NEXT, name);

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(dirfd, path, flags, mode);
}

static int shim(const char *name, int dirfd, const char *path, int flags,
		va_list ap)
{
	mode_t mode = 0;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		mode = va_arg(ap, mode_t);
	if ((flags & O_TMPFILE) == O_TMPFILE) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return call_real(name, dirfd, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = shim("openat", dirfd, path, flags, ap);
	va_end(ap);
	return r;
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = shim("openat64", dirfd, path, flags, ap);
	va_end(ap);
	return r;
}
