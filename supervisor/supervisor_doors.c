/* The supervisor's doors (supervisor_internal.h): the control socket and
 * the HTTP endpoint, where they listen, and what the requests that come
 * through them may call on (shutdown, reload, scale, upgrade, the
 * followers of logs and events, /metrics). The loop, signals and the run
 * itself are supervisor.c's. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "supervisor/control/control_commands.h"
#include "supervisor/control/control_server.h"
#include "supervisor/control/control_socket_places.h"
#include "supervisor/reload.h"
#include "supervisor/scale.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/upgrade.h"
#include "supervisor/upgrade_state.h"

static void shutdown_from_control(void *pointer, const char *reason)
{
	supervisor_begin_shutdown(pointer, reason, "a shutdown request on the control socket");
}

static bool is_shutting_down(void *pointer)
{
	struct supervisor *supervisor = pointer;
	return supervisor->shutting_down;
}

/* ---- reload: SIGHUP and the control socket ---- */

static json_t *reload_from_control(void *pointer, const struct reload_options *options)
{
	struct supervisor *supervisor = pointer;
	if (supervisor->shutting_down) {
		json_t *reply = json_object();
		json_object_set_new(reply, "ok", json_false());
		json_object_set_new(reply, "error",
				    json_string("corral is shutting down: nothing to reload"));
		return reply;
	}
	if (options->dry_run)
		return reload_run(supervisor, options);
	parent_notify_reloading(&supervisor->parent);
	json_t *reply = reload_run(supervisor, options);
	parent_notify_reloaded(&supervisor->parent, reply, supervisor->config, supervisor->groups,
			       supervisor->group_count);
	return reply;
}

static json_t *scale_from_control(void *pointer, const struct control_request *request)
{
	return scale_run(pointer, request);
}

/* A rolling restart's lines go to the client that asked for it
 * (CONTROL_FOLLOW_ROLL), whose stream ends with the last. */
void supervisor_tell_roll_followers(struct services *services, const void *roll, const char *line,
				    size_t length, bool last)
{
	struct supervisor *supervisor = SUPERVISOR_FROM_SERVICES(services);
	if (!supervisor->control)
		return;
	control_server_publish(supervisor->control, CONTROL_FOLLOW_ROLL, roll, line, length);
	if (last)
		control_server_forget(supervisor->control, CONTROL_FOLLOW_ROLL, roll);
}

/* SIGHUP: as `corral reload` of the same file; the event log and stderr
 * tell how it went (reload.c logs a refused config's errors). */
void supervisor_reload_on_hangup(struct supervisor *supervisor)
{
	struct reload_options options = {0};
	json_decref(reload_from_control(supervisor, &options));
}

/* A `watch:` entry's action `reload`: as SIGHUP. */
void supervisor_reload_from_watch(void *pointer)
{
	supervisor_reload_on_hangup(pointer);
}

static bool is_running_config(void *pointer, const char *path)
{
	struct supervisor *supervisor = pointer;
	struct stat named, running;
	const char *running_path = supervisor->config->path;
	return running_path && *running_path && stat(path, &named) == 0 &&
	       stat(running_path, &running) == 0 && S_ISREG(named.st_mode) &&
	       named.st_dev == running.st_dev && named.st_ino == running.st_ino;
}

static int upgrade_from_control(void *pointer, struct control_client *client, const char *binary,
				char *error, size_t error_size)
{
	return upgrade_run(pointer, client, binary, error, error_size);
}

static bool group_may_exec(void *pointer)
{
	struct supervisor *supervisor = pointer;
	return supervisor->config->control_group_exec;
}

/* ---- GET /metrics ---- */

/* A scrape found usage readings missing or stale: the pass that status
 * replies start reads them (one pass for both). */
static void refresh_usage_after_scrape(void *pointer)
{
	struct supervisor *supervisor = pointer;
	control_commands_refresh_usage(&supervisor->control_context);
}

