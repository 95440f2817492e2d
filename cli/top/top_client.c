/* corral top's requests. */
#include "cli/top/top_client.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/units.h"
#include "cli/json_view.h"

/* Lines a stream may hand over in one go before the screen is drawn
 * again: a flood of output does not freeze the view. */
#define LOG_LINES_PER_READ 512

/* The last line the client code wrote on stderr (top's pipe), without its
 * "corral: ", into the status line as an error. False when none; true
 * before the screen is up, when stderr is the terminal and they are read
 * there. */
static bool take_messages(struct top_client *client, struct top_state *state)
{
	char buffer[4096];
	ssize_t got;
	bool any = false;
	if (client->messages_fd < 0)
		return true; /* not captured: they went to the terminal, said */
	while ((got = read(client->messages_fd, buffer, sizeof(buffer) - 1)) > 0) {
		buffer[got] = '\0';
		while (got > 0 && buffer[got - 1] == '\n')
			buffer[--got] = '\0';
		char *last = strrchr(buffer, '\n');
		last = last ? last + 1 : buffer;
		if (strncmp(last, "corral: ", 8) == 0)
			last += 8;
		if (*last) {
			top_state_say(state, true, "%s", last);
			any = true;
		}
	}
	return any;
}

static void close_status(struct top_client *client)
{
	control_connection_close(&client->status);
	client->awaiting_status = false;
}

static bool status_open(const struct top_client *client)
{
	return client->status.fd >= 0;
}

static enum top_poll_result failed(struct top_client *client)
{
	client->failing = true;
	return TOP_POLL_FAILED;
}

enum top_poll_result top_client_request_status(struct top_client *client, struct top_state *state)
{
	struct control_request request = {.command = CONTROL_STATUS};
	int sent = -1;
	if (client->awaiting_status)
		return TOP_POLL_OK; /* the reply before is still to come */
	if (status_open(client))
		sent = control_connection_send(&client->status, &request);
	if (sent < 0) {
		close_status(client);
		if (control_connection_open(&client->status, client->socket_path, &request) < 0) {
			if (!take_messages(client, state))
				top_state_say(state, true, "cannot connect to %s",
					      client->socket_path);
			return failed(client);
		}
	}
	client->status.raw_when_ok = true;
	client->awaiting_status = true;
	return TOP_POLL_OK;
}

int top_client_status_fd(const struct top_client *client)
{
	return client->awaiting_status ? client->status.fd : -1;
}

enum top_poll_result top_client_read_status(struct top_client *client, struct top_state *state)
{
	json_t *refusal = NULL;
	const char *raw = NULL;
	client->status.interrupt_fd = client->interrupt_fd;
	enum control_read_result result = control_connection_read(&client->status, &refusal, &raw);
	/* What came of the reply stays in the connection's buffer: the
	 * next read goes on from there. */
	if (result == CONTROL_READ_INTERRUPTED)
		return TOP_POLL_INTERRUPTED;
	client->awaiting_status = false;
	int64_t now_ms = (int64_t)monotonic_ms();
	if (result != CONTROL_READ_LINE || !raw) {
		if (refusal) {
			const char *error = json_string_value(json_object_get(refusal, "error"));
			top_state_say(state, true, "%s", error ? error : "status refused");
		} else if (!take_messages(client, state)) {
			top_state_say(state, true,
				      "corral closed the connection (%s); trying again",
				      client->socket_path);
		}
		json_decref(refusal);
		close_status(client);
		return failed(client);
	}
	struct json_view view;
	char error[128];
	/* Parsed in place: the line is the connection's buffer, which the
	 * next read reuses. */
	if (json_view_parse(&view, (char *)raw, strlen(raw), error, sizeof(error)) < 0) {
		top_state_say(state, true, "corral sent a status reply that is not JSON: %s",
			      error);
		close_status(client);
		return failed(client);
	}
	struct top_model model;
	int built =
	    top_model_build(&model, view.values, now_ms, state->have_model ? &state->model : NULL);
	json_view_free(&view);
	if (built < 0) {
		top_state_say(state, true, "the status reply has no \"groups\" list");
		return failed(client);
	}
	top_state_set_model(state, &model);
	if (client->failing)
		top_state_say(state, false, "connected to %s again", client->socket_path);
	client->failing = false;
	return TOP_POLL_OK;
}

enum top_poll_result top_client_poll_status(struct top_client *client, struct top_state *state)
{
	enum top_poll_result result = top_client_request_status(client, state);
	return result == TOP_POLL_OK ? top_client_read_status(client, state) : result;
}

/* One request on a connection of its own; its reply's message, or its
 * error, goes into the status line. */
static void call(struct top_client *client, struct top_state *state,
		 const struct control_request *request)
{
	struct control_connection connection;
	if (control_connection_open(&connection, client->socket_path, request) < 0) {
		take_messages(client, state);
		return;
	}
	connection.interrupt_fd = client->interrupt_fd;
	json_t *reply = NULL;
	enum control_read_result result = control_connection_read(&connection, &reply, NULL);
	if (result == CONTROL_READ_INTERRUPTED) {
		/* A key or a signal came first: corral has the request, and
		 * the next status shows what it did. */
		top_state_say(state, false, "%s: sent, no answer yet", request->target);
	} else if (result != CONTROL_READ_LINE) {
		if (!take_messages(client, state))
			top_state_say(state, true,
				      "%s: corral closed the connection without replying",
				      request->target);
	} else if (json_is_true(json_object_get(reply, "ok"))) {
		const char *message = json_string_value(json_object_get(reply, "message"));
		top_state_say(state, false, "%s", message ? message : "done");
	} else {
		const char *error = json_string_value(json_object_get(reply, "error"));
		top_state_say(state, true, "%s", error ? error : "refused, without saying why");
	}
	json_decref(reply);
	control_connection_close(&connection);
}

