#include "base/names.h"

#include <stdbool.h>

const char *name_problem(const char *name, size_t length)
{
	if (length == 0)
		return "is empty";
	if (length > NAME_MAX_LENGTH)
		return "is longer than 64 characters";
	for (size_t i = 0; i < length; i++) {
		char c = name[i];
		bool alphanumeric = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alphanumeric && (i == 0 || (c != '-' && c != '_' && c != '.')))
			return "may only use lowercase letters, digits, '-', '_' and '.', "
			       "starting with a letter or digit";
	}
	return NULL;
}