char *supervisor_metrics_text(struct supervisor *supervisor, enum metrics_format format,
			      size_t *length)
{
	struct metrics_source source = {
	    .groups = supervisor->groups,
	    .group_count = supervisor->group_count,
	    .counters = &supervisor->counters,
	    .format = format,
	    .started_wall_ms = supervisor->started_wall_ms,
	    .output_dropped_lines = supervisor->sink.dropped_lines,
	    .output_buffered_bytes = supervisor->sink.end - supervisor->sink.start,
	    .starts_put_off = supervisor->shortage.put_off_total,
	    .longest_loop_turn_us = loop_longest_turn_us(supervisor->loop),
	    .usage_stale = refresh_usage_after_scrape,
	    .context = supervisor,
	};
	return metrics_text(&source, loop_now_ms(), length);
}

static char *metrics_for_http(void *pointer, enum metrics_format format, size_t *length)
{
	return supervisor_metrics_text(pointer, format, length);
}

/* ---- the control socket ---- */

void supervisor_publish_event(void *pointer, const char *json, size_t length)
{
	struct supervisor *supervisor = pointer;
	if (!supervisor->control)
		return;
	char line[length + 1];
	memcpy(line, json, length);
	line[length] = '\n';
	control_server_publish(supervisor->control, CONTROL_FOLLOW_EVENTS, NULL, line, length + 1);
}

/* The followers of `corral logs -f`, a sink of each task (the sink is
 * the task): the batch's JSON is made once, and goes in one send to each
 * client that follows the task, its group, or every task. */
static void publish_output_lines(void *sink, struct output_batch *batch)
{
	struct task *task = sink;
	struct supervisor *supervisor = SUPERVISOR_FROM_SERVICES(task->services);
	if (!task->log_followers || !supervisor->control)
		return;
	struct output_json_lines *json = &supervisor->follower_lines;
	output_json_lines_build(json, batch);
	if (json->length)
		control_server_publish_logs(supervisor->control, task, task->group, json->text,
					    json->length);
}

const struct output_sink_ops supervisor_log_followers_sink = {.lines = publish_output_lines};

/* --socket, then CORRAL_SOCKET, then the config; NULL: the default places. */
static const char *control_socket_path(const struct config *config,
				       const struct run_options *options)
{
	const char *given = control_socket_given(options->socket_path);
	return given ? given : config->socket_path;
}

/* The first default place corral may write to; each one it may not is
 * said once, with why, in the one line that says where it went. */
static int open_control_socket_in_default_place(struct supervisor *supervisor,
						const struct control_server_settings *settings,
						const struct control_server_ops *ops)
{
	struct control_socket_places places;
	char error[512], skipped[2048] = "";
	size_t skipped_length = 0;

	control_socket_places(&places);
	for (size_t i = 0; i < places.count; i++) {
		int result =
		    control_server_open(&supervisor->control, supervisor->loop, places.path[i],
					true, settings, ops, error, sizeof(error));
		if (result < 0) {
			log_message("control socket: %s", error);
			return result;
		}
		if (result == 0) {
			if (i > 0)
				log_info("control socket: listening on %s (the CLI looks there "
					 "too); %s",
					 places.path[i], skipped);
			return 0;
		}
		int written = snprintf(skipped + skipped_length, sizeof(skipped) - skipped_length,
				       "%s%s", i > 0 ? "; " : "", error);
		if (written > 0)
			skipped_length = strnlen(skipped, sizeof(skipped) - 1);
	}
	log_info("control socket off: %s (set --socket, CORRAL_SOCKET or socket: to a writable "
		 "path)",
		 skipped);
	return 0;
}

/* Before anything is made (a cgroup, a task's directory) or said: another
 * corral listening where this one's socket would go ends this one at once,
 * rather than after "running N groups" and a cgroup tree of its own. For
 * the default places, the first one with a listener is refused, up to the
 * first place this corral could take (an existing directory it may write). */
bool supervisor_control_socket_taken(const struct config *config, const struct run_options *options)
{
	char error[512];
	int connect_errno;
	const char *path = control_socket_path(config, options);
	if (path) {
		if (!control_server_listener_at(path, &connect_errno, error, sizeof(error)))
			return false;
		log_message("control socket: %s", error);
		return true;
	}
	struct control_socket_places places;
	control_socket_places(&places);
	for (size_t i = 0; i < places.count; i++) {
		if (control_server_listener_at(places.path[i], &connect_errno, error,
					       sizeof(error))) {
			log_message("control socket: %s", error);
			return true;
		}
		char directory[sizeof(places.path[i])];
		snprintf(directory, sizeof(directory), "%s", places.path[i]);
		char *slash = strrchr(directory, '/');
		if (slash)
			*slash = '\0';
		if (access(directory, W_OK) == 0)
			return false;
	}
	return false;
}

