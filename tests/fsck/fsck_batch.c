// SPDX-License-Identifier: MIT
/*
 * fsck_batch - run the checker on many image files, each in its own child
 * process with a time limit, and print one line per file:
 * "exit N PATH" (0 clean, 4 errors, 8 operational failure), or
 * "signal N PATH" / "timeout PATH". Used by the corruption test, where
 * starting fsck.img thousands of times would dominate the run time.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "imgfs/check.h"

#define TIME_LIMIT 20

static int check_one(const char *path)
{
	struct imgfs_check_options o;
	struct imgfs_check_result res;
	struct imgfs_error err = { 0 };

	imgfs_check_options_init(&o);
	o.flags = IMGFS_CHECK_F_DIGEST;
	if (imgfs_check_path(path, &o, &res, &err) < 0)
		return 8;
	return res.errors ? 4 : 0;
}

int main(int argc, char **argv)
{
	int i, status;

	for (i = 1; i < argc; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			alarm(TIME_LIMIT);
			_exit(check_one(argv[i]));
		}
		if (waitpid(pid, &status, 0) < 0) {
			perror("waitpid");
			return 1;
		}
		if (WIFEXITED(status))
			printf("exit %d %s\n", WEXITSTATUS(status), argv[i]);
		else if (WTERMSIG(status) == SIGALRM)
			printf("timeout %s\n", argv[i]);
		else
			printf("signal %d %s\n", WTERMSIG(status), argv[i]);
		fflush(stdout);
	}
	return 0;
}
