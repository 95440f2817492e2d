#include "cli/import/import_names.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

#define CONFIG_NAME_MAX 64

char *import_config_name(const char *name)
{
	char *out = xmalloc(CONFIG_NAME_MAX + 2);
	size_t length = 0;
	for (const char *p = name; *p && length < CONFIG_NAME_MAX; p++) {
		char c = (char)tolower((unsigned char)*p);
		bool kept = isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
		if (!length && !isalnum((unsigned char)c))
			continue;
		out[length++] = kept ? c : '-';
	}
	if (!length)
		out[length++] = 'x';
	out[length] = '\0';
	return out;
}

char *import_unique_group(const struct ytree_node *groups, const char *name)
{
	char *unique = xstrdup(name);
	for (unsigned n = 2; ytree_get(groups, unique); n++) {
		free(unique);
		unique = xasprintf("%.60s-%u", name, n);
	}
	return unique;
}

const char *import_env_name_problem(const char *name)
{
	if (!(isalpha((unsigned char)name[0]) || name[0] == '_'))
		return "a variable's name starts with a letter or _";
	for (const char *p = name; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return "a variable's name has letters, digits and _ only";
	return NULL;
}

size_t string_vector_length(char *const *vector)
{
	size_t length = 0;
	while (vector && vector[length])
		length++;
	return length;
}
