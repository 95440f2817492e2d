/* The control protocol: newline-delimited JSON over a Unix stream socket.
 * Documented for other clients in docs/control-protocol.md.
 *
 * Pure: functions over buffers, so that they can be unit-tested and
 * fuzzed. The server (control_server.c) frames lines and runs requests; the
 * CLI (control_client.c) encodes them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define CONTROL_PROTOCOL_VERSION 1
/* Where corral listens and the CLI connects unless told otherwise. */
#define CONTROL_SOCKET_DEFAULT "/run/corral/control.sock"
/* A request line longer than this is refused (and the rest of it skipped). */
#define CONTROL_REQUEST_MAX (64 * 1024)
/* "group/task": two names of at most 64 characters and a slash. */
#define CONTROL_TARGET_MAX 130
/* reload's "path": a config file. */
#define CONTROL_PATH_MAX 4096

enum control_command {
	CONTROL_STATUS,
	CONTROL_RESTART,
	CONTROL_STOP,
	CONTROL_START,
	CONTROL_SIGNAL,
	CONTROL_LOGS,
	CONTROL_EVENTS,
	CONTROL_SHUTDOWN,
	CONTROL_RELOAD,
	CONTROL_EXEC,
	CONTROL_INSPECT,
	CONTROL_SCALE,
	CONTROL_UPGRADE,
};
#define CONTROL_COMMAND_COUNT (CONTROL_UPGRADE + 1)

enum control_restart_mode {
	CONTROL_RESTART_TASK,    /* Restart of a running task */
	CONTROL_RESTART_FORCE,   /* ForceRestart of a task, dead or running */
	CONTROL_RESTART_ALL,     /* the whole group, in lifecycle order */
	CONTROL_RESTART_RUNNING, /* every running task of the group */
	CONTROL_RESTART_ROLLING, /* a task's instances, a few at a time */
};

/* scale's pairs, at most. */
#define CONTROL_SCALE_MAX 64

/* One GROUP/TASK=N of scale: the task written with `instances:`. */
struct control_scale_count {
	char target[CONTROL_TARGET_MAX + 1];
	unsigned count; /* 1..TASK_INSTANCES_MAX */
};

struct control_request {
	enum control_command command;
	/* "", "group" or "group/task", as the command allows: status takes
	 * any; restart (task, force), stop, start, signal and logs a task;
	 * restart (all, running) a group; events and shutdown none. */
	char target[CONTROL_TARGET_MAX + 1];
	enum control_restart_mode restart_mode; /* restart only */
	int signal_number;                      /* signal only */
	bool follow;                            /* logs, events */
	unsigned tail;                          /* logs, events: 0 = all kept */
	/* reload: "" = the same file; upgrade: the new binary, "" = corral's
	 * own as it is on disk now. */
	char path[CONTROL_PATH_MAX + 1];
	bool dry_run;         /* reload */
	bool rerun_completed; /* reload */
	/* exec: the command (NULL-terminated, at least one), NAME=VALUE
	 * over the task's environment, a user other than the task's, a
	 * working directory other than its; owned (control_request_free). */
	char **argv;
	char **env;
	char user[CONTROL_TARGET_MAX + 1];
	char cwd[CONTROL_PATH_MAX + 1];
	/* exec: the CLI relays its stdin to the command (-i); else the
	 * command reads /dev/null. */
	bool stdin_relayed;
	/* exec: a pseudo-terminal (-t), of this size (0: unknown). */
	bool tty;
	unsigned short rows, columns;
	bool show_secrets; /* inspect */
	/* restart mode rolling: instances replaced at once; 0: one. */
	unsigned max_unavailable;
	/* scale: its pairs, owned (control_request_free). */
	struct control_scale_count *counts;
	size_t count_count;
};

/* Frees what a parsed request owns (exec's argv and env, scale's counts). */
void control_request_free(struct control_request *request);

/* Parses one request (a JSON object, without its newline):
 *   {"version": 1, "command": "restart", "target": "web/app", "mode": "force"}
 * Fields: version (required, 1), command (required), target, mode
 * (task|force|all|running|rolling), max_unavailable (rolling), counts
 * (scale: {"group/task": N}), signal (a name: "SIGHUP", "HUP"), follow
 * (bool), tail (integer >= 0). Unknown fields, wrong types, a target of the
 * wrong shape for the command, and unknown commands are errors. Returns 0,
 * or -1 with `error` saying what is wrong, for the error reply. */
int control_request_parse(const char *line, size_t length, struct control_request *request,
			  char *error, size_t error_size);

/* The request as one JSON line with its newline, for the CLI. The caller
 * frees it. */
char *control_request_encode(const struct control_request *request);

/* {"ok": false, "error": MESSAGE} with its newline. The caller frees it. */
char *control_reply_error(const char *message);

const char *control_command_name(enum control_command command);

/* The right (config/model/config.h, enum control_right) a task needs in its
 * control: list to make a request of this kind. */
unsigned control_command_right(enum control_command command);

/* "task", "force", "all", "running", "rolling". */
const char *control_restart_mode_name(enum control_restart_mode mode);

/* The checks of control_request_parse() that concern the values rather than
 * the JSON: the target's shape for the command (and restart mode), the
 * signal. The CLI runs them before connecting, so that a wrong target is a
 * usage error caught without a server. Returns 0, or -1 with `error` set. */
int control_request_validate(const struct control_request *request, char *error, size_t error_size);
