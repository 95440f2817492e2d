/* What corral says to its own parent over sd_notify (systemd's
 * sd_notify(3) protocol: "NAME=VALUE" lines in one datagram), and how it
 * reads the variables the parent gave it. Pure, so that each text is
 * unit-tested; supervisor/parent/parent_notify.c sends them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* NOTIFY_SOCKET's value as an address: an absolute path, or "@NAME" for
 * an abstract socket (systemd's and podman's two forms). Returns 0, or -1
 * with `error` saying what is wrong with it. */
int parent_notify_address_parse(const char *value, struct sockaddr_un *address, socklen_t *length,
				char *error, size_t error_size);

/* WATCHDOG_USEC and WATCHDOG_PID (either NULL when unset): how often
 * corral pings, half the timeout as sd_watchdog_enabled(3) advises, into
 * `*interval_ms`; 0 when there is no watchdog, or it is another
 * process's (WATCHDOG_PID is not `self`). Returns 0, or -1 with `error`
 * for a value that is not a number. */
int parent_watchdog_interval(const char *usec, const char *pid, pid_t self, uint64_t *interval_ms,
			     char *error, size_t error_size);

struct parent_message {
	/* Not 0: RELOADING=1 and MONOTONIC_USEC= (CLOCK_MONOTONIC at the
	 * reload's start: systemd's Type=notify-reload checks it). */
	uint64_t reloading_monotonic_usec;
	bool ready;
	bool stopping;
	/* Not 0: EXTEND_TIMEOUT_USEC=, the time the parent should give
	 * corral from now on before its own timeout. */
	uint64_t extend_timeout_usec;
	bool watchdog;
	/* STATUS=, NULL for none; a line break in it becomes a space (it
	 * would start another assignment). */
	const char *status;
};

/* The datagram's text, cut to `size` (a STATUS at the end is cut, never
 * the assignments before it). Returns its length. */
size_t parent_message_format(const struct parent_message *message, char *buffer, size_t size);
