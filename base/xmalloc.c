#include "base/xmalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void __attribute__((noreturn)) out_of_memory(void)
{
	fputs("corral: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t size)
{
	void *pointer = malloc(size ? size : 1);

	if (!pointer)
		out_of_memory();
	return pointer;
}

void *xcalloc(size_t count, size_t size)
{
	void *pointer = calloc(count ? count : 1, size ? size : 1);

	if (!pointer)
		out_of_memory();
	return pointer;
}

void *xreallocarray(void *pointer, size_t count, size_t size)
{
	void *resized = reallocarray(pointer, count ? count : 1, size ? size : 1);

	if (!resized)
		out_of_memory();
	return resized;
}

char *xstrdup(const char *text)
{
	return xstrndup(text, strlen(text));
}

char *xstrndup(const char *text, size_t length)
{
	char *copy;

	length = strnlen(text, length);
	copy = xmalloc(length + 1);

	memcpy(copy, text, length);
	copy[length] = '\0';
	return copy;
}

char *xasprintf(const char *format, ...)
{
	va_list arguments;
	char *text;

	va_start(arguments, format);
	text = xvasprintf(format, arguments);
	va_end(arguments);
	return text;
}

char *xvasprintf(const char *format, va_list arguments)
{
	char *text;

	if (vasprintf(&text, format, arguments) < 0)
		out_of_memory();
	return text;
}

char **string_vector_copy(char *const *vector)
{
	if (!vector)
		return NULL;
	size_t count = 0;
	while (vector[count])
		count++;
	char **copy = xcalloc(count + 1, sizeof(*copy));
	for (size_t i = 0; i < count; i++)
		copy[i] = xstrdup(vector[i]);
	return copy;
}

void string_vector_free(char **vector)
{
	if (!vector)
		return;
	for (char **item = vector; *item; item++)
		free(*item);
	free(vector);
}
