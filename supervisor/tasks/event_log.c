#include "supervisor/tasks/event_log.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/json_text.h"
#include "base/log.h"
#include "supervisor/lifecycle/task_event.h"

int event_log_open(struct event_log *log, const char *path)
{
	log->file = NULL;
	line_ring_init(&log->recent, EVENT_LOG_RECENT_BYTES);
	if (!path)
		return 0;
	log->file = fopen(path, "we");
	if (!log->file)
		return -errno;
	/* Line-buffered: a reader following the file sees whole events. */
	setvbuf(log->file, NULL, _IOLBF, 0);
	return 0;
}

int event_log_adopt(struct event_log *log, int fd)
{
	log->file = fd >= 0 ? fdopen(fd, "ae") : NULL;
	if (fd >= 0 && !log->file)
		return -errno;
	if (log->file)
		setvbuf(log->file, NULL, _IOLBF, 0);
	return 0;
}

void event_log_close(struct event_log *log)
{
	if (log->file)
		fclose(log->file);
	log->file = NULL;
	line_ring_free(&log->recent);
}

static void write_json(struct event_log *log, json_t *object)
{
	uint64_t now_ns = wall_clock_ns();
	char *line = json_dumps_timed(now_ns / 1000000u, object);
	json_decref(object);
	if (!line)
		return;
	size_t length = strlen(line);
	if (log->file)
		fprintf(log->file, "%s\n", line);
	line_ring_append(&log->recent, now_ns / 1000000u, 0, line, length);
	if (log->on_event)
		log->on_event(log->on_event_context, line, length);
	free(line);
}

void event_log_task(struct event_log *log, const char *full_name, const char *event,
		    const char *message, pid_t pid)
{
	/* A start that failed is an error even when progress is quiet: a
	 * command that cannot be executed must say why; so is a path that
	 * cannot be watched. */
	void (*say)(const char *, ...) =
	    strcmp(event, "start_failed") == 0 || strcmp(event, "watch_failed") == 0 ? log_message
										     : log_info;
	if (pid > 0)
		say("%s: %s (pid %d)", full_name, message, (int)pid);
	else
		say("%s: %s", full_name, message);
	json_t *object = json_object();
	const char *slash = strchr(full_name, '/');
	json_object_set_new(object, "group",
			    json_stringn(full_name, slash ? (size_t)(slash - full_name) : 0));
	json_object_set_new(object, "task", json_string(slash ? slash + 1 : full_name));
	json_object_set_new(object, "event", json_string(event));
	json_object_set_new(object, "message", json_string_lossy(message, strlen(message)));
	if (pid > 0)
		json_object_set_new(object, "pid", json_integer(pid));
	write_json(log, object);
}

void event_log_group(struct event_log *log, const char *group, const char *event,
		     const char *message)
{
	log_info("%s: %s", group, message);
	json_t *object = json_object();
	json_object_set_new(object, "group", json_string(group));
	json_object_set_new(object, "event", json_string(event));
	json_object_set_new(object, "message", json_string_lossy(message, strlen(message)));
	write_json(log, object);
}

const char *corral_event_type_name(enum corral_event_type type)
{
	static const char *const names[CORRAL_EVENT_TYPE_COUNT] = {
	    [CORRAL_EVENT_RELOAD_STARTED] = "reload_started",
	    [CORRAL_EVENT_RELOAD_FINISHED] = "reload_finished",
	    [CORRAL_EVENT_RELOAD_REFUSED] = "reload_refused",
	    [CORRAL_EVENT_UPGRADE_STARTED] = "upgrade_started",
	    [CORRAL_EVENT_UPGRADED] = "upgraded",
	    [CORRAL_EVENT_UPGRADE_FAILED] = "upgrade_failed",
	    [CORRAL_EVENT_RESTORED] = "restored",
	};
	return (unsigned)type < CORRAL_EVENT_TYPE_COUNT ? names[type] : "unknown";
}

void event_log_corral(struct event_log *log, const char *event, const char *message)
{
	/* A refusal is an error the user must see, even when quiet. */
	if (strcmp(event, "reload_refused") == 0)
		log_message("%s", message);
	else
		log_info("%s", message);
	json_t *object = json_object();
	json_object_set_new(object, "event", json_string(event));
	json_object_set_new(object, "message", json_string_lossy(message, strlen(message)));
	write_json(log, object);
}
