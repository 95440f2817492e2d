/* corral's own messages, on stderr: "corral: web/app: started (pid 42)".
 * Every message about a task or group names it first. */
#pragma once

#include <stdbool.h>

/* Something the user must see: an error, a warning. Always printed. */
void log_message(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Progress (a task started, the cgroup in use, the exit code): printed
 * unless log_set_quiet() asked for silence, as one-command mode does
 * without -v (tini and dumb-init say nothing of their own). */
void log_info(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Detail for someone looking into what corral does, and noise on every
 * start otherwise (a protection this container does not allow, say):
 * printed only with -v (`corral run -v`, one-command mode's -v). */
void log_debug(const char *format, ...) __attribute__((format(printf, 1, 2)));

void log_set_quiet(bool quiet);
void log_set_verbose(bool verbose);

/* With log_format json (`run --log-format json`): each message is a JSON
 * line, {"time":S.mmm,"level":"info","source":"corral","task":"web/app",
 * "message":"started (pid 42)"}, "task" only when the message begins with
 * one; "level" is info, debug, warning or error. */
void log_set_json(bool json);
