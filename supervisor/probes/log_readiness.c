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
	int failure = regcomp(&log->ready, config->log_ready, REG_EXTENDED | REG_NOSUB);
	if (!failure && config->log_not_ready) {
		failure = regcomp(&log->not_ready, config->log_not_ready, REG_EXTENDED | REG_NOSUB);
		if (failure)
			regfree(&log->ready);
		log->has_not_ready = !failure;
	}
	if (failure) {
		char why[128];
		regerror(failure, NULL, why, sizeof(why));
		snprintf(error, error_size, "readiness.log: %s", why);
		free(log);
		return NULL;
	}
	return log;
}

void log_readiness_free(struct log_readiness *log)
{
	if (!log)
		return;
	regfree(&log->ready);
	if (log->has_not_ready)
		regfree(&log->not_ready);
	free(log);
}

static bool line_matches(const regex_t *pattern, const char *line, size_t length)
{
	/* REG_STARTEND: the line as it lies in the batch, with no copy to
	 * end it in a NUL (glibc reads the bounds even with REG_NOSUB). */
	regmatch_t bounds = {.rm_so = 0, .rm_eo = (regoff_t)length};
	return regexec(pattern, line, 1, &bounds, REG_STARTEND) == 0;
}

static void take_lines(void *sink, struct output_batch *batch)
{
	struct task *task = sink;
	const struct log_readiness *log = task->readiness.probes->log;
	const char *cursor = batch->text, *line;
	size_t length;
	while ((line = output_batch_next_line(batch, &cursor, &length))) {
		bool ready = runner_is_ready_now(&task->runner);
		if (ready && !log->has_not_ready)
			return; /* nothing to hear until the next run */
		if (!line_matches(ready ? &log->not_ready : &log->ready, line, length))
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
