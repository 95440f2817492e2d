/* readiness.log patterns compiled and matched by TRE (line_pattern.h says
 * why TRE). TRE's own header, not <regex.h>: its regex_t is its own. */
#include "config/text/line_pattern.h"

#include <stdio.h>
#include <stdlib.h>
#include <tre/tre.h>

#include "base/xmalloc.h"

struct line_pattern {
	regex_t compiled;
};

struct line_pattern *line_pattern_compile(const char *text, size_t *offset, char *error,
					  size_t error_size)
{
	if (line_pattern_check_cost(text, offset, error, error_size) < 0)
		return NULL;
	struct line_pattern *pattern = xcalloc(1, sizeof(*pattern));
	int failure = tre_regcomp(&pattern->compiled, text, REG_EXTENDED | REG_NOSUB);
	if (failure) {
		char why[128];
		tre_regerror(failure, &pattern->compiled, why, sizeof(why));
		snprintf(error, error_size, "not an extended regular expression: %s", why);
		*offset = 0;
		free(pattern);
		return NULL;
	}
	/* The walk before refuses \1..\9; this is TRE's own word that the
	 * parallel matcher, linear in the line, is the one it will use. */
	if (tre_have_backrefs(&pattern->compiled)) {
		snprintf(error, error_size, "holds a back-reference, which corral refuses");
		*offset = 0;
		line_pattern_free(pattern);
		return NULL;
	}
	return pattern;
}

void line_pattern_free(struct line_pattern *pattern)
{
	if (!pattern)
		return;
	tre_regfree(&pattern->compiled);
	free(pattern);
}

bool line_pattern_matches(const struct line_pattern *pattern, const char *line, size_t length)
{
	/* tre_regnexec takes the length: the line as it lies in the batch,
	 * without a copy to end it in a NUL. */
	return tre_regnexec(&pattern->compiled, line, length, 0, NULL, 0) == REG_OK;
}
