// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD shim for the tests: open() and openat() with O_TMPFILE fail
 * with EOPNOTSUPP, as on a filesystem that cannot make unnamed files (NFS),
 * so the named fallbacks of the image output and of the OCI layout writer
 * get exercised.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open_fn)(const char *, int, ...);

/* dirfd AT_FDCWD with an open*() name: the real open(path, ...) */
static int call_real(const char *name, int dirfd, const char *path,
		     int flags, mode_t mode)
{
	void *real = dlsym(RTLD_NEXT, name);

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (name[4] != 'a')
		return ((open_fn)real)(path, flags, mode);
	return ((openat_fn)real)(dirfd, path, flags, mode);
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

int open(const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = shim("open", AT_FDCWD, path, flags, ap);
	va_end(ap);
	return r;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = shim("open64", AT_FDCWD, path, flags, ap);
	va_end(ap);
	return r;
}
