#include "supervisor/termination.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "supervisor/pid1/termination_message.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/task.h"

/* A failed task's output kept for its message: the kubelet's own fallback
 * to a container's log takes its last 80 lines. A line longer than the
 * whole message is kept by its start only. */
#define LAST_LINES 80

static void replace(char **field, const char *text)
{
	free(*field);
	*field = text ? xstrdup(text) : NULL;
}

void termination_open(struct supervisor *supervisor)
{
	struct termination_record *record = &supervisor->termination;
	const char *configured = supervisor->config->termination_log;
	char error[512];
	int failure = termination_log_open(&record->log, configured, error, sizeof(error));
	if (failure >= 0)
		return;
	/* A pod mounts the file writable; elsewhere a /dev/termination-log
	 * corral may not write is not meant for it. */
	if (!configured && (failure == -EACCES || failure == -EROFS || failure == -EPERM))
		log_info("%s", error);
	else
		log_message("%s", error);
}

struct lines_copy {
	char *text;
	size_t length;
	size_t capacity;
};

static void copy_line(void *context, uint64_t time_ms, unsigned tag, const char *text,
		      size_t length)
{
	(void)time_ms;
	(void)tag;
	struct lines_copy *copy = context;
	if (length > TERMINATION_MESSAGE_MAX)
		length = TERMINATION_MESSAGE_MAX;
	if (copy->length + length + 1 > copy->capacity) {
		copy->capacity = 2 * (copy->length + length + 1);
		copy->text = xreallocarray(copy->text, copy->capacity, 1);
	}
	memcpy(copy->text + copy->length, text, length);
	copy->length += length;
	copy->text[copy->length++] = '\n';
}

void termination_note_failure(struct supervisor *supervisor, struct task *task)
{
	struct termination_record *record = &supervisor->termination;
	const struct runner *runner = &task->runner;
	const struct group *group = task->group;
	replace(&record->task, task->config->full_name);
	replace(&record->group, group->config->name);
	replace(&record->failure, runner_failure(runner));
	record->has_exit = runner->has_exited;
	record->exit = runner->last_exit;
	if (task->failed_by_dependency) {
		/* It never ran: no exit rule of its own decided. */
		char decision[sizeof(((struct runner_texts *)0)->failure) + 32];
		snprintf(decision, sizeof(decision), "it never started: %s",
			 runner_failure(runner));
		record->rule = "after";
		replace(&record->decision, decision);
	} else {
		record->rule = runner->exit_rule;
		replace(&record->decision, runner_decision(runner));
	}
	enum group_failure_action action = group->config->on_failure.action;
	record->on_failure = group_failure_action_name(action);
	/* Only on_failure: restart decides something of its own before it
	 * lets a failure give corral's code: that it gave up. */
	replace(&record->group_decision,
		action == GROUP_ON_FAILURE_RESTART ? group->failure_decision : NULL);
	struct lines_copy copy = {0};
	line_ring_visit(&task->logs, LAST_LINES, copy_line, &copy);
	free(record->lines);
	record->lines = copy.text;
	record->lines_length = copy.length;
}

void termination_note_shutdown(struct supervisor *supervisor, const char *by)
{
	if (!supervisor->termination.shutdown)
		replace(&supervisor->termination.shutdown, by);
}

/* "g/a, g/b", at most 10 names and how many more. */
static char *tasks_with_processes(const struct supervisor *supervisor)
{
	char names[1024] = "";
	size_t length = 0, count = 0, more = 0;
	for (size_t g = 0; g < supervisor->group_count; g++) {
		const struct group *group = supervisor->groups[g];
		for (size_t t = 0; t < group->task_count; t++) {
			if (!task_has_process(group->tasks[t]))
				continue;
			if (count++ >= 10) {
				more++;
				continue;
			}
			int written =
			    snprintf(names + length, sizeof(names) - length, "%s%s",
				     length ? ", " : "", group->tasks[t]->config->full_name);
			if (written > 0)
				length = strnlen(names, sizeof(names) - 1);
		}
	}
	if (more)
		snprintf(names + length, sizeof(names) - length, " and %zu more", more);
	return xstrdup(names);
}

