/* One run of an exec hook, through the event loop: the request written to
 * its stdin, its stdout collected (bounded), its stderr into the task's
 * output, its exit seen through a pidfd, and its whole process group
 * killed when it outlives its timeout. Nothing here waits: a slow hook
 * delays only whoever waits for its result. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/loop.h"

struct hook_run_result {
	bool timed_out;
	bool output_too_large; /* more than HOOK_RESPONSE_MAX_BYTES: killed */
	bool exited;           /* else killed by `signal` */
	int code;
	int signal;
	const char *output; /* stdout, NUL-terminated; valid during the callback */
	size_t output_length;
};

typedef void (*hook_run_done_function)(void *context, const struct hook_run_result *result);

struct hook_run {
	struct loop *loop;
	pid_t pid; /* 0 when nothing runs */
	struct loop_watch pidfd_watch;
	struct loop_watch input_watch;  /* our end of its stdin */
	struct loop_watch output_watch; /* our end of its stdout */
	char *input;
	size_t input_length, input_written;
	char *output;
	size_t output_length, output_capacity;
	bool timed_out, output_too_large;
	struct loop_timer deadline;
	hook_run_done_function done;
	void *context;
};

void hook_run_init(struct hook_run *run, struct loop *loop);

/* Starts `argv` (looked up on corral's PATH) in a new session, so that it
 * leads its own process group, with `envp`, `input` on stdin, stdout
 * collected and stderr on `stderr_fd`. 0, then `done` follows once it has
 * exited; or -errno when it could not be started (exec failed included).
 * The run takes `input` (malloc'd) and frees it, also when it fails. */
int hook_run_start(struct hook_run *run, char *const *argv, char *const *envp, char *input,
		   size_t input_length, int stderr_fd, uint64_t timeout_ms,
		   hook_run_done_function done, void *context);

bool hook_run_active(const struct hook_run *run);

/* SIGKILL to its process group; `done` still follows, once reaped. */
void hook_run_kill(struct hook_run *run);

/* For the SIGCHLD sweep: true when `pid` is this run, now finished. */
bool hook_run_reap(struct hook_run *run, pid_t pid);

/* corral is leaving: a run still going is killed and reaped here, without
 * calling `done`. */
void hook_run_free(struct hook_run *run);
