/* JSON strings from bytes that need not be UTF-8 (task output, paths).
 * jansson refuses invalid UTF-8, which would silently drop the text; here
 * each invalid byte becomes U+FFFD instead, as terminals show it. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

bool utf8_is_valid(const char *text, size_t length);

/* A new JSON string of `text`, invalid sequences replaced. */
json_t *json_string_lossy(const char *text, size_t length);
