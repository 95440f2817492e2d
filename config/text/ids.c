#include "config/text/ids.h"

#include <stdio.h>
#include <string.h>

enum id_text id_text_read(const char *text, size_t length, uint32_t *id)
{
	uint64_t value = 0;
	if (length == 0)
		return ID_TEXT_NAME;
	for (size_t i = 0; i < length; i++)
		if (text[i] < '0' || text[i] > '9')
			return ID_TEXT_NAME;
	for (size_t i = 0; i < length; i++) {
		value = value * 10 + (uint64_t)(text[i] - '0');
		/* Checked at each digit: 30 digits would wrap 64 bits. */
		if (value > ID_MAX)
			return ID_TEXT_OUT_OF_RANGE;
	}
	*id = (uint32_t)value;
	return ID_TEXT_NUMBER;
}

int id_spec_check(const char *spec, char *error, size_t error_size)
{
	size_t user_length = strcspn(spec, ":");
	const char *group = spec[user_length] == ':' ? spec + user_length + 1 : NULL;
	uint32_t id;
	if (id_text_read(spec, user_length, &id) == ID_TEXT_OUT_OF_RANGE) {
		snprintf(error, error_size,
			 "uid %.*s is out of range: a uid is a whole number from 0 to %u",
			 (int)user_length, spec, ID_MAX);
		return -1;
	}
	if (group && id_text_read(group, strlen(group), &id) == ID_TEXT_OUT_OF_RANGE) {
		snprintf(error, error_size,
			 "gid %s is out of range: a gid is a whole number from 0 to %u", group,
			 ID_MAX);
		return -1;
	}
	return 0;
}
