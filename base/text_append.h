/* Writing a line piece by piece into a fixed buffer: each piece after the
 * last, the text cut (and NUL-terminated) once the buffer is full. */
#pragma once

#include <stddef.h>

/* printf at buffer + *used, then *used at the end of what was written;
 * it never passes size - 1, and nothing is written once it is there. */
void text_append(char *buffer, size_t size, size_t *used, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
