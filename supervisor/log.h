/* corral's own messages, on stderr: "corral: web/app: started (pid 42)".
 * Every message about a task or group names it first. */
#pragma once

void log_message(const char *format, ...) __attribute__((format(printf, 1, 2)));
