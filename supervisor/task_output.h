/* The output of one task: a pipe that lives as long as the task (every run
 * writes to the same one, both stdout and stderr), split into lines that go
 * to the output sink prefixed with the task's name. */
#pragma once

#include <stddef.h>

#include "supervisor/loop.h"
#include "supervisor/output_sink.h"

#define TASK_OUTPUT_LINE_MAX 4096

struct task_output {
	struct loop_watch watch; /* read end */
	int write_fd;            /* given to the task as fds 1 and 2 */
	const char *name;        /* "web/app" */
	struct output_sink *sink;
	struct loop *loop;
	/* Also called with every line (no newline), for the task's log ring. */
	void (*on_line)(void *context, const char *text, size_t length);
	void *on_line_context;
	size_t line_length;
	char line[TASK_OUTPUT_LINE_MAX];
};

int task_output_open(struct task_output *output, struct loop *loop, struct output_sink *sink,
		     const char *name, void (*on_line)(void *context, const char *text, size_t length),
		     void *on_line_context);

/* Reads what is in the pipe now and flushes a partial last line, so that
 * everything a run wrote is out before its exit is reported. */
void task_output_drain(struct task_output *output);

void task_output_close(struct task_output *output);
