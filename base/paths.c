#include "base/paths.h"

#include <string.h>

bool path_has_parent_component(const char *path)
{
	for (const char *part = path; *part; part += strcspn(part, "/")) {
		part += strspn(part, "/");
		if (strncmp(part, "..", 2) == 0 && (part[2] == '/' || part[2] == '\0'))
			return true;
	}
	return false;
}
