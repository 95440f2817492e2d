/* A running corral: every group, the event loop, signals and PID 1 duties,
 * graceful shutdown, and the exit code. */
#pragma once

#include "config/model/config.h"
#include "supervisor/pid1/one_command.h"

struct run_options {
	const char *events_path; /* JSON lines event log, or NULL */
	const char *socket_path; /* --socket, or NULL */
	/* --keep-running: exit only on a shutdown request, and tasks stopped
	 * on request do not end their group (supervisord's behaviour). */
	bool keep_running;
	/* corral -- COMMAND (one_command.h): signals are passed on to the
	 * command, which gets corral's stdio; no control socket. NULL: a
	 * config's run. */
	const struct one_command *one_command;
	/* --log-format: over the config's log_format; -1: the config's. */
	int log_format;
	/* --shutdown-timeout, else CORRAL_SHUTDOWN_TIMEOUT, over the config's
	 * shutdown_timeout: `shutdown_timeout_source` names which ("--shutdown-
	 * timeout"); NULL: the config's. */
	uint64_t shutdown_timeout_ms;
	const char *shutdown_timeout_source;
};

/* Runs the config until every group is finished, or a shutdown is asked
 * for and done. Returns corral's exit code: 0 when every task ended well,
 * else the code of the first task that failed for good (see docs). */
int supervisor_run(const struct config *config, const struct run_options *options);
