/* sd_notify to corral's own parent: systemd's Type=notify (and
 * notify-reload), podman's --sdnotify=container, quadlet's Notify=true.
 * When corral is started with NOTIFY_SOCKET it sends, from its loop:
 * READY=1 once the tasks config `notify.ready` waits for are ready;
 * STATUS= with a one-line summary when it changes (at most once a
 * second); RELOADING=1 and MONOTONIC_USEC= at a reload's start, READY=1
 * once it is applied (or refused); STOPPING=1 and EXTEND_TIMEOUT_USEC= at
 * shutdown; WATCHDOG=1 every half WATCHDOG_USEC, so that a stalled loop
 * stops the pings. Datagrams are sent without blocking; a socket that is
 * missing or full is said once and never stops corral.
 *
 * The variables the parent gave corral (NOTIFY_SOCKET, WATCHDOG_USEC,
 * WATCHDOG_PID, LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES) are taken out of
 * its environment before any task, hook or exec session is made from it:
 * they are corral's, not its tasks' (a task with `readiness.notify:
 * systemd` gets a NOTIFY_SOCKET of corral's own). One-command mode
 * (`corral -- COMMAND`) passes NOTIFY_SOCKET and WATCHDOG_USEC through to
 * the command, which is the service there, as under tini, and sends
 * nothing itself; WATCHDOG_PID and LISTEN_*, which name corral's pid, are
 * dropped. docs/systemd.md says how to use it. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "base/loop.h"
#include "config/model/config.h"
#include "supervisor/tasks/group.h"

/* STATUS= goes out at most this often; the latest line when it ends. */
#define PARENT_STATUS_INTERVAL_MS 1000
/* EXTEND_TIMEOUT_USEC at shutdown: shutdown_timeout, then this for the
 * kill that follows it and corral's own exit. */
#define PARENT_STOP_MARGIN_MS 10000
#define PARENT_STATUS_SIZE    512

struct parent_notify {
	bool enabled; /* NOTIFY_SOCKET given, in a config's run */
	char socket_name[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* as given */
	struct sockaddr_un address;
	socklen_t address_length;
	int fd;           /* -1 until the first message */
	bool send_failed; /* said once, until a message goes through again */
	struct loop *loop;

	uint64_t watchdog_interval_ms; /* 0: no watchdog is corral's */
	struct loop_timer watchdog_timer;

	bool ready_sent; /* the start's READY=1 */
	bool stopping_sent;
	char status_sent[PARENT_STATUS_SIZE];
	char status_latest[PARENT_STATUS_SIZE];
	uint64_t status_sent_ms;
	struct loop_timer status_timer;
};

/* Before any task is made: reads the parent's variables and takes them
 * out of the environment (one-command mode: as the header says). Only
 * logs: nothing here stops corral. */
void parent_notify_take_environment(struct parent_notify *parent, bool one_command);

/* Once the loop exists: the watchdog's pings begin. */
void parent_notify_start(struct parent_notify *parent, struct loop *loop);

/* After a settle that changed a task: READY=1 when it is time, else the
 * summary as STATUS= (rate-limited). */
void parent_notify_tasks_changed(struct parent_notify *parent, const struct config *config,
				 struct group *const *groups, size_t group_count);

/* Around a reload (not a dry run): RELOADING=1 before it, READY=1 after
 * it with the summary, or with why it was refused as STATUS= (`reply`,
 * reload_run's: its "error" and first of "errors"). Before the start's
 * READY=1 went out neither is sent: readiness still waits for the tasks. */
void parent_notify_reloading(struct parent_notify *parent);
void parent_notify_reloaded(struct parent_notify *parent, const json_t *reply,
			    const struct config *config, struct group *const *groups,
			    size_t group_count);

/* A shutdown began: STOPPING=1, and EXTEND_TIMEOUT_USEC= for its
 * shutdown_timeout and PARENT_STOP_MARGIN_MS. */
void parent_notify_stopping(struct parent_notify *parent, uint64_t shutdown_timeout_ms);

/* corral is done: STOPPING=1 when no shutdown said it (every task ended),
 * and the exit code as STATUS=. Closes the socket. */
void parent_notify_close(struct parent_notify *parent, int exit_code);
