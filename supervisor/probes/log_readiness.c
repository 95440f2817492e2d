#include "supervisor/probes/log_readiness.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/xmalloc.h"
#include "supervisor/output/output_batch.h"
#include "supervisor/tasks/task.h"

/* How much of the matching line the ready event quotes. */
#define QUOTED_LINE_MAX 60

struct log_readiness *log_readiness_make(const struct readiness_config *config, char *error,
					 size_t error_size)
{
	struct log_readiness *log = xcalloc(1, sizeof(*log));
	char why[512];
	size_t offset;
	log->ready = line_pattern_compile(config->log_ready, &offset, why, sizeof(why));
	if (log->ready && config->log_not_ready)
		log->not_ready =
		    line_pattern_compile(config->log_not_ready, &offset, why, sizeof(why));
	if (!log->ready || (config->log_not_ready && !log->not_ready)) {
		snprintf(error, error_size, "readiness.log: %s", why);
		log_readiness_free(log);
		return NULL;
	}
	return log;
}

void log_readiness_free(struct log_readiness *log)
{
	if (!log)
		return;
	line_pattern_free(log->ready);
	line_pattern_free(log->not_ready);
	free(log);
}

static void take_lines(void *sink, struct output_batch *batch)
{
	struct task *task = sink;
	const struct log_readiness *log = task->readiness.probes->log;
	const char *cursor = batch->text, *line;
	size_t length;
	while ((line = output_batch_next_line(batch, &cursor, &length))) {
		bool ready = runner_is_ready_now(&task->runner);
		if (ready && !log->not_ready)
			return; /* nothing to hear until the next run */
		if (!line_pattern_matches(ready ? log->not_ready : log->ready, line, length))
			continue;
		char quoted[QUOTED_LINE_MAX + 16];
		snprintf(quoted, sizeof(quoted), "line \"%.*s%s\"",
			 (int)(length < QUOTED_LINE_MAX ? length : QUOTED_LINE_MAX), line,
			 length > QUOTED_LINE_MAX ? "..." : "");
		if (ready)
			runner_not_ready(&task->runner, quoted);
		else
			runner_ready(&task->runner, quoted);
	}
}

const struct output_sink_ops log_readiness_sink_ops = {.lines = take_lines};
