/* A read-only view of one JSON text, for the status table: parsed in one
 * pass into a flat array of values, strings decoded in place, no hash
 * table and no allocation a value. jansson built 50,000 nodes and
 * their hash tables for the reply of 1000 tasks, which took five times
 * the time of the rest of `corral status` (docs/benchmarks.md); a table
 * needs to look up a few keys of small objects, in order.
 *
 * The accessors take NULL (a key that is not there) and a value of
 * another kind as jansson's do: NULL, 0 or false. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_view_kind {
	JSON_VIEW_NULL,
	JSON_VIEW_FALSE,
	JSON_VIEW_TRUE,
	JSON_VIEW_INTEGER,
	JSON_VIEW_REAL,
	JSON_VIEW_STRING,
	JSON_VIEW_ARRAY,
	JSON_VIEW_OBJECT,
};

/* One value. An array's or object's values follow it in the array, each
 * with all it holds: the next one is `span` values on. */
struct jv {
	uint8_t kind;
	uint32_t span;   /* values from this one to the next of its level */
	uint32_t count;  /* elements or members */
	const char *key; /* as a member of an object; NULL otherwise */
	union {
		const char *string; /* decoded, NUL-terminated */
		int64_t integer;
		double real;
	};
};

struct json_view {
	struct jv *values; /* values[0]: the whole text's */
	size_t count, capacity;
	char *text; /* the caller's, which strings point into */
};

/* Parses `text`, of `length` bytes followed by a NUL, in place: its
 * strings are decoded where they are, so it must outlive the view and is
 * changed. 0 with `view` filled, or -1 with what is wrong and where in
 * `error`. */
int json_view_parse(struct json_view *view, char *text, size_t length, char *error,
		    size_t error_size);
void json_view_free(struct json_view *view);

/* The member `key` of an object; NULL when it has none, or is no object. */
const struct jv *jv_get(const struct jv *object, const char *key);

static inline bool jv_is(const struct jv *value, enum json_view_kind kind)
{
	return value && value->kind == kind;
}
#define jv_is_null(v)    jv_is(v, JSON_VIEW_NULL)
#define jv_is_true(v)    jv_is(v, JSON_VIEW_TRUE)
#define jv_is_integer(v) jv_is(v, JSON_VIEW_INTEGER)
#define jv_is_string(v)  jv_is(v, JSON_VIEW_STRING)
#define jv_is_array(v)   jv_is(v, JSON_VIEW_ARRAY)
#define jv_is_object(v)  jv_is(v, JSON_VIEW_OBJECT)
#define jv_is_boolean(v) (jv_is(v, JSON_VIEW_TRUE) || jv_is(v, JSON_VIEW_FALSE))
#define jv_is_number(v)  (jv_is(v, JSON_VIEW_INTEGER) || jv_is(v, JSON_VIEW_REAL))

static inline const char *jv_string(const struct jv *value)
{
	return jv_is_string(value) ? value->string : NULL;
}

static inline int64_t jv_integer(const struct jv *value)
{
	return jv_is_integer(value) ? value->integer : 0;
}

static inline double jv_number(const struct jv *value)
{
	return jv_is_integer(value)           ? (double)value->integer
	       : jv_is(value, JSON_VIEW_REAL) ? value->real
					      : 0.0;
}

static inline size_t jv_array_size(const struct jv *value)
{
	return jv_is_array(value) ? value->count : 0;
}

/* Each element of `array` in turn (none when it is no array). */
#define jv_array_foreach(array, index, value)                                                      \
	for ((index) = 0, (value) = jv_is_array(array) ? (array) + 1 : NULL;                       \
	     (index) < jv_array_size(array); (index)++, (value) += (value)->span)
