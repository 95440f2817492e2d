#include "base/text_append.h"

#include <stdarg.h>
#include <stdio.h>

void text_append(char *buffer, size_t size, size_t *used, const char *format, ...)
{
	if (*used + 1 >= size)
		return;
	va_list arguments;
	va_start(arguments, format);
	int written = vsnprintf(buffer + *used, size - *used, format, arguments);
	va_end(arguments);
	if (written > 0)
		*used += (size_t)written < size - *used ? (size_t)written : size - *used - 1;
}
