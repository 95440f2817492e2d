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

/* A hook's process, as its spawner started it. */
struct hook_process {
	pid_t pid;    /* leads its own session and process group */
	int pidfd;    /* close-on-exec */
	int error_fd; /* says why the exec failed, if it did (read at the exit) */
};

/* How a hook's process starts, given by who runs hooks: the supervisor's
 * one spawn path (isolation/spawn.h, no isolation asked), which hooks/
 * cannot include. */
struct hook_spawner {
	/* Starts `argv` (looked up on the PATH of `envp`) with `envp`, in a new
	 * session, `stdio` as its fds 0, 1 and 2 and nothing else open,
	 * default signal handling and an empty mask. 0, or -errno. */
	int (*spawn)(void *context, char *const *argv, char *const *envp, const int stdio[3],
		     struct hook_process *process);
	/* At the exit: true, with `error`, when the process never became the
	 * hook (its exec or a step before failed). */
	bool (*start_failed)(void *context, char *const *argv, int error_fd, char *error,
			     size_t error_size);
	void *context;
};

struct hook_run_result {
	bool start_failed;   /* the hook never ran: `failure` says why */
	const char *failure; /* "exec /x: No such file or directory" */
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
	const struct hook_spawner *spawner;
	pid_t pid;         /* 0 when nothing runs */
	char *const *argv; /* of the run in progress, for its start failure */
	int error_fd;
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

void hook_run_init(struct hook_run *run, struct loop *loop, const struct hook_spawner *spawner);

/* Starts `argv` (looked up on corral's PATH) through the spawner, in a new
 * session, so that it leads its own process group, with `envp`, `input` on
 * stdin, stdout collected and stderr on `stderr_fd`. 0, then `done`
 * follows once it has exited (an exec that failed included: the result
 * says `start_failed`); or -errno when it could not be started. `argv`
 * must live until `done`. The run takes `input` (malloc'd) and frees it,
 * also when it fails. */
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
