/* libFuzzer target: any bytes as a status reply give the status table's
 * JSON view or an error, never a crash, a leak or a read past the input;
 * every value of a view lies within it, as the walks of the table go. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json_view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walks `value` as the table does: every member or element, in turn. */
static size_t walk(const struct jv *value, const struct jv *end)
{
	if (value >= end || value->span == 0 || value + value->span > end)
		abort();
	if (value->kind != JSON_VIEW_ARRAY && value->kind != JSON_VIEW_OBJECT)
		return 1;
	const struct jv *child = value + 1;
	for (uint32_t i = 0; i < value->count; i++) {
		if (value->kind == JSON_VIEW_OBJECT &&
		    (!child->key || jv_get(value, child->key) == NULL))
			abort();
		child += walk(child, value + value->span);
	}
	if (child != value + value->span)
		abort();
	return value->span;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct json_view view;
	char error[128];
	if (json_view_parse(&view, text, size, error, sizeof(error)) == 0) {
		walk(view.values, view.values + view.count);
		json_view_free(&view);
	} else if (!strstr(error, "at byte")) {
		abort();
	}
	free(text);
	return 0;
}
