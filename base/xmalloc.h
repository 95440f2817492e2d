/* Allocation that cannot fail: running out of memory while loading a config
 * file is not something the loader can recover from meaningfully, and
 * checking every strdup() would bury the validation logic. */
#pragma once

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xreallocarray(void *pointer, size_t count, size_t size);
char *xstrdup(const char *text);

/* NULL-terminated arrays of strings, as argv and env are. Both take NULL. */
char **string_vector_copy(char *const *vector);
void string_vector_free(char **vector);
/* Like strndup(): at most `length` bytes, up to the first NUL. */
char *xstrndup(const char *text, size_t length);
char *xasprintf(const char *format, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *format, va_list arguments) __attribute__((format(printf, 1, 0)));
