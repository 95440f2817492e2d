/* The output pane's ring of lines. */
#include "cli/top/top_pane.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

void top_pane_close(struct top_pane *pane)
{
	for (size_t i = 0; i < pane->count; i++)
		free(pane->lines[(pane->first + i) % TOP_PANE_LINES]);
	free(pane->target);
	free(pane->ended);
	*pane = (struct top_pane){0};
}

void top_pane_open(struct top_pane *pane, const char *target)
{
	top_pane_close(pane);
	pane->target = xstrdup(target);
}

static char *expand_tabs(const char *text, size_t length)
{
	size_t tabs = 0;
	for (size_t i = 0; i < length; i++)
		tabs += text[i] == '\t';
	char *line = xmalloc(length + tabs * 7 + 1);
	size_t out = 0;
	for (size_t i = 0; i < length; i++) {
		if (text[i] != '\t') {
			line[out++] = text[i] ? text[i] : '?';
			continue;
		}
		do
			line[out++] = ' ';
		while (out % 8);
	}
	line[out] = '\0';
	return line;
}

void top_pane_add(struct top_pane *pane, const char *text, size_t length)
{
	char *line = expand_tabs(text, length);
	if (pane->count == TOP_PANE_LINES) {
		free(pane->lines[pane->first]);
		pane->lines[pane->first] = line;
		pane->first = (pane->first + 1) % TOP_PANE_LINES;
		return;
	}
	pane->lines[(pane->first + pane->count++) % TOP_PANE_LINES] = line;
}

const char *top_pane_line(const struct top_pane *pane, size_t index)
{
	return index < pane->count ? pane->lines[(pane->first + index) % TOP_PANE_LINES] : NULL;
}

void top_pane_set_ended(struct top_pane *pane, const char *why)
{
	free(pane->ended);
	pane->ended = why ? xstrdup(why) : NULL;
}