static int open_control_socket(struct supervisor *supervisor, const struct run_options *options)
{
	supervisor->control_context = (struct control_context){
	    .groups = supervisor->groups,
	    .group_count = supervisor->group_count,
	    .events = &supervisor->events,
	    .shutdown = shutdown_from_control,
	    .shutting_down = is_shutting_down,
	    .reload = reload_from_control,
	    .scale = scale_from_control,
	    .exec_sessions = &supervisor->exec_sessions,
	    .group_may_exec = group_may_exec,
	    .is_running_config = is_running_config,
	    .upgrade = upgrade_from_control,
	    .supervisor = supervisor,
	    .loop = supervisor->loop,
	    .counters = &supervisor->counters,
	    .started_wall_ms = &supervisor->started_wall_ms,
	};
	struct control_server_ops ops = {
	    .handle = control_commands_handle,
	    .followers_changed = control_commands_followers_changed,
	    .exec_client_gone = control_commands_exec_client_gone,
	    .task_rights = control_commands_task_rights,
	    .context = &supervisor->control_context,
	};
	const struct config *config = supervisor->config;
	struct control_server_settings settings = {
	    .control_group = config->control_group,
	    .task_cgroup_root =
		supervisor->cgroups.enabled ? supervisor->cgroups.proc_root_path : NULL,
	    .idle_timeout_ms = config->control_idle_timeout_ms,
	    .connections_per_user = config->control_connections_per_user,
	};
	const char *path = control_socket_path(config, options);
	int result = 0;
	char error[512];
	if (supervisor->handover) {
		result = upgrade_state_read_control(supervisor, supervisor->handover, &settings,
						    &ops, error, sizeof(error));
		if (result < 0)
			upgrade_fall_back(error);
	} else if (!path)
		result = open_control_socket_in_default_place(supervisor, &settings, &ops);
	else {
		result = control_server_open(&supervisor->control, supervisor->loop, path, false,
					     &settings, &ops, error, sizeof(error));
		if (result < 0)
			log_message("control socket: %s", error);
	}
	/* Hidden in the mount namespace of every task that may not use it. */
	supervisor->services.control_socket_path = control_server_path(supervisor->control);
	return result;
}

/* ---- the HTTP endpoint ---- */

/* Config `http`: a place that cannot be had stops corral, as an explicit
 * control socket does: a probe on it would fail for ever. */
static int open_http_endpoint(struct supervisor *supervisor)
{
	const struct config *config = supervisor->config;
	supervisor->http_sources = (struct http_sources){
	    .groups = supervisor->groups,
	    .group_count = supervisor->group_count,
	    .metrics = metrics_for_http,
	    .context = supervisor,
	};
	if (config->http.kind == HTTP_LISTEN_OFF)
		return 0;
	char error[768];
	int handed =
	    supervisor->handover
		? handover_fd_get(supervisor->handover,
				  json_object_get(supervisor->handover->root, "http"), "fd")
		: -1;
	int result = handed >= 0
			 ? http_server_adopt(&supervisor->http, supervisor->loop, &config->http,
					     config->control_group, &supervisor->http_sources,
					     handed, error, sizeof(error))
			 : http_server_open(&supervisor->http, supervisor->loop, &config->http,
					    config->control_group, &supervisor->http_sources, error,
					    sizeof(error));
	if (result < 0)
		log_message("%s", error); /* "http.listen ADDRESS: ..." */
	else
		log_info("http: listening on %s (/livez, /readyz, /metrics)", config->http.listen);
	return result;
}

int supervisor_open_doors(struct supervisor *supervisor, const struct run_options *options)
{
	int failure = open_control_socket(supervisor, options);
	return failure < 0 ? failure : open_http_endpoint(supervisor);
}
