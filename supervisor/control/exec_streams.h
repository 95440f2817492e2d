/* The stdin, stdout and stderr of an exec'd command, made by corral:
 * pipes, or with -t a pseudo-terminal. The command gets its ends; the
 * client gets the others (SCM_RIGHTS, with the reply) and relays them to
 * its own stdio (exec_relay.h).
 *
 * Why not the client's own fds: a process in the task could reopen them
 * through /proc/PID/fd of the exec'd command and keep them: with the
 * operator's terminal it read what the operator typed after the exec had
 * returned. Made here, no fd the client had ever enters the task, and an
 * exec's streams end with the client. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct exec_streams {
	int command_fds[3]; /* its 0, 1, 2 (the same pty side thrice with -t) */
	int client_fds[3];  /* in the order `client_names` says */
	size_t client_fd_count;
	const char *client_names[3]; /* "stdin", "stdout", "stderr", or "tty" */
};

struct exec_streams_request {
	bool stdin_relayed; /* else the command reads /dev/null */
	bool tty;
	unsigned short rows, columns; /* the pty's size; 0: unknown */
};

/* 0, or -errno with `error` (nothing left open). */
int exec_streams_open(struct exec_streams *streams, const struct exec_streams_request *request,
		      char *error, size_t error_size);

/* Closes the command's ends (once the helper has its copies). */
void exec_streams_close_command_side(struct exec_streams *streams);

/* Closes the client's ends (the reply never went out). */
void exec_streams_close_client_side(struct exec_streams *streams);