void termination_note_kill(struct supervisor *supervisor, const char *why)
{
	struct termination_record *record = &supervisor->termination;
	if (record->killed)
		return; /* the first kill took what was left */
	replace(&record->killed, why);
	free(record->killed_tasks);
	record->killed_tasks = tasks_with_processes(supervisor);
}

void termination_note_corral_failure(struct supervisor *supervisor, const char *what)
{
	replace(&supervisor->termination.corral_error, what);
}

/* The failures on_failure: ignore left dead, "g/a, g/b". */
static char *ignored_failures(const struct supervisor *supervisor)
{
	char names[1024] = "";
	size_t length = 0;
	for (size_t g = 0; g < supervisor->group_count; g++) {
		const struct group *group = supervisor->groups[g];
		for (size_t t = 0; t < group->task_count; t++) {
			if (!group->tasks[t]->failure_ignored)
				continue;
			int written =
			    snprintf(names + length, sizeof(names) - length, "%s%s",
				     length ? ", " : "", group->tasks[t]->config->full_name);
			if (written > 0)
				length = strnlen(names, sizeof(names) - 1);
		}
	}
	return xstrdup(names);
}

static enum termination_cause cause_of(const struct supervisor *supervisor)
{
	if (supervisor->termination.corral_error)
		return TERMINATION_CORRAL_FAILED;
	if (supervisor->have_failure)
		return TERMINATION_TASK_FAILED;
	if (supervisor->shutting_down)
		return TERMINATION_SHUTDOWN;
	return TERMINATION_COMPLETED;
}

/* One-command mode: the command's end, failed or not. */
static void facts_of_command(const struct supervisor *supervisor, struct termination_facts *facts)
{
	const struct task *command = supervisor->groups[0]->tasks[0];
	facts->task = command->config->argv[0];
	facts->has_exit = command->runner.has_exited;
	facts->exit = command->runner.last_exit;
	facts->failure = runner_failure(&command->runner);
}

void termination_write(struct supervisor *supervisor)
{
	struct termination_record *record = &supervisor->termination;
	if (record->log.fd < 0)
		return;
	char *ignored = ignored_failures(supervisor);
	struct termination_facts facts = {
	    .cause = cause_of(supervisor),
	    .exit_code = supervisor->exit_code,
	    .one_command = supervisor->one_command != NULL,
	    .task = record->task,
	    .has_exit = record->has_exit,
	    .exit = record->exit,
	    .failure = record->failure,
	    .rule = record->rule,
	    .decision = record->decision,
	    .group = record->group,
	    .on_failure = record->on_failure,
	    .group_decision = record->group_decision,
	    .shutdown = record->shutdown,
	    .killed = record->killed,
	    .killed_tasks = record->killed_tasks,
	    .ignored = ignored,
	    .corral_error = record->corral_error,
	    .lines = record->lines,
	    .lines_length = record->lines_length,
	};
	if (facts.one_command && supervisor->group_count && supervisor->groups[0]->task_count)
		facts_of_command(supervisor, &facts);
	/* A task may have written a message of its own, as a program alone
	 * in its container would: kept, after corral's head. */
	char task_message[TERMINATION_MESSAGE_MAX];
	facts.task_message = task_message;
	facts.task_message_length =
	    termination_log_read(&record->log, task_message, sizeof(task_message));
	char message[TERMINATION_MESSAGE_MAX], error[512];
	size_t length = termination_message_compose(&facts, message);
	if (termination_log_write(&record->log, message, length, error, sizeof(error)) < 0)
		log_message("%s", error);
	free(ignored);
}

void termination_close(struct supervisor *supervisor)
{
	struct termination_record *record = &supervisor->termination;
	termination_log_close(&record->log);
	free(record->task);
	free(record->group);
	free(record->failure);
	free(record->decision);
	free(record->group_decision);
	free(record->lines);
	free(record->shutdown);
	free(record->killed);
	free(record->killed_tasks);
	free(record->corral_error);
	*record = (struct termination_record){.log = {.fd = -1}};
}
