#include "config/text/watch_path.h"

#include <fnmatch.h>
#include <string.h>

size_t watch_path_name_offset(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? (size_t)(slash - path) + 1 : 0;
}

bool watch_name_is_pattern(const char *name, size_t length)
{
	for (size_t i = 0; i < length; i++)
		if (name[i] == '*' || name[i] == '?' || name[i] == '[')
			return true;
	return false;
}

bool watch_name_matches(const char *pattern, bool is_pattern, const char *name)
{
	if (!is_pattern)
		return strcmp(pattern, name) == 0;
	return fnmatch(pattern, name, FNM_PERIOD) == 0;
}
