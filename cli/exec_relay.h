/* The CLI's side of an exec's streams (exec_streams.h): corral hands the
 * client the other ends of the command's pipes, or the pty's master with
 * -t, and the client copies between them and its own stdin, stdout and
 * stderr, so that none of its own fds enters the task.
 *
 * One poll loop, a bounded buffer per direction: a stream is read only
 * once its buffer has gone out, so a slow reader of our stdout holds the
 * command (it blocks on a full pipe) rather than growing memory. EOF on
 * our stdin closes the command's stdin pipe; our stdout closed (EPIPE)
 * closes the command's stdout pipe, so its next write gets SIGPIPE as it
 * would have writing to ours. */
#pragma once

#include <stdbool.h>

struct exec_relay_fds {
	int stdin_pipe;  /* the write end of the command's stdin; -1: none */
	int stdout_pipe; /* the read ends of its stdout and stderr */
	int stderr_pipe;
	int tty; /* the pty's master (-t): all three; -1: pipes */
};

/* Copies until `socket_fd` has something to read (the exit line, or the
 * end of the connection), then what the command wrote before it exited;
 * closes the fds. With a tty, a window change of our terminal
 * (`window_changed`, set by a SIGWINCH handler) is passed on. */
void exec_relay_run(int socket_fd, struct exec_relay_fds *fds, volatile int *window_changed);