static void close_logs(struct top_client *client)
{
	control_connection_close(&client->logs);
}

/* "web/app | text" for a line of another task than the one followed (a
 * group's tasks, a task's instances). */
static void add_log_line(struct top_state *state, const json_t *line)
{
	const json_t *text = json_object_get(line, "text");
	const char *task = json_string_value(json_object_get(line, "task"));
	if (!json_is_string(text))
		return;
	if (task && strcmp(task, state->pane.target) != 0) {
		char prefixed[512];
		int length = snprintf(prefixed, sizeof(prefixed), "%s | %.*s", task,
				      (int)json_string_length(text), json_string_value(text));
		top_pane_add(&state->pane, prefixed,
			     length < 0                           ? 0
			     : (size_t)length >= sizeof(prefixed) ? sizeof(prefixed) - 1
								  : (size_t)length);
		return;
	}
	top_pane_add(&state->pane, json_string_value(text), json_string_length(text));
}

static void follow(struct top_client *client, struct top_state *state, const char *target)
{
	struct control_request request = {
	    .command = CONTROL_LOGS, .follow = true, .tail = TOP_PANE_LINES};
	snprintf(request.target, sizeof(request.target), "%s", target);
	close_logs(client);
	top_pane_open(&state->pane, target);
	json_t *reply = NULL;
	if (control_connection_open(&client->logs, client->socket_path, &request) < 0) {
		take_messages(client, state);
		top_pane_set_ended(&state->pane, "cannot connect");
		return;
	}
	client->logs.interrupt_fd = client->interrupt_fd;
	if (control_connection_read(&client->logs, &reply, NULL) != CONTROL_READ_LINE ||
	    !json_is_true(json_object_get(reply, "ok"))) {
		const char *error = json_string_value(json_object_get(reply, "error"));
		if (error)
			top_state_say(state, true, "%s", error);
		else
			take_messages(client, state);
		top_pane_set_ended(&state->pane, "refused");
		json_decref(reply);
		close_logs(client);
		return;
	}
	size_t i;
	const json_t *line;
	json_array_foreach(json_object_get(reply, "lines"), i, line)
	{
		add_log_line(state, line);
	}
	json_decref(reply);
	top_state_say(state, false, "following the output of %s", target);
}

int top_client_logs_fd(const struct top_client *client)
{
	return client->logs.fd;
}

static bool line_buffered(const struct control_connection *connection)
{
	return connection->buffer && connection->start < connection->end &&
	       memchr(connection->buffer + connection->start, '\n',
		      connection->end - connection->start);
}

void top_client_read_logs(struct top_client *client, struct top_state *state)
{
	for (int count = 0; count < LOG_LINES_PER_READ; count++) {
		json_t *item = NULL;
		enum control_read_result result =
		    control_connection_read(&client->logs, &item, NULL);
		if (result == CONTROL_READ_INTERRUPTED)
			return;
		if (result != CONTROL_READ_LINE) {
			take_messages(client, state);
			top_pane_set_ended(&state->pane, "corral closed the stream");
			close_logs(client);
			return;
		}
		if (json_is_false(json_object_get(item, "ok"))) {
			const char *error = json_string_value(json_object_get(item, "error"));
			top_pane_set_ended(&state->pane, error ? error : "corral ended the stream");
			json_decref(item);
			close_logs(client);
			return;
		}
		add_log_line(state, item);
		json_decref(item);
		if (!line_buffered(&client->logs))
			return;
	}
}

/* stop, start and signal act on a task: on a group line they are said to
 * need one; restart there restarts the whole group. */
static bool task_selected(struct top_state *state, const char *what)
{
	const struct top_line *line = top_state_selected(state);
	if (line && !line->is_group)
		return true;
	top_state_say(state, true, "%s acts on a task: select one (r on a group restarts it all)",
		      what);
	return false;
}

void top_client_act(struct top_client *client, struct top_state *state, enum top_action action)
{
	const struct top_line *line = top_state_selected(state);
	const char *target = top_state_selected_target(state);
	struct control_request request = {0};
	if (action == TOP_ACTION_UNFOLLOW) {
		close_logs(client);
		top_pane_close(&state->pane);
		top_state_say(state, false, "%s", "");
		return;
	}
	if (!target) {
		top_state_say(state, true, "no task selected");
		return;
	}
	snprintf(request.target, sizeof(request.target), "%s", target);
	switch (action) {
	case TOP_ACTION_FOLLOW:
		follow(client, state, target);
		return;
	case TOP_ACTION_RESTART:
		request.command = CONTROL_RESTART;
		request.restart_mode = line->is_group ? CONTROL_RESTART_ALL : CONTROL_RESTART_TASK;
		break;
	case TOP_ACTION_STOP:
		if (!task_selected(state, "stop"))
			return;
		request.command = CONTROL_STOP;
		break;
	case TOP_ACTION_START:
		if (!task_selected(state, "start"))
			return;
		request.command = CONTROL_START;
		break;
	case TOP_ACTION_SIGNAL:
		if (!task_selected(state, "signal"))
			return;
		request.command = CONTROL_SIGNAL;
		request.signal_number = parse_signal_name(state->input);
		if (request.signal_number < 0) {
			top_state_say(state, true, "no signal is called \"%s\"", state->input);
			return;
		}
		break;
	default:
		return;
	}
	call(client, state, &request);
}

void top_client_close(struct top_client *client)
{
	close_status(client);
	close_logs(client);
}
