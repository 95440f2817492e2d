#include "supervisor/event_log.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "supervisor/log.h"

int event_log_open(struct event_log *log, const char *path)
{
	log->file = NULL;
	if (!path)
		return 0;
	log->file = fopen(path, "we");
	if (!log->file)
		return -errno;
	/* Line-buffered: a reader following the file sees whole events. */
	setvbuf(log->file, NULL, _IOLBF, 0);
	return 0;
}

void event_log_close(struct event_log *log)
{
	if (log->file)
		fclose(log->file);
	log->file = NULL;
}

static void write_json(struct event_log *log, json_t *object)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	json_object_set_new(object, "time",
			    json_real((double)now.tv_sec + (double)now.tv_nsec / 1e9));
	char *line = json_dumps(object, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (line) {
		fprintf(log->file, "%s\n", line);
		free(line);
	}
	json_decref(object);
}

void event_log_task(struct event_log *log, const char *full_name, const char *event,
		    const char *message, pid_t pid)
{
	if (pid > 0)
		log_message("%s: %s (pid %d)", full_name, message, (int)pid);
	else
		log_message("%s: %s", full_name, message);
	if (!log->file)
		return;
	json_t *object = json_object();
	const char *slash = strchr(full_name, '/');
	json_object_set_new(object, "group",
			    json_stringn(full_name, slash ? (size_t)(slash - full_name) : 0));
	json_object_set_new(object, "task", json_string(slash ? slash + 1 : full_name));
	json_object_set_new(object, "event", json_string(event));
	json_object_set_new(object, "message", json_string(message));
	if (pid > 0)
		json_object_set_new(object, "pid", json_integer(pid));
	write_json(log, object);
}

void event_log_group(struct event_log *log, const char *group, const char *event,
		     const char *message)
{
	log_message("%s: %s", group, message);
	if (!log->file)
		return;
	json_t *object = json_object();
	json_object_set_new(object, "group", json_string(group));
	json_object_set_new(object, "event", json_string(event));
	json_object_set_new(object, "message", json_string(message));
	write_json(log, object);
}
