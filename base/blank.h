/* Whether text is blank: only spaces, tabs, carriage returns and
 * newlines (a control request's line, a hook's answer, a config line). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline bool text_is_blank(const char *text, size_t length)
{
	for (size_t i = 0; i < length; i++)
		if (!memchr(" \t\r\n", text[i], 4))
			return false;
	return true;
}
