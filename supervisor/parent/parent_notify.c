#include "supervisor/parent/parent_notify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "supervisor/parent/parent_messages.h"
#include "supervisor/parent/parent_summary.h"
#include "supervisor/tasks/task.h"
#include "supervisor/tasks/task_ready.h"

/* Socket activation's: they name corral's pid and fds that no task gets
 * (a spawn closes every fd above stderr it does not hand on). */
static const char *const listen_variables[] = {"LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"};
/* sd_notify's: corral's own, or (one-command mode) its command's. */
static const char *const notify_variables[] = {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"};

static void drop_variables(const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		unsetenv(names[i]);
}

static void send_message(struct parent_notify *parent, const struct parent_message *message)
{
	char text[PARENT_STATUS_SIZE + 128];
	size_t length = parent_message_format(message, text, sizeof(text));
	if (parent->fd < 0)
		parent->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/* Never waits: a parent that does not read loses messages, not
	 * corral's loop. */
	if (parent->fd < 0 ||
	    sendto(parent->fd, text, length, MSG_NOSIGNAL | MSG_DONTWAIT,
		   (const struct sockaddr *)&parent->address, parent->address_length) < 0) {
		if (!parent->send_failed)
			log_message("notify socket %s (NOTIFY_SOCKET): %s; corral runs on without "
				    "telling its parent (said once)",
				    parent->socket_name, strerror(errno));
		parent->send_failed = true;
		return;
	}
	if (parent->send_failed)
		log_info("notify socket %s: reached again", parent->socket_name);
	parent->send_failed = false;
}

static void on_watchdog(struct loop_timer *timer)
{
	struct parent_notify *parent = timer->data;
	send_message(parent, &(struct parent_message){.watchdog = true});
	loop_timer_arm(parent->loop, timer, loop_now_ms() + parent->watchdog_interval_ms);
}

static void send_status(struct parent_notify *parent, uint64_t now_ms)
{
	send_message(parent, &(struct parent_message){.status = parent->status_latest});
	memcpy(parent->status_sent, parent->status_latest, sizeof(parent->status_sent));
	parent->status_sent_ms = now_ms;
}

static void on_status_interval(struct loop_timer *timer)
{
	struct parent_notify *parent = timer->data;
	if (strcmp(parent->status_latest, parent->status_sent) != 0)
		send_status(parent, loop_now_ms());
}

/* The latest line goes out now, or when a second has passed since the
 * last one. */
static void update_status(struct parent_notify *parent)
{
	if (strcmp(parent->status_latest, parent->status_sent) == 0)
		return;
	uint64_t now = loop_now_ms();
	uint64_t next = parent->status_sent_ms + PARENT_STATUS_INTERVAL_MS;
	if (!parent->status_sent_ms || now >= next)
		send_status(parent, now);
	else if (!loop_timer_armed(&parent->status_timer))
		loop_timer_arm(parent->loop, &parent->status_timer, next);
}

void parent_notify_take_environment(struct parent_notify *parent, bool one_command)
{
	memset(parent, 0, sizeof(*parent));
	parent->fd = -1;
	loop_timer_init(&parent->watchdog_timer, on_watchdog, parent);
	loop_timer_init(&parent->status_timer, on_status_interval, parent);
	const char *socket_value = getenv("NOTIFY_SOCKET");
	char error[256];
	if (one_command) {
		/* The command is the service: NOTIFY_SOCKET and WATCHDOG_USEC
		 * are its own. What names corral's pid would mislead it. */
		const char *pid = getenv("WATCHDOG_PID");
		if (pid && strtol(pid, NULL, 10) == (long)getpid())
			unsetenv("WATCHDOG_PID");
		drop_variables(listen_variables, 3);
		return;
	}
	if (socket_value && *socket_value) {
		snprintf(parent->socket_name, sizeof(parent->socket_name), "%s", socket_value);
		if (parent_notify_address_parse(socket_value, &parent->address,
						&parent->address_length, error, sizeof(error)) < 0)
			log_message("NOTIFY_SOCKET: %s; corral does not tell its parent anything",
				    error);
		else
			parent->enabled = true;
	}
	if (parent->enabled &&
	    parent_watchdog_interval(getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"), getpid(),
				     &parent->watchdog_interval_ms, error, sizeof(error)) < 0)
		log_message("%s: corral sends no WATCHDOG=1", error);
	drop_variables(notify_variables, 3);
	drop_variables(listen_variables, 3);
}

void parent_notify_start(struct parent_notify *parent, struct loop *loop)
{
	parent->loop = loop;
	if (!parent->enabled)
		return;
	if (parent->watchdog_interval_ms) {
		log_info("watchdog: WATCHDOG=1 to %s every %llums", parent->socket_name,
			 (unsigned long long)parent->watchdog_interval_ms);
		on_watchdog(&parent->watchdog_timer);
	}
}

static bool is_listed(const struct config *config, const char *group_name)
{
	for (size_t i = 0; i < config->notify_ready_group_count; i++)
		if (strcmp(config->notify_ready_groups[i], group_name) == 0)
			return true;
	return false;
}

/* Does READY=1 wait for this group's tasks? */
static bool is_awaited(const struct config *config, const struct group *group)
{
	if (group->removed)
		return false;
	switch (config->notify_ready) {
	case NOTIFY_READY_ALL:
		return true;
	case NOTIFY_READY_GROUPS:
		return is_listed(config, group->config->name);
	case NOTIFY_READY_STARTED:
		break;
	}
	return false;
}

/* The summary into status_latest; true when READY=1 may go out. */
static bool summarize(struct parent_notify *parent, const struct config *config,
		      struct group *const *groups, size_t group_count)
{
	struct parent_summary summary = {0};
	for (size_t g = 0; g < group_count; g++) {
		const struct group *group = groups[g];
		bool awaited = is_awaited(config, group);
		for (size_t t = 0; t < group->task_count; t++) {
			struct ready_rule_facts facts =
			    task_ready_facts(group->tasks[t], loop_now_ms());
			parent_summary_add(&summary, &facts, group->tasks[t]->config->full_name,
					   awaited);
		}
	}
	parent_summary_format(&summary, parent->stopping_sent ? "shutting down; " : NULL,
			      parent->status_latest, sizeof(parent->status_latest));
	return parent_summary_ready(&summary);
}

static void send_ready(struct parent_notify *parent)
{
	send_message(parent,
		     &(struct parent_message){.ready = true, .status = parent->status_latest});
	memcpy(parent->status_sent, parent->status_latest, sizeof(parent->status_sent));
	parent->status_sent_ms = loop_now_ms();
	if (!parent->ready_sent)
		log_info("told the parent READY=1 (%s)", parent->status_latest);
	parent->ready_sent = true;
}

void parent_notify_tasks_changed(struct parent_notify *parent, const struct config *config,
				 struct group *const *groups, size_t group_count)
{
	if (!parent->enabled)
		return;
	bool ready = summarize(parent, config, groups, group_count);
	if (!parent->ready_sent && !parent->stopping_sent && ready)
		send_ready(parent);
	else
		update_status(parent);
}

void parent_notify_reloading(struct parent_notify *parent)
{
	if (!parent->enabled || !parent->ready_sent)
		return;
	send_message(parent, &(struct parent_message){.reloading_monotonic_usec = monotonic_us(),
						      .status = "reloading the config"});
	snprintf(parent->status_sent, sizeof(parent->status_sent), "reloading the config");
}

void parent_notify_reloaded(struct parent_notify *parent, const json_t *reply,
			    const struct config *config, struct group *const *groups,
			    size_t group_count)
{
	if (!parent->enabled || !parent->ready_sent)
		return;
	summarize(parent, config, groups, group_count);
	const char *failure = json_string_value(json_object_get(reply, "error"));
	const char *first = json_string_value(json_array_get(json_object_get(reply, "errors"), 0));
	if (failure)
		snprintf(parent->status_latest, sizeof(parent->status_latest), "%s%s%s%s", failure,
			 first ? " (" : "", first ? first : "", first ? ")" : "");
	send_ready(parent);
}

void parent_notify_stopping(struct parent_notify *parent, uint64_t shutdown_timeout_ms)
{
	if (!parent->enabled || parent->stopping_sent)
		return;
	parent->stopping_sent = true;
	send_message(
	    parent, &(struct parent_message){
			.stopping = true,
			.extend_timeout_usec = (shutdown_timeout_ms + PARENT_STOP_MARGIN_MS) * 1000,
			.status = "shutting down"});
	snprintf(parent->status_sent, sizeof(parent->status_sent), "shutting down");
	parent->status_sent_ms = loop_now_ms();
}

void parent_notify_close(struct parent_notify *parent, int exit_code)
{
	if (parent->loop) {
		loop_timer_cancel(parent->loop, &parent->watchdog_timer);
		loop_timer_cancel(parent->loop, &parent->status_timer);
	}
	if (parent->enabled) {
		char status[64];
		snprintf(status, sizeof(status), "exiting with code %d", exit_code);
		send_message(parent, &(struct parent_message){.stopping = !parent->stopping_sent,
							      .status = status});
	}
	if (parent->fd >= 0)
		close(parent->fd);
	parent->fd = -1;
	parent->enabled = false;
}
